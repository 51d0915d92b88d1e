package cpu

// quantize fills a with the rows of x (rows×cols, cols a multiple of 32),
// group by group with groups (the kernel set's quantGroups).
func (a *qacts) quantize(x []float32, rows, cols int, groups quantGroupsFunc) {
	a.size(rows, cols)
	a.quantizeGroups(x, rows, cols, groups, 0, cols/32)
}

// quantize fills t with the rows of x (rows×cols), with the bias of
// weights read as u = q + 2^shift.
func (t *tiledActs) quantize(x []float32, rows, cols int, groups quantGroupsFunc, shift uint) {
	t.size(rows, cols)
	t.quantizeGroups(x, rows, cols, groups, shift, 0, cols/32)
}
