package cpu

//go:noescape
func quantGroupsNEON(x *float32, q *int8, scale *float32, sum *int32, groups int)

// quantGroupsNEONSlices is quantGroupsRef in NEON (actquant_arm64.s).
func quantGroupsNEONSlices(x []float32, q []int8, scale []float32, sum []int32) {
	n := len(x) / 32
	if n == 0 {
		return
	}
	_, _, _ = q[32*n-1], scale[n-1], sum[n-1]
	quantGroupsNEON(&x[0], &q[0], &scale[0], &sum[0], n)
}
