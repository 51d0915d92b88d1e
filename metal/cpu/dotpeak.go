package cpu

import "time"

// DotPeak measures the integer multiply-add rate of the kernel set's dot
// product instruction (VPDPBUSD on zmm for AVX-512 VNNI, VPMADDUBSW on ymm
// for AVX2, SDOT for NEON) on all the backend's workers at once, in
// operations per second (two per multiply-add): independent accumulators
// in registers, no memory, so no matrix kernel can beat it. Benchmarks
// divide their GOPS by it to report the fraction of the compute bound they
// reach, measured in the same run, as they divide their weight traffic by
// ReadBandwidth. It returns 0 for the portable set, which has no such
// instruction. Takes about 10 ms; not for use while serving.
func (b *Backend) DotPeak() float64 {
	if b.k.dotPeak == nil {
		return 0
	}
	t := &dotPeakTask{k: &b.k}
	units := 32 * b.pool.n
	best := 0.0
	for range 3 {
		start := time.Now()
		b.pool.run(t, units, 1)
		ops := float64(units) * dotPeakIters * float64(b.k.dotPeakOps)
		best = max(best, ops/time.Since(start).Seconds())
	}
	return best
}

// dotPeakIters is the loop count of one unit of DotPeak's work: about a
// million instructions, a fraction of a millisecond, so that the units
// balance across workers whatever the scheduler does.
const dotPeakIters = 1 << 16

// dotPeakTask runs the set's peak loop once per index.
type dotPeakTask struct{ k *kernels }

func (t *dotPeakTask) run(lo, hi, _ int) {
	for range hi - lo {
		t.k.dotPeak(dotPeakIters)
	}
}
