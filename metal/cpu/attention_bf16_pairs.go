//go:build amd64 || arm64

package cpu

// The two-head KVBF16 kernels that emulate VDPBF16PS bit for bit, for
// CPUs without AVX512_BF16: attention_bf16_avx2_amd64.s (AVX2, MXCSR's
// FTZ and DAZ) and attention_bf16_arm64.s (NEON, FPCR.FZ), the same
// functions on either architecture.

//go:noescape
func scoresPairBF16(out0, out1 *float32, q0, q1 *uint16, tab *halfGroup, groups, blocks, stride int, scale float32)

//go:noescape
func sumsPairBF16(o *[10]*float32, w *[10]*uint16, tab *halfGroup, pairs, off, stride int)

//go:noescape
func narrowBF16Vec(dst *uint16, src *float32, n int)

//go:noescape
func narrowPairsBF16Vec(dst *uint16, src *float32, n, shift int, keep uint32)

// pairBF16 are the loops over those kernels: two heads a call (an odd
// count's last one twice, both copies the same bits), 32 dimensions a
// value-sums call, whole eights narrowed (the rest by the reference).
func pairBF16() bf16Kernels {
	return bf16Kernels{simd: true,
		narrow: func(dst []uint16, src []float32) {
			src = src[:len(dst)]
			if n := len(dst) &^ 7; n > 0 {
				narrowBF16Vec(&dst[0], &src[0], n)
				dst, src = dst[n:], src[n:]
			}
			narrowBF16Ref(dst, src)
		},
		narrowPairs: func(dst []uint16, src []float32, odd int) {
			if n := len(src) &^ 7; n > 0 {
				_ = dst[2*n-1]
				narrowPairsBF16Vec(&dst[0], &src[0], n, 16*odd, 0xffff0000>>(16*odd))
				dst, src = dst[2*n:], src[n:]
			}
			narrowPairsRef(dst, src, odd)
		},
		scoresHeads: scoresHeadsPairBF16,
		sumsHeads:   sumsHeadsPairBF16,
	}
}

func scoresHeadsPairBF16(out [][]float32, q [][]uint16, tab []halfGroup, hd int, scale float32) {
	if len(tab) == 0 || len(out) == 0 {
		return
	}
	checkHeadsBF16(out, q, 8*len(tab), hd)
	for i := 0; i < len(out); i += 2 {
		j := min(i+1, len(out)-1)
		scoresPairBF16(&out[i][0], &out[j][0], &q[i][0], &q[j][0], &tab[0], len(tab), hd/16, 2*hd, scale)
	}
}

func sumsHeadsPairBF16(o [][]float32, w [][]uint16, tab []halfGroup, pairs, hd int) {
	if !checkSumsBF16(o, w, tab, pairs, hd) {
		return
	}
	var op [10]*float32
	var wp [10]*uint16
	for i := 0; i < len(o); i += 2 {
		j := min(i+1, len(o)-1)
		wp[0], wp[1] = &w[i][0], &w[j][0]
		for c := 0; c < hd; c += 32 {
			op[0], op[1] = &o[i][c], &o[j][c]
			sumsPairBF16(&op, &wp, &tab[0], pairs, 4*c, 4*hd)
		}
	}
}
