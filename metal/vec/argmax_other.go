//go:build !amd64

package vec

// haveArgmaxAsm reports that there are no kernels here: Argmax runs
// argmaxRef.
func haveArgmaxAsm() bool { return false }

func maxAsm(p *float32, n int) float32 { panic("vec: no assembly") }

func indexAsm(p *float32, n int, m float32) int { panic("vec: no assembly") }
