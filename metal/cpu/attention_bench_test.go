package cpu

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/splash-inference/splash/metal"
)

// BenchmarkAttention is the attention of one sequence's last tokens in
// every layer of a Qwen3-0.6B-shaped model (28 layers, 16 query heads, 8
// KV heads of 128) at a context of ctx positions, on GOMAXPROCS threads:
// one token (a decode step), five (a verify row of k=4; at a context of
// 261, one that starts a block) or sixteen (a run of a prefill chunk); or
// of a batch of decode rows, seqs sequences of one token each, every one
// at that context in blocks of its own (cases named shared=N: the first N
// positions in the first sequence's blocks, as the prefix cache hands a
// fleet of agents one system prompt). The layers' caches together
// exceed the last-level cache, as in a real step; KVGB/s is the cached
// keys and values read per second (their bytes in a float16 cache,
// whatever the type, so that the types compare as speeds). Cases named q8
// (bf16, f32) read a KVQ8 (KVBF16, KVF32) cache. The cache is in 32-token blocks, the server's default
// (--kv-block-size), except for cases named bs=16: a KV head's keys or
// values are contiguous for one block only, so the size changes how fast
// they stream.
func BenchmarkAttention(b *testing.B) {
	const layers, heads, kvHeads, hd = 28, 16, 8, 128
	cases := []struct {
		typ               metal.KVType
		seqs, tokens, ctx int
		bs                int
		shared            int // leading positions all the sequences' tables share
	}{
		{metal.KVF16, 1, 1, 256, 32, 0}, {metal.KVF16, 1, 1, 1024, 32, 0}, {metal.KVF16, 1, 1, 4096, 32, 0}, {metal.KVF16, 1, 5, 256, 32, 0},
		{metal.KVF16, 1, 5, 261, 32, 0}, {metal.KVF16, 1, 5, 1024, 32, 0}, {metal.KVF16, 1, 5, 4096, 32, 0}, {metal.KVF16, 1, 16, 1024, 32, 0},
		{metal.KVF16, 16, 1, 128, 32, 0}, {metal.KVF16, 16, 1, 512, 32, 0}, {metal.KVF16, 4, 1, 1024, 32, 0},
		{metal.KVQ8, 1, 1, 256, 32, 0}, {metal.KVQ8, 1, 1, 4096, 32, 0}, {metal.KVQ8, 1, 5, 256, 32, 0}, {metal.KVQ8, 1, 16, 1024, 32, 0},
		{metal.KVQ8, 16, 1, 512, 32, 0},
		{metal.KVF16, 1, 1, 1024, 16, 0}, {metal.KVF16, 1, 5, 256, 16, 0}, {metal.KVQ8, 1, 1, 4096, 16, 0},
		{metal.KVBF16, 1, 1, 256, 32, 0}, {metal.KVBF16, 1, 1, 4096, 32, 0}, {metal.KVBF16, 1, 5, 256, 32, 0}, {metal.KVBF16, 1, 5, 1024, 32, 0},
		{metal.KVBF16, 1, 5, 4096, 32, 0}, {metal.KVBF16, 1, 16, 1024, 32, 0}, {metal.KVBF16, 1, 16, 4096, 32, 0}, {metal.KVBF16, 16, 1, 512, 32, 0},
		{metal.KVF16, 16, 1, 1024, 32, 768}, {metal.KVBF16, 16, 1, 1024, 32, 768},
		{metal.KVF32, 1, 1, 1024, 32, 0}, {metal.KVF32, 1, 1, 4096, 32, 0}, {metal.KVF32, 1, 5, 1024, 32, 0}, {metal.KVF32, 1, 16, 1024, 32, 0},
		{metal.KVF32, 16, 1, 1024, 32, 768},
	}
	for _, c := range cases {
		seqs, tokens, ctx, bs := c.seqs, c.tokens, c.ctx, c.bs
		name := fmt.Sprintf("tokens=%d/ctx=%d", tokens, ctx)
		if seqs > 1 {
			name = fmt.Sprintf("seqs=%d/", seqs) + name
		}
		if c.typ != metal.KVF16 {
			name = c.typ.String() + "/" + name
		}
		if bs != 32 {
			name = fmt.Sprintf("bs=%d/", bs) + name
		}
		if c.shared > 0 {
			name = fmt.Sprintf("shared=%d/", c.shared) + name
		}
		b.Run(name, func(b *testing.B) {
			rng := rand.New(rand.NewPCG(12, 12))
			be := New(0)
			defer be.Close()
			nb := (ctx + bs - 1) / bs
			cache := randKVCache(be, rng, c.typ, layers, seqs*nb, bs, kvHeads, hd)
			rows := make([]metal.AttnRow, 0, seqs*tokens)
			for s := range seqs {
				table := make([]int32, nb)
				for j := range table {
					table[j] = int32(s*nb + j)
					if j < c.shared/bs {
						table[j] = int32(j) // the first sequence's
					}
				}
				for i := range tokens {
					rows = append(rows, metal.AttnRow{Pos: int32(ctx - tokens + i), Blocks: table})
				}
			}
			n := len(rows)
			q, out := randVec(rng, n*heads*hd), make([]float32, n*heads*hd)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				for l := range cache.Layers {
					be.Attention(out, q, &cache.Layers[l], rows, heads, kvHeads, hd)
				}
			}
			kvBytes := float64(seqs * layers * ctx * 2 * kvHeads * hd * 2)
			b.ReportMetric(kvBytes*float64(b.N)/b.Elapsed().Seconds()/1e9, "KVGB/s")
		})
	}
}

// BenchmarkWriteKV stores rows tokens' keys and values in every layer of
// the same model's cache, with the caches cleared of them between passes
// (the probe reads 64 MiB, untimed), as the weights streaming through a
// forward pass leave them.
func BenchmarkWriteKV(b *testing.B) {
	const layers, kvHeads, hd, bs = 28, 8, 128, 16
	for _, rows := range []int{1, 16} {
		b.Run(fmt.Sprintf("rows=%d", rows), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(5, 6))
			be := New(0)
			defer be.Close()
			const perSeq = 256 // positions of each row's sequence
			cache := randKVCache(be, rng, metal.KVF16, layers, rows*perSeq/bs, bs, kvHeads, hd)
			k, v := randVec(rng, rows*kvHeads*hd), randVec(rng, rows*kvHeads*hd)
			slots := make([]int32, rows)
			probe := be.NewReadProbe(64 << 20)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				for r := range slots {
					slots[r] = int32(r*perSeq + i%perSeq)
				}
				b.StopTimer()
				probe.Read(64 << 20)
				b.StartTimer()
				for l := range cache.Layers {
					be.WriteKV(&cache.Layers[l], k, v, slots)
				}
			}
			b.ReportMetric(b.Elapsed().Seconds()*1e6/float64(b.N), "us/pass")
		})
	}
}

// randKVCache is a cache of these dimensions holding random keys and
// values, in be's memory and laid out as models lay it out (KVBuffer,
// metal.NewKVCacheIn). Every element is a random float16 (a q8 cache's
// int8 pairs too: any bits are values, and its scales are finite), or in
// a float32 cache a random float32.
func randKVCache(be *Backend, rng *rand.Rand, typ metal.KVType, layers, blocks, bs, kvHeads, hd int) *metal.KVCache {
	buf := be.KVBuffer(metal.KVCacheElems(typ, layers, blocks, bs, kvHeads, hd))
	if typ == metal.KVF32 {
		copy(metal.Float32s(buf), randVec(rng, len(buf)/2))
	} else {
		copy(buf, randF16(rng, len(buf)))
	}
	return metal.NewKVCacheIn(buf, typ, layers, blocks, bs, kvHeads, hd)
}

// BenchmarkScoresQ8Packed measures what integer attention scores could
// gain: the scores of 2, 10 or 32 query heads (a decode pair, a verify
// row's, a 16-token run's) against 2048 positions of one KV head of 128,
// on one thread with everything in cache, two ways. "packed" holds the
// keys as a q8 matrix packed for the set's matrix kernels and computes the
// scores as a product (MatMul, the heads as activation rows, quantising
// them included). "half" holds them as float16 and uses the set's in-place
// many-head attention kernel, as attention does today. min-ns is the
// fastest call (other processes on shared cores only slow calls down).
func BenchmarkScoresQ8Packed(b *testing.B) {
	const npos, hd = 2048, 128
	rng := rand.New(rand.NewPCG(3, 3))
	kf := randVec(rng, npos*hd)
	w, _ := metal.Quantize(metal.Q8, kf, npos, hd)
	k16 := make([]uint16, npos*hd)
	for i, v := range kf {
		k16[i] = metal.F32ToF16(v)
	}
	tab := make([]halfGroup, npos/8)
	for g := range tab {
		tab[g] = halfGroup{k: &k16[g*8*hd], pf: &k16[g*8*hd]}
	}
	for _, heads := range []int{2, 10, 32} {
		x := randVec(rng, heads*hd)
		b.Run(fmt.Sprintf("heads=%d/packed", heads), func(b *testing.B) {
			be := New(1)
			defer be.Close()
			be.PrepareWeights(w)
			y := make([]float32, heads*npos)
			reportFastest(b, func() { be.MatMul(y, x, heads, w) })
		})
		b.Run(fmt.Sprintf("heads=%d/half", heads), func(b *testing.B) {
			be := New(1)
			defer be.Close()
			if be.f.scoresHeadsHalf == nil {
				b.Skipf("the %s set has no in-place many-head kernel", be.f.name)
			}
			out, q := make([][]float32, heads), make([][]float32, heads)
			for h := range heads {
				out[h], q[h] = make([]float32, npos), x[h*hd:(h+1)*hd]
			}
			reportFastest(b, func() { be.f.scoresHeadsHalf(out, q, tab, hd, 1) })
		})
	}
}

// reportFastest runs call b.N times and reports the fastest as min-ns.
func reportFastest(b *testing.B, call func()) {
	best := time.Duration(1 << 62)
	for i := 0; i < b.N; i++ {
		start := time.Now()
		call()
		best = min(best, time.Since(start))
	}
	b.ReportMetric(float64(best.Nanoseconds()), "min-ns")
}
