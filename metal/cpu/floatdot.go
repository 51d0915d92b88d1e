package cpu

// Portable float32 inner loops of attention and of f32/f16/bf16 matrix
// products: the references the SIMD versions match bit for bit. Explicit
// float32 conversions forbid fused multiply-adds, which Go may otherwise
// emit (arm64 always, amd64 with GOAMD64=v3).

// dot returns Σ a[i]·b[i] accumulated in float32 in a fixed order: eight
// partial sums over i mod 8, added pairwise ((s0+s4)+(s2+s6))+((s1+s5)+(s3+s7)),
// then the tail in order. The order depends only on len(a), which keeps every
// caller batch-invariant.
func dot(a, b []float32) float32 {
	n := len(a)
	b = b[:n]
	var s0, s1, s2, s3, s4, s5, s6, s7 float32
	i := 0
	for ; i+8 <= n; i += 8 {
		aa, bb := a[i:i+8:i+8], b[i:i+8:i+8]
		s0 += float32(aa[0] * bb[0])
		s1 += float32(aa[1] * bb[1])
		s2 += float32(aa[2] * bb[2])
		s3 += float32(aa[3] * bb[3])
		s4 += float32(aa[4] * bb[4])
		s5 += float32(aa[5] * bb[5])
		s6 += float32(aa[6] * bb[6])
		s7 += float32(aa[7] * bb[7])
	}
	return dotTail(((s0+s4)+(s2+s6))+((s1+s5)+(s3+s7)), a[i:], b[i:])
}

// dotTail adds the products of the elements after the last whole eight.
func dotTail(s float32, a, b []float32) float32 {
	b = b[:len(a)]
	for i := range a {
		s += float32(a[i] * b[i])
	}
	return s
}

// deltaRow is the gated delta rule's update of one row of a state and its
// share of the output: row[j] = e·row[j] + k·u[j], then o[j] += q·row[j],
// each product rounded before its add (deltaRecurrent).
func deltaRow(row, u, o []float32, e, k, q float32) {
	u, o = u[:len(row)], o[:len(row)]
	for j := range row {
		r := float32(e*row[j]) + float32(k*u[j])
		row[j] = r
		o[j] += float32(q * r)
	}
}

// axpyRows adds a combination of rows of m to o: axpy(o, row i, c[i]) for
// each i in order, row i being m[i·stride:][:len(o)], so o[j] += c[i]·m[i][j]
// one product at a time, each rounded before its add. It is the gated
// delta rule's reading of a state by a key (o = Sᵀk from o = 0) and its
// chunked form's products of small matrices.
func axpyRows(o, m, c []float32, stride int) { axpyRowsFrom(o, m, c, stride, 0) }

// axpyRowsFrom is axpyRows for the columns from c0 on.
func axpyRowsFrom(o, m, c []float32, stride, c0 int) {
	for i, ci := range c {
		axpy(o[c0:], m[i*stride+c0:i*stride+len(o)], ci)
	}
}

// axpy sets o[j] += w·v[j], each product rounded before the add.
func axpy(o, v []float32, w float32) {
	v = v[:len(o)]
	for j := range o {
		o[j] += float32(w * v[j])
	}
}
