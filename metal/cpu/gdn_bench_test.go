package cpu

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/splash-inference/splash/metal"
)

// BenchmarkGatedDeltaRule times one Gated DeltaNet layer's delta rule
// (16 key and 16 value heads of 128) for a decode token and a 256-token
// prompt chunk, the chunk both in the chunked form (GatedDeltaRule's
// choice) and token by token; ns/token is per token of the call. One
// thread of the 2-core Xeon VM (avx512vnni set, whose dot and axpy
// loops both forms use): decode 180 µs, the chunk 152 µs a token in the
// chunked form against 207 token by token (0.73×). Before the chunk's
// tiny factors were flushed to zero the chunked form took 2.2 ms a token,
// in subnormal products. The chunked form is faster from 2 rows on (16+16
// heads of 128, one thread, min of 6 runs: 1 row 45 µs a head-token in the
// loop against 50 chunked, 2 rows 45 against 38, 8 rows 44 against 32);
// deltaChunkMinRows keeps short calls in the loop for bit-identical
// verify passes. The loop's axpyRows and deltaRow kernels took decode
// from 281 µs to 74 (fastest of 8 runs of each binary taking turns on the
// loaded VM; medians 444 and 142).
func BenchmarkGatedDeltaRule(b *testing.B) {
	d := metal.DeltaDims{KeyHeads: 16, ValueHeads: 16, KeyDim: 128, ValueDim: 128}
	be := New(1)
	defer be.Close()
	for _, bc := range []struct {
		name    string
		rows    int
		chunked bool
	}{{"decode", 1, false}, {"prompt256/chunked", 256, true}, {"prompt256/loop", 256, false}} {
		b.Run(bc.name, func(b *testing.B) {
			rng := rand.New(rand.NewPCG(1, 2))
			qkv := randVec(rng, bc.rows*d.QKVDim())
			normalizeQK(qkv, bc.rows, d)
			g, beta := randGates(be, rng, bc.rows, d.ValueHeads, 3)
			state := make([]float32, d.StateLen())
			out := make([]float32, bc.rows*d.ValueHeads*d.ValueDim)
			scratch := make([]float32, max(d.ValueDim, deltaChunkScratch(deltaChunk, d.KeyDim, d.ValueDim)))
			var cum [deltaChunk]float64
			b.ResetTimer()
			for range b.N {
				for h := range d.ValueHeads {
					dh := newDeltaHead(&be.k, out, qkv, g, beta, state, d, h)
					if bc.chunked {
						deltaChunked(&dh, bc.rows, deltaChunk, deltaChunkMinRows, scratch, cum[:])
					} else {
						deltaRecurrent(&dh, 0, bc.rows, scratch[:d.ValueDim])
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*bc.rows), "ns/token")
		})
	}
}

// BenchmarkCausalConv1D times a Gated DeltaNet layer's convolution
// (6144 channels, width 4) for a decode token and a 256-token chunk: on
// the 2-core Xeon VM, 44 µs and 6.9 ms (4.4 ns a channel and token; it
// was 60 ms walking each channel down the rows with a float64 SiLU).
func BenchmarkCausalConv1D(b *testing.B) {
	const channels, kernel = 6144, 4
	be := New(1)
	defer be.Close()
	for _, rows := range []int{1, 256} {
		b.Run(fmt.Sprintf("rows%d", rows), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(3, 4))
			x, w := randVec(rng, rows*channels), randVec(rng, channels*kernel)
			state, out := make([]float32, (kernel-1)*channels), make([]float32, rows*channels)
			b.ResetTimer()
			for range b.N {
				be.CausalConv1D(out, x, state, w, rows, channels, kernel)
			}
		})
	}
}

// BenchmarkGatedDeltaRuleLayers times decode tokens through the delta
// rule of Gated DeltaNet layers of Qwen3.5-0.8B's shape (16 value heads of
// 128, 1 MiB of state each) on a pool of 2, each layer's state its own and
// taken in turn: 18 layers (the model's 18 MiB, which a large last-level
// cache may hold), 128 (more than the caches hold: every state comes from
// memory) and 18 with 20 MB read between calls (a decode step's weight
// stream between two layers' delta rules). us/layer is the delta rule's
// own time; bytes/s counts each state read and written once, as the
// decode bandwidth bound does (over ns/op, which includes the read between
// calls: there only us/layer means anything). A model's decode spending
// much longer per layer in its delta rule points at its inputs, not at the
// memory: subnormal decays did that (deltaRecurrent).
func BenchmarkGatedDeltaRuleLayers(b *testing.B) {
	d := metal.DeltaDims{KeyHeads: 16, ValueHeads: 16, KeyDim: 128, ValueDim: 128}
	be := New(2)
	defer be.Close()
	probe := be.NewReadProbe(64 << 20)
	for _, bc := range []struct {
		layers  int
		between int // bytes read between calls
	}{{18, 0}, {128, 0}, {18, 20 << 20}} {
		b.Run(fmt.Sprintf("layers%d/between%dMB", bc.layers, bc.between>>20), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(1, 2))
			qkv := randVec(rng, d.QKVDim())
			normalizeQK(qkv, 1, d)
			g, beta := randGates(be, rng, 1, d.ValueHeads, 3)
			states := make([][]float32, bc.layers)
			for l := range states {
				states[l] = randVec(rng, d.StateLen())
			}
			out := make([]float32, d.ValueHeads*d.ValueDim)
			q := make([]float32, len(qkv))
			b.SetBytes(int64(2 * 4 * d.StateLen()))
			var in time.Duration
			b.ResetTimer()
			for i := range b.N {
				if bc.between > 0 {
					probe.Read(bc.between)
				}
				copy(q, qkv) // GatedDeltaRule normalises in place
				start := time.Now()
				be.GatedDeltaRule(out, q, g, beta, states[i%bc.layers], 1, d)
				in += time.Since(start)
			}
			b.ReportMetric(float64(in.Nanoseconds())/float64(b.N)/1e3, "us/layer")
		})
	}
}
