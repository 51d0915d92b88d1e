package kvcache

import (
	"testing"

	"github.com/splash-inference/splash/metal"
)

// BenchmarkPrefixMatch8K looks up a fully cached 8K-token prompt: every
// position but the last hits, the last block by a copy.
func BenchmarkPrefixMatch8K(b *testing.B) {
	const n = 8192
	m := newManager(b, n/16+8, 16)
	toks := seq(n, 0)
	var owner Blocks
	prefill(b, m, &owner, toks)
	b.Run("Lookup", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if m.Lookup(toks) != n-1 {
				b.Fatal("miss")
			}
		}
	})
	b.Run("ReuseFree", func(b *testing.B) {
		var x Blocks
		var copies []metal.BlockCopy
		b.ReportAllocs()
		for b.Loop() {
			if hit, _ := m.Reuse(&x, toks); hit != n-1 {
				b.Fatal("miss")
			}
			m.Free(&x)
			copies = m.TakeCopies(copies[:0])
		}
	})
	m.Free(&owner)
	if err := m.CheckLeaks(); err != nil {
		b.Fatal(err)
	}
}
