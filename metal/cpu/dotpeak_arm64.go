package cpu

//go:noescape
func dotPeakSDOT(iters int)

// dotPeakSDOTOps is the operations (two per multiply-add) of one
// iteration of dotPeakSDOT.
const dotPeakSDOTOps = 12 * 16 * 2
