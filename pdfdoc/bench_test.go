package pdfdoc

import (
	"fmt"
	"strings"
	"testing"

	"github.com/splash-inference/splash/pdfdoc/pdftest"
)

// BenchmarkExtract reads a 40-page document of about 2,900 characters a
// page (a dense page of prose), reporting pages/s. On the shared 2-core
// x86 machine it was written on: 200-250 pages/s, compressed streams or
// not (a deadline's interruptibility, WithCloseOnContextDone, costs up to
// 1.3× within the noise there).
//
//	go test ./pdfdoc -run '^$' -bench Extract -benchtime 20x
func BenchmarkExtract(b *testing.B) {
	pages := make([]string, 40)
	for i := range pages {
		var s strings.Builder
		for l := range 45 {
			fmt.Fprintf(&s, "Page %d, line %d: the quick brown fox jumps over the lazy dog.\n", i+1, l+1)
		}
		pages[i] = s.String()
	}
	for _, compress := range []bool{false, true} {
		pdf := pdftest.Doc{Pages: pages, Compress: compress}.Build()
		b.Run(fmt.Sprintf("compressed=%v", compress), func(b *testing.B) {
			x := New(Options{CacheBytes: -1}) // every read a real one
			defer x.Close()
			if err := x.Start(); err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(pdf)))
			for b.Loop() {
				if _, err := x.Extract(b.Context(), pdf); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(pages)*b.N)/b.Elapsed().Seconds(), "pages/s")
		})
	}
}

// BenchmarkStart starts an extractor and reads one page: with the
// compiled module in the disk cache (every start after a machine's first),
// and compiling it in memory (the first start). Measured there: 0.2-0.9 s
// from the cache, 7-15 s compiling.
//
//	go test ./pdfdoc -run '^$' -bench Start -benchtime 1x
func BenchmarkStart(b *testing.B) {
	pdf := pdftest.Pages("One page of text to read.")
	for _, tc := range []struct{ name, dir string }{{"disk-cache", ""}, {"no-cache", "off"}} {
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				x := New(Options{CacheDir: tc.dir})
				if _, err := x.Extract(b.Context(), pdf); err != nil {
					b.Fatal(err)
				}
				x.Close()
			}
		})
	}
}
