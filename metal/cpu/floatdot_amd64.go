package cpu

//go:noescape
func dotBlocksAVX2(a, b *float32, blocks int) float32

//go:noescape
func axpyBlocksAVX2(o, v *float32, w float32, blocks int)

//go:noescape
func deltaRowBlocksAVX2(row, u, o *float32, e, k, q float32, blocks int)

// deltaRowAVX2 is deltaRow eight elements at a time.
func deltaRowAVX2(row, u, o []float32, e, k, q float32) {
	n := len(row) &^ 7
	u, o = u[:len(row)], o[:len(row)]
	if n > 0 {
		deltaRowBlocksAVX2(&row[0], &u[0], &o[0], e, k, q, n/8)
	}
	deltaRow(row[n:], u[n:], o[n:], e, k, q)
}

//go:noescape
func axpyRowsBlocksAVX2(o, m, c *float32, rows, stride, chunks int)

// axpyRowsAVX2 is axpyRows 32 columns at a time, their sums held in
// registers down the rows.
func axpyRowsAVX2(o, m, c []float32, stride int) {
	n := len(o) &^ 31
	if n > 0 && len(c) > 0 {
		m = m[:(len(c)-1)*stride+len(o)]
		axpyRowsBlocksAVX2(&o[0], &m[0], &c[0], len(c), 4*stride, n/32)
	}
	axpyRowsFrom(o, m, c, stride, n)
}

//go:noescape
func axpyRowsBlocksAVX512(o, m, c *float32, rows, stride, chunks int)

// axpyRowsAVX512 is axpyRows 64 columns at a time in AVX-512 registers,
// the rest by axpyRowsAVX2.
func axpyRowsAVX512(o, m, c []float32, stride int) {
	n := len(o) &^ 63
	if n > 0 && len(c) > 0 {
		m = m[:(len(c)-1)*stride+len(o)]
		axpyRowsBlocksAVX512(&o[0], &m[0], &c[0], len(c), 4*stride, n/64)
	}
	if n < len(o) && len(c) > 0 {
		axpyRowsAVX2(o[n:], m[n:], c, stride)
	}
}

// dotAVX2 is dot with the whole eights in one AVX2 register of lanes.
func dotAVX2(a, b []float32) float32 {
	n := len(a) &^ 7
	b = b[:len(a)]
	s := float32(0)
	if n > 0 {
		s = dotBlocksAVX2(&a[0], &b[0], n/8)
	}
	return dotTail(s, a[n:], b[n:])
}

// axpyAVX2 is axpy eight elements at a time.
func axpyAVX2(o, v []float32, w float32) {
	n := len(o) &^ 7
	v = v[:len(o)]
	if n > 0 {
		axpyBlocksAVX2(&o[0], &v[0], w, n/8)
	}
	axpy(o[n:], v[n:], w)
}
