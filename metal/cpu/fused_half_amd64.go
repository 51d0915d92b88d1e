package cpu

//go:noescape
func scoresPairHalfAVX512(out0, out1, q0, q1 *float32, k *uint16, stride, groups, blocks int, scale float32, pf *uint16)

//go:noescape
func weightedSumPairHalfAVX512(o0, o1 *float32, v *uint16, stride int, w0, w1 *float32, n, chunks int, pf *uint16)

//go:noescape
func scoresPairHalfTabAVX512(out0, out1, q0, q1 *float32, tab *decodeStretch, n, blocks int, scale float32)

//go:noescape
func weightedSumPairHalfTabAVX512(o0, o1 *float32, tab *decodeStretch, n int, w0, w1 *float32, chunks, stride int)

//go:noescape
func scoresPairHalfTabAVX2(out0, out1, q0, q1 *float32, tab *decodeStretch, n, blocks int, scale float32)

//go:noescape
func weightedSumPairHalfTabAVX2(o0, o1 *float32, tab *decodeStretch, n int, w0, w1 *float32, chunks, stride int)

//go:noescape
func scoresPairHalfAVX2(out0, out1, q0, q1 *float32, k *uint16, stride, groups, blocks int, scale float32, pf *uint16)

//go:noescape
func weightedSumPairHalfAVX2(o0, o1 *float32, v *uint16, stride int, w0, w1 *float32, n, chunks int, pf *uint16)

//go:noescape
func scoresHeadsHalf2AVX512(out, q *[6]*float32, tab *halfGroup, stride, qbytes, obytes int, scale float32)

//go:noescape
func scoresHeadsHalf4AVX512(out, q *[6]*float32, tab *halfGroup, stride, qbytes, obytes int, scale float32)

//go:noescape
func scoresHeadsHalf6AVX512(out, q *[6]*float32, tab *halfGroup, stride, qbytes, obytes int, scale float32)
