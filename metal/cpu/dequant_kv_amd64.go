package cpu

import "github.com/splash-inference/splash/metal"

//go:noescape
func dequantKVAVX512(dst *float32, q *int8, scales *uint16, groups int)

//go:noescape
func dequantKVAVX2(dst *float32, q *int8, scales *uint16, groups int)

//go:noescape
func quantizeKVAVX512(q *int8, scales *uint16, x *float32, groups int)

// quantizeKVSlices is metal.QuantizeKV in asm (whole groups; x is).
func quantizeKVSlices(q []int8, scales []uint16, x []float32) {
	g := len(x) / metal.KVGroup
	if g == 0 {
		return
	}
	_, _ = q[g*metal.KVGroup-1], scales[g-1] // bounds of every access
	quantizeKVAVX512(&q[0], &scales[0], &x[0], g)
}
