package cpu

//go:noescape
func dequantKVNEON(dst *float32, q *int8, scales *uint16, groups int)

//go:noescape
func quantizeKVNEON(q *int8, scales *uint16, x *float32, groups int)
