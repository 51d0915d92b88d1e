//go:build !amd64

package vec

// haveExpAsm reports that there is no kernel here: ExpWeights runs in Go.
func haveExpAsm() bool { return false }

func expWeightsAsm(w, x *float32, n int, m, invT float32) float64 { panic("vec: no assembly") }
