package sample

import "math"

// sumExp returns Σ exp(v[i] − m) for m ≥ max(v), with relative error below
// 1e-8. Logprobs need it over the whole vocabulary (151,936 entries for
// Qwen3) for every token, and this is about twice as fast as calling
// math.Exp: the exponential is inlined and two independent lanes let the
// CPU overlap their polynomial chains. Range reduction x = k·ln2 + r with
// |r| ≤ ln2/2, then a degree-7 Taylor polynomial for e^r (remainder
// ≤ 0.347⁸/8! ≈ 6e-9). Arguments below −700 count as exp(−700) ≈ 1e-304,
// so −Inf logits add nothing measurable.
func sumExp(v []float32, m float64) float64 {
	var s0, s1 float64
	i := 0
	for ; i+1 < len(v); i += 2 {
		s0 += expReduced(max(float64(v[i])-m, -700))
		s1 += expReduced(max(float64(v[i+1])-m, -700))
	}
	if i < len(v) {
		s0 += expReduced(max(float64(v[i])-m, -700))
	}
	return s0 + s1
}

// expReduced is e^x for −700 ≤ x ≤ 0; small enough to be inlined.
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
