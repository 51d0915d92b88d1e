package cpu

//go:noescape
func dequantKVAVX512(dst *float32, q *int8, scales *uint16, groups int)

//go:noescape
func dequantKVAVX2(dst *float32, q *int8, scales *uint16, groups int)

//go:noescape
func quantizeKVAVX512(q *int8, scales *uint16, x *float32, groups int)
