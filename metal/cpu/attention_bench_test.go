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
//
// With blocks of 32 rather than 16 (serve's --kv-block-size default), a
// decode step of the 0.6B-shaped q4 model at a context of 4096 took 0.92
// of the time, its attention alone 0.83 (min of five alternating runs).
//
// What it measured when the attention code's constants and walks were
// chosen (AVX-512 unless said; min of three or four alternating runs or
// binaries):
//
//   - attnRunTokens: against runs of 8 tokens on two threads, 16 took 0.91
//     of the time for a 512-token chunk at context 2560-3072 and for 64
//     tokens at 576-640; 32 took 0.89 and 0.86.
//   - attnChunk: against 32 positions on two threads, 128 took 0.81 of the
//     time for one token at context 1024, 0.83 for five at 256, 0.81 for
//     eight at 512; 64 about the same as 128. Walking one block of all a
//     worker's KV heads at a time was no faster on one thread and 1.27×
//     slower on two.
//   - decodeLead: against none, one token at context 4096, 22.3-22.8 →
//     25.5-26.7 KV GB/s on one thread, 37.1-37.6 → 43.3-44.0 on two; two,
//     four or six stretches ahead alike, 256 bytes no better, a whole
//     stretch two ahead the same as none. Without the kernels' own
//     prefetch of the next stretch a step read 0.65 as fast.
//   - Decode in place rather than widened (attention.go), AVX2: 0.50-0.54
//     of the time.
//   - decodeAheadBytes, context 4096, two threads: a q8 step (4.25 KiB
//     stretches) took 0.82-0.90 of the time prefetching two stretches
//     ahead rather than one; float16 (8 KiB) no faster two ahead (one
//     thread: 1.06-1.11 of the time).
//   - Stretch tables (attention_tables.go) against the one-stretch walk,
//     32-token blocks: in cache, one thread, context 1024, 82-86 → 60-68 µs
//     a layer for float16 (71 at 64-token blocks without tables) and 96-98
//     → 76-79 for q8; from memory at context 4096, q8 12.2-12.5 →
//     10.5-10.9 ms on one thread and 7.3-8.4 → 5.7-6.0 on two, float16
//     unchanged (13.4-14.8 and 7.7-8.3 ms). AVX2 in cache: float16 107 →
//     96 µs a layer, q8 154 → 134 (16-token blocks: 123 → 98 and 173 →
//     136).
//   - decodeSegmentBytes, context 4096, two threads: q8 5.5-5.6 ms with a
//     KV head's whole context, 5.7-6.0 at 224 positions, 5.8-6.3 at 128;
//     float16 7.7-8.2 ms at 128 positions (32 KiB), 7.8-9.7 at 512, 8.9-10.1
//     whole (one thread: 13.6-13.8 at 128, 15.7-17.4 whole).
//   - Shared-prefix runs (attention_shared.go), 28 layers, without → with:
//     8 sequences at 4096 sharing 3584, 119-141 → 95-100 ms on one thread,
//     86-107 → 61-69 on two; 16 at 2048 sharing 1792, 105 → 92 and 59 →
//     36; 16 at 1024 sharing 768, 47-54 → 39-46 and 27-35 → 27-32. Over a
//     float16 cache (tokens), 8 at 4096 sharing 3584, 148-149 → 89-111 and
//     90-108 → 53-65; 16 at 2048 sharing 1792, 126-132 → 107-129 and 70-84
//     → 65-71; q8 about even (119-129 → 107-130, 66-67 → 61-72).
//   - Fused multiply-adds in the score and value loops (scoresRef's
//     order), Zen 5: score loops 1.2-1.25× faster, value loops up to 1.45×.
//   - bf16 (attention_bf16.go, Zen 5): VDPBF16PS 471 GFLOPS a core against
//     253 for VFMADD231PS in a register loop. Prefetching decodeLead blocks
//     on in a run: 16-token runs at 4096 read 9.4-13.1 KV GB/s against
//     8.1-11.8 without (two threads; five-token runs alike). The near
//     group tables: one token at context 4096, 21.5-24.0 against 17.7-20.8
//     KV GB/s on one thread, 30.8-39.2 against 27.6-34.6 on two, but five
//     tokens at 1024 13.1-14.8 against 15.2-18.3. Two-head value sums
//     against four calls of 32 dimensions, one token: 24.9-32.0 →
//     30.3-37.6 KV GB/s at 256 on one thread, 18.9-23.0 → 19.8-24.6 at
//     4096.
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
//
// Prefetching the next writeKVLead slots' lines (WriteKV) took a pass over
// 28 layers from 685-765 to 481-505 µs for 16 rows, 35-60 to 29-32 µs for
// one (three rounds of two binaries).
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
