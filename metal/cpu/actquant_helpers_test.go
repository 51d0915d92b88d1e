package cpu

// quantize fills a with the rows of x (rows×cols, cols a multiple of 32),
// group by group with groups (the kernel set's quantGroups).
func (a *qacts) quantize(x []float32, rows, cols int, groups func(x []float32, q []int8, scale []float32, sum []int32)) {
	a.size(rows, cols)
	a.quantizeGroups(x, rows, cols, groups, 0, cols/32)
}

// pack fills t from the row-major activations a (rows×cols), with the
// bias of weights read as u = q + 2^shift.
func (t *tiledActs) pack(a *qacts, rows, cols int, shift uint) {
	t.size(rows, cols)
	t.packGroups(a, rows, cols, shift, 0, cols/32)
}
