package backendtest

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/splash-inference/splash/metal"
	"github.com/splash-inference/splash/metal/cpu"
)

// recorder is a testing.TB that records failures instead of failing the
// test, so the suite's own test can check that a faulty backend fails it.
type recorder struct {
	testing.TB
	failed []string
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.failed = append(r.failed, fmt.Sprintf(format, args...))
}
func (r *recorder) Fatalf(format string, args ...any) {
	r.Errorf(format, args...)
	runtime.Goexit()
}
func (r *recorder) Fatal(args ...any) { r.Fatalf("%s", fmt.Sprint(args...)) }
func (r *recorder) Skip(...any)       { runtime.Goexit() }

// run runs check against be on its own goroutine (Fatalf ends it) and
// returns the failures it reported.
func run(t *testing.T, check func(testing.TB, metal.Backend), be metal.Backend) []string {
	r := &recorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		check(r, be)
	}()
	<-done
	return r.failed
}

// faulty wraps the portable CPU backend and breaks one promise.
type faulty struct {
	metal.Backend
	fault string
}

func (f faulty) MatMul(out, x []float32, rows int, w *metal.Tensor) {
	f.Backend.MatMul(out, x, rows, w)
	switch {
	case f.fault == "matmul error" && w.DType == metal.Q4:
		out[len(out)-1]++ // as one group read with a wrong scale
	case f.fault == "batch variant" && rows > 1:
		out[0] = out[0] * (1 + 1e-6)
	}
}

func (f faulty) RMSNorm(out, x, weight []float32, dim int, eps float32) {
	if f.fault == "rmsnorm eps" {
		eps *= 1e5
	}
	f.Backend.RMSNorm(out, x, weight, dim, eps)
}

func (f faulty) RoPE(x []float32, pos []int32, heads, headDim int, invFreq []float32) {
	if f.fault == "rope off by one" {
		p := make([]int32, len(pos))
		for i := range pos {
			p[i] = pos[i] + 1
		}
		pos = p
	}
	f.Backend.RoPE(x, pos, heads, headDim, invFreq)
}

func (f faulty) Attention(out, q []float32, kv *metal.KVLayer, rows []metal.AttnRow, heads, kvHeads, headDim int) {
	if f.fault == "attention skips last" {
		r := make([]metal.AttnRow, len(rows))
		for i := range rows {
			r[i] = rows[i]
			r[i].Pos = max(rows[i].Pos-1, 0)
		}
		rows = r
	}
	f.Backend.Attention(out, q, kv, rows, heads, kvHeads, headDim)
}

// TestSuiteCatchesFaults: each check passes the portable CPU backend and
// fails it with the fault that check exists for.
func TestSuiteCatchesFaults(t *testing.T) {
	for _, tc := range []struct {
		fault string
		check func(testing.TB, metal.Backend)
	}{
		{"matmul error", checkMatMul},
		{"batch variant", checkMatMulBatchInvariant},
		{"rmsnorm eps", checkRMSNorm},
		{"rope off by one", checkRoPE},
		{"attention skips last", checkAttention},
	} {
		t.Run(tc.fault, func(t *testing.T) {
			be := cpu.NewWithOptions(cpu.Options{Threads: 1, Portable: true})
			defer be.Close()
			if f := run(t, tc.check, be); len(f) != 0 {
				t.Fatalf("the portable backend fails: %v", f)
			}
			if f := run(t, tc.check, faulty{Backend: be, fault: tc.fault}); len(f) == 0 {
				t.Errorf("a backend with %q passes", tc.fault)
			}
		})
	}
}
