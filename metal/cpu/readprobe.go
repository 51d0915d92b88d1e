package cpu

// readProbe sums every 8-byte word of b, so that timing it measures memory
// read bandwidth (the bench-kernels probe compares kernel throughput with
// it). The sum is returned only to keep the loads from being optimised away.
func readProbe(b []byte) uint64 {
	n := len(b) &^ 127
	s := readProbeBlocks(b[:n])
	for _, v := range b[n:] {
		s += uint64(v)
	}
	return s
}

// readProbeGo is the portable loop: eight independent sums over 64 bytes.
func readProbeGo(b []byte) uint64 {
	var s0, s1, s2, s3, s4, s5, s6, s7 uint64
	w := u64s(b)
	for i := 0; i+8 <= len(w); i += 8 {
		v := w[i : i+8 : i+8]
		s0 += v[0]
		s1 += v[1]
		s2 += v[2]
		s3 += v[3]
		s4 += v[4]
		s5 += v[5]
		s6 += v[6]
		s7 += v[7]
	}
	return s0 + s1 + s2 + s3 + s4 + s5 + s6 + s7
}
