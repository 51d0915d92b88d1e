package cpu

// The NEON versions of floatdot.go's loops (floatdot_arm64.s), bit-identical
// to them: the gated delta rule's decode runs on axpyRows and deltaRow.

//go:noescape
func dotBlocksNEON(a, b *float32, blocks int) float32

//go:noescape
func axpyBlocksNEON(o, v *float32, w float32, blocks int)

//go:noescape
func deltaRowBlocksNEON(row, u, o *float32, e, k, q float32, blocks int)

//go:noescape
func axpyRowsBlocksNEON(o, m, c *float32, rows, stride, chunks int)

// dotNEON is dot with the whole eights in two NEON registers of lanes.
func dotNEON(a, b []float32) float32 {
	n := len(a) &^ 7
	b = b[:len(a)]
	s := float32(0)
	if n > 0 {
		s = dotBlocksNEON(&a[0], &b[0], n/8)
	}
	return dotTail(s, a[n:], b[n:])
}

// axpyNEON is axpy eight elements at a time.
func axpyNEON(o, v []float32, w float32) {
	n := len(o) &^ 7
	v = v[:len(o)]
	if n > 0 {
		axpyBlocksNEON(&o[0], &v[0], w, n/8)
	}
	axpy(o[n:], v[n:], w)
}

// deltaRowNEON is deltaRow eight elements at a time.
func deltaRowNEON(row, u, o []float32, e, k, q float32) {
	n := len(row) &^ 7
	u, o = u[:len(row)], o[:len(row)]
	if n > 0 {
		deltaRowBlocksNEON(&row[0], &u[0], &o[0], e, k, q, n/8)
	}
	deltaRow(row[n:], u[n:], o[n:], e, k, q)
}

// axpyRowsNEON is axpyRows sixteen columns at a time, their sums held in
// registers down the rows.
func axpyRowsNEON(o, m, c []float32, stride int) {
	n := len(o) &^ 15
	if n > 0 && len(c) > 0 {
		m = m[:(len(c)-1)*stride+len(o)]
		axpyRowsBlocksNEON(&o[0], &m[0], &c[0], len(c), 4*stride, n/16)
	}
	axpyRowsFrom(o, m, c, stride, n)
}
