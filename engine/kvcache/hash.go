package kvcache

// rootHash is the parent hash of a sequence's first block.
const rootHash uint64 = 0x9e3779b97f4a7c15

// chainHash names a full block by its parent's hash and its token ids, so
// equal hashes mean (barring collisions, which Reuse detects) equal prefixes.
func chainHash(parent uint64, tokens []int32) uint64 {
	h := mix64(parent ^ 0x6a09e667f3bcc909)
	for _, t := range tokens {
		h = mix64(h ^ uint64(uint32(t)))
	}
	return h
}

// mix64 is the splitmix64 finalizer: a cheap bijection that spreads every
// input bit over the output.
func mix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}
