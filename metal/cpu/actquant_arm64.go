package cpu

//go:noescape
func quantGroupsNEON(x *float32, q *int8, scale *float32, sum *int32, groups, qstep, sstep int, mul int32)

// quantGroupsNEONSlices is quantGroupsRef in NEON (actquant_arm64.s).
func quantGroupsNEONSlices(x []float32, q []int8, scale []float32, sum []int32, qstep, sstep int, mul int32) {
	n := len(x) / 32
	if n == 0 {
		return
	}
	_, _, _ = q[(n-1)*qstep+31], scale[(n-1)*sstep], sum[(n-1)*sstep]
	quantGroupsNEON(&x[0], &q[0], &scale[0], &sum[0], n, qstep, 4*sstep, mul)
}
