package vec

import "math"

// Argmax returns the index of the largest value of vals, the lowest on
// ties (−0 and +0 are equal), ignoring NaNs; 0 when there is none (vals
// empty, or all NaN). The sampler runs it over the whole vocabulary for
// every greedy token, hence the assembly (BenchmarkArgmax).
func Argmax(vals []float32) int {
	if n := len(vals) &^ (argmaxBlock - 1); n > 0 && haveArgmaxAsm() {
		m := maxAsm(&vals[0], n)
		for _, v := range vals[n:] {
			if v > m {
				m = v
			}
		}
		if i := indexAsm(&vals[0], n, m); i >= 0 {
			return i
		}
		if j := firstIndex(vals[n:], m); j >= 0 {
			return n + j
		}
		return 0 // no value equals m: all are NaN (and m is −Inf)
	}
	return argmaxRef(vals)
}

// argmaxBlock is the number of elements the assembly takes per iteration;
// Argmax hands it whole blocks.
const argmaxBlock = 32

// argmaxRef is Argmax in Go: the max in four independent lanes (one
// running max would chain every comparison on the previous one), then the
// first index holding it. A NaN never compares greater, so it is never
// the max.
func argmaxRef(vals []float32) int {
	inf := float32(math.Inf(-1))
	m0, m1, m2, m3 := inf, inf, inf, inf
	i := 0
	for ; i+3 < len(vals); i += 4 {
		v := vals[i : i+4 : i+4]
		if v[0] > m0 {
			m0 = v[0]
		}
		if v[1] > m1 {
			m1 = v[1]
		}
		if v[2] > m2 {
			m2 = v[2]
		}
		if v[3] > m3 {
			m3 = v[3]
		}
	}
	for ; i < len(vals); i++ {
		if vals[i] > m0 {
			m0 = vals[i]
		}
	}
	return max(firstIndex(vals, max(m0, m1, m2, m3)), 0)
}

// firstIndex is the index of the first value equal to m, or −1.
func firstIndex(vals []float32, m float32) int {
	for j, v := range vals {
		if v == m {
			return j
		}
	}
	return -1
}
