package cpu

//go:noescape
func quantGroupsAVX2(x *float32, q *int8, scale *float32, sum *int32, groups, qstep, sstep int, mul int32)

// quantGroupsAVX2Slices is quantGroupsRef in AVX2 (actquant_amd64.s).
func quantGroupsAVX2Slices(x []float32, q []int8, scale []float32, sum []int32, qstep, sstep int, mul int32) {
	n := len(x) / 32
	if n == 0 {
		return
	}
	_, _, _ = q[(n-1)*qstep+31], scale[(n-1)*sstep], sum[(n-1)*sstep]
	quantGroupsAVX2(&x[0], &q[0], &scale[0], &sum[0], n, qstep, 4*sstep, mul)
}
