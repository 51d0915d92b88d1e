package model

import "github.com/splash-inference/splash/metal"

// sharedMatMuls computes several products of one input x in one backend
// call where the backend can share their work (metal.SharedInputMatMul:
// quantizing x once, one parallel call), else one MatMul each. scratch
// holds the products for the call, so ps itself does not escape.
func sharedMatMuls(be metal.Backend, scratch []metal.Product, x []float32, rows int, ps ...metal.Product) {
	if sm, ok := be.(metal.SharedInputMatMul); ok {
		n := copy(scratch, ps)
		sm.MatMuls(x, rows, scratch[:n])
		return
	}
	for _, p := range ps {
		be.MatMul(p.Out, x, rows, p.W)
	}
}
