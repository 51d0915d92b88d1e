package sample

import "math"

// expReduced is e^x for −700 ≤ x ≤ 0, inlined where the sampler weighs a
// filtered candidate list (min-p, top-k): range reduction x = k·ln2 + r
// with |r| ≤ ln2/2, then a degree-7 Taylor polynomial for e^r (remainder
// ≤ 0.347⁸/8! ≈ 6e-9). Without those filters the whole vocabulary is
// weighed at once in float32 (vec.ExpWeights).
func expReduced(x float64) float64 {
	const (
		log2e = 1.4426950408889634
		ln2hi = 6.93147180369123816490e-01
		ln2lo = 1.90821492927058770002e-10
		round = 6755399441055744.0 // adding and subtracting 1.5·2⁵² rounds to an integer
	)
	k := (x*log2e + round) - round
	r := x - k*ln2hi - k*ln2lo
	p := 1 + r*(1+r*(1.0/2+r*(1.0/6+r*(1.0/24+r*(1.0/120+r*(1.0/720+r*(1.0/5040)))))))
	return p * math.Float64frombits(uint64(int64(k)+1023)<<52)
}
