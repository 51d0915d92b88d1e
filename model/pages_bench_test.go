package model_test

import (
	"slices"
	"testing"
	"time"

	"github.com/splash-inference/splash/metal"
	"github.com/splash-inference/splash/metal/cpu"
	"github.com/splash-inference/splash/model"
)

// BenchmarkHugePages0_6BQ4 builds the 0.6B-shaped q4 model twice, its
// packed weights in ordinary pages (cpu.Options.SmallPages) and in huge
// pages, and times a decode pass and a k=4 verify pass of each at a
// context of 256, the two models taking turns (which goes first
// alternates) so that both see the same load from other processes. It
// reports each pass's median milliseconds and the ordinary-page median
// over the huge-page one (small/huge: how many times as fast huge pages
// make it). Medians, because a shared machine's slow outliers fall on
// either model at random and swamp a mean.
func BenchmarkHugePages0_6BQ4(b *testing.B) {
	src := openBenchPackage(b, metal.Q4)
	defer src.Close()
	names := []string{"small", "huge"}
	var models [2]model.Model
	var caches [2]*metal.KVCache
	blocks := identityBlocks(32)
	for v, small := range []bool{true, false} {
		be := cpu.NewWithOptions(cpu.Options{SmallPages: small})
		defer be.Close()
		m, err := src.Build(be)
		if err != nil {
			b.Fatal(err)
		}
		models[v], caches[v] = m, m.NewKVCache(32, 16)
		if _, err := m.Forward(&model.Batch{Rows: []model.Row{{Tokens: benchPrompt(256), Blocks: blocks, Logits: 1}}}, caches[v]); err != nil {
			b.Fatal(err)
		}
	}
	ks := []int{0, 4}
	var times [2][2][]time.Duration // [model][k]
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for j := range 2 {
			v := j ^ i&1
			for ki, k := range ks {
				start := time.Now()
				if _, err := models[v].Forward(&model.Batch{Rows: []model.Row{{Start: 256, Tokens: make([]int32, k+1), Blocks: blocks, Logits: k + 1}}}, caches[v]); err != nil {
					b.Fatal(err)
				}
				times[v][ki] = append(times[v][ki], time.Since(start))
			}
		}
	}
	median := func(d []time.Duration) float64 {
		d = slices.Clone(d)
		slices.Sort(d)
		return d[len(d)/2].Seconds()
	}
	for ki, k := range ks {
		for v, name := range names {
			b.ReportMetric(median(times[v][ki])*1e3, name+"-k"+string(rune('0'+k))+"-ms")
		}
		b.ReportMetric(median(times[0][ki])/median(times[1][ki]), "k"+string(rune('0'+k))+"-small/huge")
	}
}
