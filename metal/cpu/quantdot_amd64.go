package cpu

import "golang.org/x/sys/cpu"

//go:noescape
func dotQ4AVX2(w, ws *byte, xq *int8, xs *float32, xsum *int32, groups int) float32

//go:noescape
func dotQ8AVX2(w, ws *byte, xq *int8, xs *float32, groups int) float32

func dotQ4AVX2Row(w, ws []byte, x qrow) float32 {
	if len(x.scale) == 0 {
		return 0
	}
	_, _ = w[len(x.scale)*16-1], ws[2*len(x.scale)-1]
	return dotQ4AVX2(&w[0], &ws[0], &x.q[0], &x.scale[0], &x.sum[0], len(x.scale))
}

func dotQ8AVX2Row(w, ws []byte, x qrow) float32 {
	if len(x.scale) == 0 {
		return 0
	}
	_, _ = w[len(x.scale)*32-1], ws[2*len(x.scale)-1]
	return dotQ8AVX2(&w[0], &ws[0], &x.q[0], &x.scale[0], len(x.scale))
}

func hasAVX2() bool { return cpu.X86.HasAVX2 && cpu.X86.HasF16C }

func bestKernels() kernels {
	if hasAVX2() {
		return kernels{name: "cpu/avx2", dotQ4: dotQ4AVX2Row, dotQ8: dotQ8AVX2Row}
	}
	return portableKernels()
}
