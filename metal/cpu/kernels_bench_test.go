package cpu

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/splash-inference/splash/metal"
)

// kernelSets is every kernel set this CPU runs, portable last.
func kernelSets() []kernels { return append(availableKernels(), portableKernels()) }

// kernelVariant is a kernel set, with weights packed for it or not.
type kernelVariant struct {
	k      kernels
	packed bool
}

func (v kernelVariant) name() string {
	if v.packed {
		return v.k.name + "/packed"
	}
	return v.k.name
}

// backend starts a backend on threads workers running v, with w prepared
// when v is packed.
func (v kernelVariant) backend(threads int, w *metal.Tensor) *Backend {
	be := New(threads)
	be.k = v.k
	if v.packed {
		be.PrepareWeights(w)
	}
	return be
}

// reportPeakFrac reports ops (operations a second) as a fraction of be's
// dot-product peak (Backend.DotPeak, measured now, off the timer), where
// its set has one.
func reportPeakFrac(b *testing.B, be *Backend, ops float64) {
	b.StopTimer()
	defer b.StartTimer()
	if peak := be.DotPeak(); peak > 0 {
		b.ReportMetric(ops/peak, "peakfrac")
	}
}

// kernelVariants is every kernel set, and each with a packed kernel also
// with its weights packed.
func kernelVariants() []kernelVariant {
	var vs []kernelVariant
	for _, k := range kernelSets() {
		if k.q4Packed != nil {
			vs = append(vs, kernelVariant{k, true})
		}
		vs = append(vs, kernelVariant{k, false})
	}
	return vs
}

// BenchmarkMatVec measures one activation row times a 3072×1024 weight
// matrix (a Qwen3-0.6B MLP projection) on one thread, reporting weight bytes
// streamed per second.
func BenchmarkMatVec(b *testing.B) {
	const out, in = 3072, 1024
	for _, d := range []metal.DType{metal.Q4, metal.Q8} {
		rng := rand.New(rand.NewPCG(1, 2))
		w, _ := metal.Quantize(d, randVec(rng, out*in), out, in)
		x := randVec(rng, in)
		y := make([]float32, out)
		for _, v := range kernelVariants() {
			b.Run(fmt.Sprintf("%s/%s", d, v.name()), func(b *testing.B) {
				be := v.backend(1, w)
				defer be.Close()
				b.SetBytes(int64(len(w.Data)))
				b.ResetTimer() // packing the weights is not the product's cost
				for i := 0; i < b.N; i++ {
					be.MatMul(y, x, 1, w)
				}
			})
		}
	}
}

// BenchmarkMatMat measures rows activation rows times a 1024×1024 q4 matrix
// on one thread, reporting integer multiply-adds per second (GOPS, one
// multiply-add counted as two operations) and their fraction of the set's
// dot-product peak on one thread measured in the same run (peakfrac,
// Backend.DotPeak).
func BenchmarkMatMat(b *testing.B) {
	const out, in = 1024, 1024
	rng := rand.New(rand.NewPCG(3, 4))
	w, _ := metal.Quantize(metal.Q4, randVec(rng, out*in), out, in)
	for _, rows := range []int{8, 64, 512} {
		x := randVec(rng, rows*in)
		y := make([]float32, rows*out)
		for _, v := range kernelVariants() {
			b.Run(fmt.Sprintf("rows%d/%s", rows, v.name()), func(b *testing.B) {
				be := v.backend(1, w)
				defer be.Close()
				b.ResetTimer() // packing the weights is not the product's cost
				for i := 0; i < b.N; i++ {
					be.MatMul(y, x, rows, w)
				}
				ops := 2 * float64(out*in*rows) * float64(b.N) / b.Elapsed().Seconds()
				b.ReportMetric(ops/1e9, "GOPS")
				reportPeakFrac(b, be, ops)
			})
		}
	}
}

// BenchmarkMatMatRows measures how the cost of a q4 matrix product grows
// with its activation rows (one thread, best kernels, weights prepared). Besides the mean ns
// per call it reports min-ns, the fastest single call, and x1row, min-ns
// over the fastest of 20 one-row calls timed in the same run: minimums are
// what survive other processes sharing the cores. Row counts are a decode
// (1), speculative verify passes (2-8) and batches.
func BenchmarkMatMatRows(b *testing.B) {
	for _, shape := range [][2]int{{1024, 1024}, {3072, 1024}} {
		out, in := shape[0], shape[1]
		rng := rand.New(rand.NewPCG(7, 8))
		w, _ := metal.Quantize(metal.Q4, randVec(rng, out*in), out, in)
		for _, rows := range []int{1, 2, 5, 8, 16, 64} {
			x := randVec(rng, rows*in)
			y := make([]float32, rows*out)
			b.Run(fmt.Sprintf("%dx%d/rows%d", out, in, rows), func(b *testing.B) {
				be := New(1)
				defer be.Close()
				be.PrepareWeights(w) // as models do
				peak := be.DotPeak()
				fastest := func(n, rows int) time.Duration {
					best := time.Duration(1 << 62)
					for i := 0; i < n; i++ {
						start := time.Now()
						be.MatMul(y[:rows*out], x[:rows*in], rows, w)
						best = min(best, time.Since(start))
					}
					return best
				}
				one := fastest(20, 1)
				b.ResetTimer()
				best := fastest(b.N, rows)
				b.ReportMetric(float64(best.Nanoseconds()), "min-ns")
				b.ReportMetric(best.Seconds()/one.Seconds(), "x1row")
				b.ReportMetric(2*float64(out*in*rows)/best.Seconds()/1e9, "GOPS")
				if peak > 0 {
					b.ReportMetric(2*float64(out*in*rows)/best.Seconds()/peak, "peakfrac")
				}
			})
		}
	}
}

const probeMiB = 256 // well beyond the last-level cache

// BenchmarkMemReadBandwidth is the probe alone: bytes read per second on
// all threads (GOMAXPROCS).
func BenchmarkMemReadBandwidth(b *testing.B) {
	be := New(0)
	defer be.Close()
	p := be.NewReadProbe(probeMiB << 20)
	b.ResetTimer()
	bw := 0.0
	for i := 0; i < b.N; i++ {
		bw = max(bw, p.Best())
	}
	b.ReportMetric(bw/1e9, "GB/s")
}

// dramCopies returns w and copies of it (distinct memory), enough that
// cycling through them reads at least the probe's 256 MiB: one 32768×2048
// q4 matrix (38 MB) fits this machine's last-level cache in part, which
// once made it read faster than memory can deliver.
func dramCopies(w *metal.Tensor) []*metal.Tensor {
	ws := []*metal.Tensor{w}
	for n := len(w.Data); n < probeMiB<<20; n += len(w.Data) {
		c := *w
		c.Data = bytes.Clone(w.Data)
		ws = append(ws, &c)
	}
	return ws
}

// BenchmarkMatVecDRAM streams 32768×2048 weight matrices (together larger
// than the caches: dramCopies) through one activation row on all threads
// with the best kernels, reporting weight GB/s and its fraction (frac) of
// the read bandwidth the probe measures between the products (probeGB/s),
// and of the probe's best of three before them (bestGB/s, bestfrac); also
// with the weights prepared (packed) for the kernel set, as models do.
//
// Measured for the packed layout (packed.go): a loop of only the loads of
// a one-row product took 1.26-1.5× as long with the scales in a second
// stream as without them, for 12% more bytes (four alternating pairs, two
// threads); with the kernels' work in between, one stream and two measured
// alike (three pairs). Prefetching the start of each claimed range of
// tiles (prefetchTiles) took a decode step's frac on two threads from
// 0.53–0.59 to 0.55–0.61 (four rounds of two binaries taking turns).
func BenchmarkMatVecDRAM(b *testing.B) {
	const out, in = 32768, 2048
	rng := rand.New(rand.NewPCG(5, 6))
	src := randVec(rng, out*in)
	x := randVec(rng, in)
	y := make([]float32, out)
	for _, d := range []metal.DType{metal.Q4, metal.Q8} {
		w, _ := metal.Quantize(d, src, out, in)
		for _, prepared := range []bool{false, true} {
			name := d.String()
			if prepared {
				name += "/prepared"
			}
			b.Run(name, func(b *testing.B) {
				be := New(0)
				defer be.Close()
				ws := dramCopies(w)
				if prepared {
					for _, w := range ws {
						be.PrepareWeights(w)
					}
				}
				probe := be.NewReadProbe(probeMiB << 20)
				best := probe.Best()
				// The probe reads as many bytes again after each product
				// (ReadProbe.Read): frac compares means over the same time.
				var probed int
				var probeTime time.Duration
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					be.MatMul(y, x, 1, ws[i%len(ws)])
					b.StopTimer()
					n, d := probe.Read(len(w.Data))
					probed, probeTime = probed+n, probeTime+d
					b.StartTimer()
				}
				gbs := float64(len(w.Data)) * float64(b.N) / b.Elapsed().Seconds()
				bw := float64(probed) / probeTime.Seconds()
				b.ReportMetric(gbs/1e9, "weightGB/s")
				b.ReportMetric(bw/1e9, "probeGB/s")
				b.ReportMetric(gbs/bw, "frac")
				b.ReportMetric(best/1e9, "bestGB/s")
				b.ReportMetric(gbs/best, "bestfrac")
			})
		}
	}
}

func TestReadProbeSums(t *testing.T) {
	for _, n := range []int{0, 7, 128, 1000, 4096} {
		buf := make([]byte, n)
		var want uint64
		for i := range buf {
			buf[i] = byte(i * 7)
		}
		for i := 0; i+8 <= n; i += 8 {
			want += binary.LittleEndian.Uint64(buf[i:])
		}
		for i := n &^ 127; i < n; i++ {
			// readProbe adds the bytes past the last whole 128-byte block
			// one by one; the words it skipped there are subtracted back.
			want += uint64(buf[i])
		}
		for i := n &^ 127; i+8 <= n; i += 8 {
			want -= binary.LittleEndian.Uint64(buf[i:])
		}
		if got := readProbe(buf); got != want {
			t.Errorf("len %d: readProbe = %d, want %d", n, got, want)
		}
	}
}

// BenchmarkMatMatDRAM streams the 32768×2048 q4 matrices of MatVecDRAM,
// prepared as models prepare it, through 1, 5 (a verify row at k=4) and
// 16 activation rows on all threads: x1row is the time per call over the
// one-row time of the same run, the cost of a verify pass or a batch in
// the matrix products alone.
//
// Measured when the packed kernels' prefetch distances were chosen
// (packedNearLead, packedFarLead, packedVNNIFarRows, packedAVX2FarRows),
// three rounds of alternating binaries, one and two threads:
//
//   - AVX-512 VNNI, one row: 1 to 16 KiB ahead alike at first; 16 KiB
//     later took 1.03-1.5× as long on one thread (four rounds).
//   - AVX-512 VNNI, rows5: 1.35× the one-row time near, 1.0-1.15× with
//     16 KiB (a slow-memory day). A whole k=4 verify pass of the 0.6B
//     model (BenchmarkVerifyRatio0_6BQ4) then took 1.27-1.33× a decode
//     pass instead of 1.41-1.43× on one thread, 1.46-1.56× instead of
//     1.50-1.59× on two; actors.BenchmarkConcurrentDecode c=4 ran at
//     378-436 tokens/s instead of 320-360.
//   - AVX-512 VNNI, 12 to 32 rows: 16 KiB gained nothing (0.92-1.16×).
//   - AVX2 (about 2.6× slower per row than AVX-512 VNNI): one row took
//     0.75-0.85× as long far on two threads, about 0.92× on one; three
//     rows were 1.0-1.5× slower far, five and eight 1.05-1.2×.
//   - AVX-VNNI (about 2.2× slower per row): two rows alike either way,
//     three slower far.
func BenchmarkMatMatDRAM(b *testing.B) {
	const out, in = 32768, 2048
	rng := rand.New(rand.NewPCG(5, 6))
	w, _ := metal.Quantize(metal.Q4, randVec(rng, out*in), out, in)
	be := New(0)
	defer be.Close()
	ws := dramCopies(w)
	for _, w := range ws {
		be.PrepareWeights(w)
	}
	var one float64
	for _, rows := range []int{1, 5, 16} {
		x := randVec(rng, rows*in)
		y := make([]float32, rows*out)
		b.Run(fmt.Sprintf("rows%d", rows), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				be.MatMul(y, x, rows, ws[i%len(ws)])
			}
			per := b.Elapsed().Seconds() / float64(b.N)
			if rows == 1 {
				one = per
			}
			b.ReportMetric(float64(len(w.Data))/per/1e9, "weightGB/s")
			b.ReportMetric(per/one, "x1row")
		})
	}
}
