package tokenizer

// byteLevel is GPT-2's reversible map between bytes and printable runes:
// printable Latin-1 bytes map to themselves, the others to U+0100 onwards,
// so that every byte string is a string of visible characters.
type byteLevel struct {
	toRune [256]rune
	toByte map[rune]byte
}

func newByteLevel() *byteLevel {
	b := &byteLevel{toByte: make(map[rune]byte, 256)}
	n := 0
	for c := 0; c < 256; c++ {
		var r rune
		if c >= '!' && c <= '~' || c >= 0xA1 && c <= 0xAC || c >= 0xAE && c <= 0xFF {
			r = rune(c)
		} else {
			r = rune(256 + n)
			n++
		}
		b.toRune[c] = r
		b.toByte[r] = byte(c)
	}
	return b
}
