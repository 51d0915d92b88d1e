package model_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/splash-inference/splash/metal"
	"github.com/splash-inference/splash/metal/cpu"
	"github.com/splash-inference/splash/model"
)

// BenchmarkHugePages0_6BQ4 builds the 0.6B-shaped q4 model twice, its
// packed weights in ordinary pages (cpu.Options.SmallPages) and in huge
// pages, and times passes of each, the two models taking turns
// (which goes first alternates) so that both see the same load from other
// processes: at a context of 256 a decode pass and a k=4 verify pass, at
// 4096 (random cached keys and values, as BenchmarkDecodeLong0_6BQ4) a
// decode pass. It reports each pass's median milliseconds and the
// ordinary-page median over the huge-page one (small/huge: how many times
// as fast huge pages make it). Medians, because a shared machine's slow
// outliers fall on either model at random and swamp a mean.
//
// On two Zen 5 cores when the weight arena was written: a decode pass
// 1.07–1.30× as fast in huge pages and a k=4 verify pass 1.03–1.12× in 15
// of 20 runs, 0.88–0.94× and 0.94–0.97× in the other five (one stretch of
// time on a shared machine); at a context of 4096 a decode pass 1.04–1.05×.
// The KV cache in huge pages gained attention nothing (0.98–1.06× at 1024
// and 4096).
func BenchmarkHugePages0_6BQ4(b *testing.B) {
	src := openBenchPackage(b, metal.Q4)
	defer src.Close()
	var models [2]model.Model
	for v, small := range []bool{true, false} {
		be := cpu.NewWithOptions(cpu.Options{SmallPages: small})
		defer be.Close()
		m, err := src.Build(be)
		if err != nil {
			b.Fatal(err)
		}
		models[v] = m
	}
	for _, c := range []struct{ ctx, k int }{{256, 0}, {256, 4}, {4096, 0}} {
		b.Run(fmt.Sprintf("ctx=%d/k=%d", c.ctx, c.k), func(b *testing.B) {
			const bs = benchBlockSize
			blocks := identityBlocks(c.ctx/bs + 1)
			var caches [2]*metal.KVCache
			for v, m := range models {
				caches[v] = m.NewKVCache(len(blocks), bs, metal.KVF16)
			}
			fillKV(caches[0], rand.New(rand.NewPCG(4, uint64(c.ctx))))
			for l := range caches[0].Layers {
				copy(caches[1].Layers[l].K, caches[0].Layers[l].K)
				copy(caches[1].Layers[l].V, caches[0].Layers[l].V)
			}
			var times [2][]time.Duration
			row := model.Row{Start: c.ctx - 1 - c.k, Tokens: make([]int32, c.k+1), Blocks: blocks, Logits: c.k + 1}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				for j := range 2 {
					v := j ^ i&1
					start := time.Now()
					if _, err := models[v].Forward(&model.Batch{Rows: []model.Row{row}}, caches[v]); err != nil {
						b.Fatal(err)
					}
					times[v] = append(times[v], time.Since(start))
				}
			}
			small, huge := median(times[0]), median(times[1])
			b.ReportMetric(small*1e3, "small-ms")
			b.ReportMetric(huge*1e3, "huge-ms")
			b.ReportMetric(small/huge, "small/huge")
		})
	}
}

// fillKV sets every cached key and value to a random float16 (or the
// cache type's own: bfloat16, float32; each
// layer's own: a layer's K and V may be windows onto memory it shares with
// the other layers, metal.KVLayer).
func fillKV(c *metal.KVCache, rng *rand.Rand) {
	for _, l := range c.Layers {
		n := l.HeadElems() // a q8 cache's int8 pairs too: any bits are values, and its scales are finite
		for b := range l.NumBlocks {
			for h := range l.KVHeads {
				i := l.BlockIndex(int32(b), h)
				for _, s := range [][]uint16{l.K[i : i+n], l.V[i : i+n]} {
					if l.Type == metal.KVF32 {
						f := metal.Float32s(s)
						for j := range f {
							f[j] = float32(rng.NormFloat64())
						}
						continue
					}
					for j := range s {
						if l.Type == metal.KVBF16 {
							s[j] = metal.F32ToBF16DAZ(float32(rng.NormFloat64()))
						} else {
							s[j] = metal.F32ToF16(float32(rng.NormFloat64()))
						}
					}
				}
			}
		}
	}
}

// median is the median of d in seconds.
func median(d []time.Duration) float64 {
	d = slices.Clone(d)
	slices.Sort(d)
	return d[len(d)/2].Seconds()
}
