package cpu

//go:noescape
func dotPeakVNNI(iters int)

//go:noescape
func dotPeakAVX2(iters int)

//go:noescape
func dotPeakAVXVNNI(iters int)

// Operations (two per multiply-add) of one iteration of each peak loop.
const (
	dotPeakVNNIOps    = 12 * 64 * 2
	dotPeakAVX2Ops    = 12 * 32 * 2
	dotPeakAVXVNNIOps = 12 * 32 * 2
)
