package cpu

import "testing"

// TestDotPeakLoops runs every set's peak loop briefly (under qemu for
// arm64: an instruction the CPU lacks or a bad encoding faults here, not
// in a benchmark) and checks that the portable set reports no peak.
func TestDotPeakLoops(t *testing.T) {
	for _, k := range kernelSets() {
		if k.dotPeak == nil {
			continue
		}
		if k.dotPeakOps <= 0 {
			t.Errorf("%s: %d operations an iteration", k.name, k.dotPeakOps)
		}
		k.dotPeak(1 << 10)
	}
	be := NewWithOptions(Options{Threads: 2, Portable: true})
	defer be.Close()
	if p := be.DotPeak(); p != 0 {
		t.Errorf("portable DotPeak = %v, want 0", p)
	}
}

// BenchmarkDotPeak is the compute probe alone: the integer multiply-add
// rate of the best set's dot-product instruction, on one thread and on
// all (GOMAXPROCS), in GOPS (two operations per multiply-add).
func BenchmarkDotPeak(b *testing.B) {
	one, all := New(1), New(0)
	defer one.Close()
	defer all.Close()
	var p1, pn float64
	for i := 0; i < b.N; i++ {
		p1, pn = max(p1, one.DotPeak()), max(pn, all.DotPeak())
	}
	if p1 == 0 {
		b.Skip("no peak loop in the portable set")
	}
	b.ReportMetric(p1/1e9, "GOPS/thread")
	b.ReportMetric(pn/1e9, "GOPS")
	b.ReportMetric(pn/p1, "xthread")
}
