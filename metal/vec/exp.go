package vec

import "math"

// ExpWeights sets w[i] = e^((x[i]−m)·invT) for every x[i], and returns the
// weights' sum in float64: a softmax's numerators over a vocabulary of
// logits x, m their max, invT the inverse temperature. A weight whose
// power is below expMin, −Inf or NaN (a banned token, or all logits −Inf)
// is 0. Each weight is computed in float32 exactly as expWeight does it,
// separate multiplies and adds (no fused multiply-add), so the assembly
// gives the same bits; the sum adds lane j of eight the weights j mod 8 in
// order, then folds the lanes as ((0+4)+(2+6))+((1+5)+(3+7)), then adds
// the last len(x) mod 8 in order. The sampler draws from them for every
// token of a sampled request, over the whole vocabulary, so their speed is
// a share of every decode step (BenchmarkExpWeights).
func ExpWeights(w, x []float32, m, invT float32) float64 {
	w = w[:len(x)]
	n := len(x) &^ 7
	var s float64
	switch {
	case n == 0:
	case haveExpAsm():
		s = expWeightsAsm(&w[0], &x[0], n, m, invT)
	default:
		s = expWeightsRef(w[:n], x[:n], m, invT)
	}
	for i := n; i < len(x); i++ {
		v := expWeight(x[i], m, invT)
		w[i] = v
		s += float64(v)
	}
	return s
}

// expWeightsRef is ExpWeights in Go over whole eights (len(x) a multiple
// of 8): the reference the assembly matches bit for bit.
func expWeightsRef(w, x []float32, m, invT float32) float64 {
	var acc [8]float64
	for i := 0; i+8 <= len(x); i += 8 {
		for j := range 8 {
			v := expWeight(x[i+j], m, invT)
			w[i+j] = v
			acc[j] += float64(v)
		}
	}
	return ((acc[0] + acc[4]) + (acc[2] + acc[6])) + ((acc[1] + acc[5]) + (acc[3] + acc[7]))
}

// The exponential's constants: e^d = 2^k·e^r with k = round(d·log2e) and
// r = d − k·ln2 (ln2 split in a high part exact in float32 products and a
// low one), e^r by its degree-6 Taylor polynomial on |r| ≤ ln2/2 (relative
// error below 1.2e-7). expMin keeps 2^k a normal float32.
const (
	expMin    = -87
	expLog2e  = 1.44269504088896341
	expLn2Hi  = 0.693359375
	expLn2Lo  = -2.12194440e-4
	expRound  = 12582912 // 1.5·2^23: adding and subtracting it rounds to an integer
	expC2     = 1.0 / 2
	expC3     = 1.0 / 6
	expC4     = 1.0 / 24
	expC5     = 1.0 / 120
	expC6     = 1.0 / 720
	expExpBia = 127
)

// expWeight is one weight of ExpWeights, every operation a float32 one.
func expWeight(x, m, invT float32) float32 {
	d := (x - m) * invT
	if !(d >= expMin) {
		return 0
	}
	// Every product is converted to float32 before it is added: Go may
	// otherwise fuse a multiply and an add, which the assembly does not.
	k := float32(d*expLog2e) + expRound
	k -= expRound
	r := d - float32(k*expLn2Hi)
	r -= float32(k * expLn2Lo)
	p := float32(expC6*r) + expC5
	p = float32(p*r) + expC4
	p = float32(p*r) + expC3
	p = float32(p*r) + expC2
	p = float32(p*r) + 1
	p = float32(p*r) + 1
	return p * math.Float32frombits(uint32(int32(k)+expExpBia)<<23)
}
