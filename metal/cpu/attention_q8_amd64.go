package cpu

//go:noescape
func scoresPairQ8AVX512(out0, out1, q0, q1 *float32, k *int8, stride, groups, blocks int, scale float32, sc *uint16, pf *int8)

//go:noescape
func weightedSumPairQ8AVX512(o0, o1 *float32, v *int8, stride int, w0, w1 *float32, n, chunks int, pf *int8, sc *uint16, sstride int)

//go:noescape
func scoresPairQ8TabAVX512(out0, out1, q0, q1 *float32, tab *decodeStretch, n, blocks int, scale float32, soff int)

//go:noescape
func weightedSumPairQ8TabAVX512(o0, o1 *float32, tab *decodeStretch, n int, w0, w1 *float32, chunks, stride, soff, sstride int)

//go:noescape
func scoresPairQ8AVX2(out0, out1, q0, q1 *float32, k *int8, stride, groups, blocks int, scale float32, sc *uint16, pf *int8)

//go:noescape
func weightedSumPairQ8AVX2(o0, o1 *float32, v *int8, stride int, w0, w1 *float32, n, chunks int, pf *int8, sc *uint16, sstride int)

//go:noescape
func scoresPairQ8TabAVX2(out0, out1, q0, q1 *float32, tab *decodeStretch, n, blocks int, scale float32, soff int)

//go:noescape
func weightedSumPairQ8TabAVX2(o0, o1 *float32, tab *decodeStretch, n int, w0, w1 *float32, chunks, stride, soff, sstride int)
