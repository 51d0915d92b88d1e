package cpu

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/splash-inference/splash/metal"
)

// BenchmarkAttention is the attention of one sequence's last tokens in
// every layer of a Qwen3-0.6B-shaped model (28 layers, 16 query heads, 8
// KV heads of 128) at a context of ctx positions, on GOMAXPROCS threads:
// one token (a decode step), five (a verify row of k=4) or sixteen (a
// run of a prefill chunk). The layers' caches together exceed the
// last-level cache, as in a real step; KVGB/s is the cached keys and
// values read per second.
func BenchmarkAttention(b *testing.B) {
	const layers, heads, kvHeads, hd, bs = 28, 16, 8, 128, 16
	for _, c := range []struct{ tokens, ctx int }{{1, 256}, {1, 1024}, {1, 4096}, {5, 256}, {5, 1024}, {16, 1024}} {
		tokens, ctx := c.tokens, c.ctx
		b.Run(fmt.Sprintf("tokens=%d/ctx=%d", tokens, ctx), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(12, 12))
			be := New(0)
			defer be.Close()
			nb := ctx / bs
			cache := metal.NewKVCache(layers, nb, bs, kvHeads, hd)
			for l := range cache.Layers {
				copy(cache.Layers[l].K, randF16(rng, len(cache.Layers[l].K)))
				copy(cache.Layers[l].V, randF16(rng, len(cache.Layers[l].V)))
			}
			rows := make([]metal.AttnRow, tokens)
			table := identityTable(nb)
			for i := range rows {
				rows[i] = metal.AttnRow{Pos: int32(ctx - tokens + i), Blocks: table}
			}
			q, out := randVec(rng, tokens*heads*hd), make([]float32, tokens*heads*hd)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				for l := range cache.Layers {
					be.Attention(out, q, &cache.Layers[l], rows, heads, kvHeads, hd)
				}
			}
			kvBytes := float64(layers * ctx * 2 * kvHeads * hd * 2)
			b.ReportMetric(kvBytes*float64(b.N)/b.Elapsed().Seconds()/1e9, "KVGB/s")
		})
	}
}
