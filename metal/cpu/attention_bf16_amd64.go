package cpu

import "golang.org/x/sys/cpu"

// The AVX512_BF16 kernels of a KVBF16 cache (attention_bf16_amd64.s).

//go:noescape
func narrowBF16AVX512(dst *uint16, src *float32, n int)

//go:noescape
func narrowPairsBF16AVX512(dst *uint16, src *float32, n, shift int, keep uint32)

//go:noescape
func scoresHeadsBF16x2AVX512(out *[6]*float32, q *[6]*uint16, tab *halfGroup, stride, qbytes, obytes int, scale float32)

//go:noescape
func scoresHeadsBF16x4AVX512(out *[6]*float32, q *[6]*uint16, tab *halfGroup, stride, qbytes, obytes int, scale float32)

//go:noescape
func scoresHeadsBF16x6AVX512(out *[6]*float32, q *[6]*uint16, tab *halfGroup, stride, qbytes, obytes int, scale float32)

//go:noescape
func scoresPairBF16TabAVX512(out0, out1 *float32, q0, q1 *uint16, tab *decodeStretch, n, blocks int, scale float32)

//go:noescape
func sumsPairBF16TabAVX512(o0, o1 *float32, tab *decodeStretch, n int, w0, w1 *uint16, chunks, stride int)

//go:noescape
func sumsRowsBF16x2AVX512(o *[10]*float32, w *[10]*uint16, tab *halfGroup, pairs, off, stride int)

//go:noescape
func sumsHeadsBF16x2AVX512(o *[10]*float32, w *[10]*uint16, tab *halfGroup, pairs, off, stride int)

//go:noescape
func sumsHeadsBF16x4AVX512(o *[10]*float32, w *[10]*uint16, tab *halfGroup, pairs, off, stride int)

//go:noescape
func sumsHeadsBF16x6AVX512(o *[10]*float32, w *[10]*uint16, tab *halfGroup, pairs, off, stride int)

//go:noescape
func sumsHeadsBF16x8AVX512(o *[10]*float32, w *[10]*uint16, tab *halfGroup, pairs, off, stride int)

//go:noescape
func sumsHeadsBF16x10AVX512(o *[10]*float32, w *[10]*uint16, tab *halfGroup, pairs, off, stride int)

// hasAVX512BF16 reports whether the CPU runs the AVX-512 set and
// VDPBF16PS and VCVTNEPS2BF16 (Zen 4 and later, Cooper Lake and Sapphire
// Rapids and later).
func hasAVX512BF16() bool { return hasAVX512() && cpu.X86.HasAVX512BF16 }

func avx512BF16() bf16Kernels {
	return bf16Kernels{simd: true, narrow: narrowBF16AVX512Slices, narrowPairs: narrowPairsBF16AVX512Slices, scoresHeads: scoresHeadsBF16AVX512, sumsHeads: sumsHeadsBF16AVX512,
		tabScores: scoresPairBF16TabAVX512, tabSums: sumsPairBF16TabAVX512}
}

// narrowPairsBF16AVX512Slices is narrowPairsRef with the whole sixteens
// in the kernel.
func narrowPairsBF16AVX512Slices(dst []uint16, src []float32, odd int) {
	if n := len(src) &^ 15; n > 0 {
		_ = dst[2*n-1]
		narrowPairsBF16AVX512(&dst[0], &src[0], n, 16*odd, 0xffff0000>>(16*odd))
		dst, src = dst[2*n:], src[n:]
	}
	narrowPairsRef(dst, src, odd)
}

// narrowBF16AVX512Slices is narrowBF16Ref with the whole sixteens in the
// kernel.
func narrowBF16AVX512Slices(dst []uint16, src []float32) {
	src = src[:len(dst)]
	if n := len(dst) &^ 15; n > 0 {
		narrowBF16AVX512(&dst[0], &src[0], n)
		dst, src = dst[n:], src[n:]
	}
	narrowBF16Ref(dst, src)
}

// scoreHeadsAt and sumHeadsAt are how many of n heads, from head i on,
// the next call of the score kernels (two, four or six heads) or of the
// value kernels (two to ten) takes, and whether it takes the last head
// twice: an odd count's last, whose two copies compute the same bits, so
// that one written over the other changes nothing.
func scoreHeadsAt(n, i int) (int, bool) {
	switch rest := n - i; {
	case rest == 1:
		return 2, true
	case rest == 6 || rest >= 10:
		return 6, false
	case rest >= 4:
		return 4, false
	}
	return 2, false
}

func sumHeadsBF16At(n, i int) (int, bool) {
	if rest := n - i; rest == 1 {
		return 2, true
	} else if rest > 10 {
		return 10, false
	} else {
		return rest &^ 1, false
	}
}

// scoresHeadsBF16AVX512 is scoresHeadsBF16Ref: the heads six, four or two
// at a time.
func scoresHeadsBF16AVX512(out [][]float32, q [][]uint16, tab []halfGroup, hd int, scale float32) {
	if len(tab) == 0 || len(out) == 0 {
		return
	}
	checkHeadsBF16(out, q, 8*len(tab), hd)
	var op [6]*float32
	var qp [6]*uint16
	for i := 0; i < len(out); {
		heads, twice := scoreHeadsAt(len(out), i)
		for j := range heads {
			h := min(i+j, len(out)-1)
			op[j], qp[j] = &out[h][0], &q[h][0]
		}
		switch heads {
		case 6:
			scoresHeadsBF16x6AVX512(&op, &qp, &tab[0], 2*hd, 2*hd, 32*len(tab), scale)
		case 4:
			scoresHeadsBF16x4AVX512(&op, &qp, &tab[0], 2*hd, 2*hd, 32*len(tab), scale)
		default:
			scoresHeadsBF16x2AVX512(&op, &qp, &tab[0], 2*hd, 2*hd, 32*len(tab), scale)
		}
		if twice {
			heads = 1
		}
		i += heads
	}
}

// sumsHeadsBF16AVX512 is sumsHeadsBF16Ref: up to ten heads a call, 32
// dimensions a call; or for up to four heads of 128 (a decode step's),
// two heads a call, whole (sumsRowsBF16x2AVX512), which reads the cache
// faster than four calls of 32 dimensions (BenchmarkAttention).
func sumsHeadsBF16AVX512(o [][]float32, w [][]uint16, tab []halfGroup, pairs, hd int) {
	if !checkSumsBF16(o, w, tab, pairs, hd) {
		return
	}
	var op [10]*float32
	var wp [10]*uint16
	for i := 0; i < len(o); {
		heads, twice := sumHeadsBF16At(len(o), i)
		for j := range heads {
			wp[j] = &w[min(i+j, len(o)-1)][0]
		}
		if hd == 128 && len(o) <= 4 { // a decode step's heads: two at a time, whole
			op[0], op[1] = &o[i][0], &o[min(i+1, len(o)-1)][0]
			sumsRowsBF16x2AVX512(&op, &wp, &tab[0], pairs, 0, 4*hd)
			i += min(2, len(o)-i)
			continue
		}
		for c := 0; c < hd; c += 32 {
			for j := range heads {
				op[j] = &o[min(i+j, len(o)-1)][c]
			}
			switch heads {
			case 10:
				sumsHeadsBF16x10AVX512(&op, &wp, &tab[0], pairs, 4*c, 4*hd)
			case 8:
				sumsHeadsBF16x8AVX512(&op, &wp, &tab[0], pairs, 4*c, 4*hd)
			case 6:
				sumsHeadsBF16x6AVX512(&op, &wp, &tab[0], pairs, 4*c, 4*hd)
			case 4:
				sumsHeadsBF16x4AVX512(&op, &wp, &tab[0], pairs, 4*c, 4*hd)
			default:
				sumsHeadsBF16x2AVX512(&op, &wp, &tab[0], pairs, 4*c, 4*hd)
			}
		}
		if twice {
			heads = 1
		}
		i += heads
	}
}
