//go:build amd64 || arm64

package cpu

import "github.com/splash-inference/splash/metal"

// dequantKVSlices is metal.DequantizeKV with the whole groups in asm.
func dequantKVSlices(asm func(dst *float32, q *int8, scales *uint16, groups int), dst []float32, q []int8, scales []uint16) {
	g := len(dst) / metal.KVGroup
	if g > 0 {
		_, _ = q[g*metal.KVGroup-1], scales[g-1] // bounds of every access
		asm(&dst[0], &q[0], &scales[0], g)
	}
	if n := g * metal.KVGroup; n < len(dst) {
		metal.DequantizeKV(dst[n:], q[n:], scales[g:])
	}
}

// quantizeKVSlices is metal.QuantizeKV in asm (whole groups; x is).
func quantizeKVSlices(asm func(q *int8, scales *uint16, x *float32, groups int), q []int8, scales []uint16, x []float32) {
	g := len(x) / metal.KVGroup
	if g == 0 {
		return
	}
	_, _ = q[g*metal.KVGroup-1], scales[g-1] // bounds of every access
	asm(&q[0], &scales[0], &x[0], g)
}
