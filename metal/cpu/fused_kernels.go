package cpu

import "github.com/splash-inference/splash/metal"

// fusedKernels are the loops of attention and of the elementwise
// operations, chosen once at New like kernels (SIMD where the CPU has it).
// Every implementation returns the same bits as the portable one.
type fusedKernels struct {
	// expShift: see fused_exp.go.
	expShift func(x []float32, m float32) float32
	// siluMul: see fused_exp.go.
	siluMul func(gate, up []float32)
	// scores sets out[p] = dot(q, k[p·stride:][:len(q)])·scale for each p
	// (dot of floatdot.go, keys widened from float16): one query head
	// against len(out) cached keys stride elements apart.
	scores func(out, q []float32, k []uint16, stride int, scale float32)
	// weightedSum adds Σ_p w[p]·v[p·stride:][:len(o)] to o (values widened
	// from float16), position by position in order, each product rounded
	// before its add (as axpy).
	weightedSum func(o []float32, v []uint16, stride int, w []float32)
	// toF16 sets dst[i] to src[i] as float16, rounded to nearest even
	// (metal.F32ToF16).
	toF16 func(dst []uint16, src []float32)
}

func portableFused() fusedKernels {
	return fusedKernels{expShift: expShift, siluMul: siluMul, scores: scoresRef, weightedSum: weightedSumRef, toF16: toF16Ref}
}

func selectFused(o Options) fusedKernels {
	if o.Portable {
		return portableFused()
	}
	return bestFused()
}

// scoresRef is dot's order over keys widened exactly to float32.
func scoresRef(out, q []float32, k []uint16, stride int, scale float32) {
	n := len(q)
	for p := range out {
		kp := k[p*stride : p*stride+n]
		var s [8]float32
		i := 0
		for ; i+8 <= n; i += 8 {
			for l := range s {
				s[l] += float32(q[i+l] * metal.F16ToF32(kp[i+l]))
			}
		}
		d := ((s[0] + s[4]) + (s[2] + s[6])) + ((s[1] + s[5]) + (s[3] + s[7]))
		for ; i < n; i++ {
			d += float32(q[i] * metal.F16ToF32(kp[i]))
		}
		out[p] = d * scale
	}
}

// weightedSumRef is axpy over values widened exactly to float32.
func weightedSumRef(o []float32, v []uint16, stride int, w []float32) {
	for p, wp := range w {
		vp := v[p*stride : p*stride+len(o)]
		for j := range o {
			o[j] += float32(wp * metal.F16ToF32(vp[j]))
		}
	}
}

func toF16Ref(dst []uint16, src []float32) {
	dst = dst[:len(src)]
	for i, x := range src {
		dst[i] = metal.F32ToF16(x)
	}
}
