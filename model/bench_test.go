package model_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/splash-inference/splash/metal"
	"github.com/splash-inference/splash/metal/cpu"
	"github.com/splash-inference/splash/model"
	"github.com/splash-inference/splash/model/testmodel"
)

// openBenchModel loads a random Qwen3-0.6B-shaped package (built once into
// the temp directory, ~20 s, then cached).
func openBenchModel(b *testing.B, quant metal.DType, threads int) (model.Model, func()) {
	b.Helper()
	dir, err := testmodel.Package(os.TempDir(), testmodel.Qwen3_0_6B(), quant)
	if err != nil {
		b.Fatal(err)
	}
	src, err := model.Open(dir, model.OpenOptions{SkipChecksums: true})
	if err != nil {
		b.Fatal(err)
	}
	be := cpu.New(threads)
	m, err := src.Build(be)
	if err != nil {
		b.Fatal(err)
	}
	return m, func() { be.Close(); src.Close() }
}

// identityBlocks is a block table 0, 1, ..., n-1.
func identityBlocks(n int) []int32 {
	blocks := make([]int32, n)
	for i := range blocks {
		blocks[i] = int32(i)
	}
	return blocks
}

// benchPrompt is n distinct ordinary token ids.
func benchPrompt(n int) []int32 {
	p := make([]int32, n)
	for i := range p {
		p[i] = int32(1000 + i)
	}
	return p
}

// BenchmarkDecode0_6BQ4 measures single-stream decode: one token per
// forward pass at a context of about 128 tokens.
func BenchmarkDecode0_6BQ4(b *testing.B) {
	m, done := openBenchModel(b, metal.Q4, 0)
	defer done()
	kv := m.NewKVCache(64, 16)
	blocks, prompt := identityBlocks(64), benchPrompt(128)
	if _, err := m.Forward(&model.Batch{Rows: []model.Row{{Tokens: prompt, Blocks: blocks, Logits: 1}}}, kv); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		pos := 128 + i%512
		if _, err := m.Forward(&model.Batch{Rows: []model.Row{{Start: pos, Tokens: []int32{42}, Blocks: blocks, Logits: 1}}}, kv); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "tokens/s")
}

// BenchmarkPrefill0_6BQ4 measures prefill of a 256-token prompt chunk.
func BenchmarkPrefill0_6BQ4(b *testing.B) {
	m, done := openBenchModel(b, metal.Q4, 0)
	defer done()
	kv := m.NewKVCache(16, 16)
	blocks, prompt := identityBlocks(16), benchPrompt(256)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := m.Forward(&model.Batch{Rows: []model.Row{{Tokens: prompt, Blocks: blocks, Logits: 1}}}, kv); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*len(prompt))/b.Elapsed().Seconds(), "tokens/s")
}

// BenchmarkVerifyRow0_6BQ4 measures one forward pass over a verify row of
// k+1 tokens at a context of about 256, to compare with the one-token
// decode pass (k=0): speculation pays off when k+1 tokens cost little more
// than one.
func BenchmarkVerifyRow0_6BQ4(b *testing.B) {
	m, done := openBenchModel(b, metal.Q4, 0)
	defer done()
	kv := m.NewKVCache(32, 16)
	blocks, prompt := identityBlocks(32), benchPrompt(256)
	if _, err := m.Forward(&model.Batch{Rows: []model.Row{{Tokens: prompt, Blocks: blocks, Logits: 1}}}, kv); err != nil {
		b.Fatal(err)
	}
	for _, k := range []int{0, 1, 4, 8} {
		b.Run(fmt.Sprintf("k=%d", k), func(b *testing.B) {
			row := make([]int32, k+1)
			for i := 0; i < b.N; i++ {
				if _, err := m.Forward(&model.Batch{Rows: []model.Row{{Start: 256, Tokens: row, Blocks: blocks, Logits: k + 1}}}, kv); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
