package grammar

// String lexer phases. strOpen waits for the opening quote; the others are
// inside the string. UTF-8 is validated byte by byte (the uN phases count
// the continuation bytes still due; the suffixed ones restrict the next byte
// to exclude overlong forms, surrogates and code points above U+10FFFF).
const (
	strOpen uint8 = iota
	strBody
	strEsc
	strHex1 // one hex digit of \uXXXX still due
	strHex2
	strHex3
	strHex4
	strU1
	strU2
	strU2E0 // after E0: next in A0..BF
	strU2ED // after ED: next in 80..9F
	strU3
	strU3F0 // after F0: next in 90..BF
	strU3F4 // after F4: next in 80..8F
	strPhases

	strClosed uint8 = 0xfe // closing quote consumed
	strFail   uint8 = 0xff
)

// strNext is the string lexer's transition from phase p (not strOpen) on b.
func strNext(p, b uint8) uint8 {
	switch p {
	case strBody:
		switch {
		case b == '"':
			return strClosed
		case b == '\\':
			return strEsc
		case b < 0x20:
			return strFail
		case b < 0x80:
			return strBody
		case b >= 0xc2 && b <= 0xdf:
			return strU1
		case b == 0xe0:
			return strU2E0
		case b == 0xed:
			return strU2ED
		case b >= 0xe1 && b <= 0xef:
			return strU2
		case b == 0xf0:
			return strU3F0
		case b >= 0xf1 && b <= 0xf3:
			return strU3
		case b == 0xf4:
			return strU3F4
		}
		return strFail
	case strEsc:
		switch b {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			return strBody
		case 'u':
			return strHex4
		}
		return strFail
	case strHex1, strHex2, strHex3, strHex4:
		if !isHex(b) {
			return strFail
		}
		if p == strHex1 {
			return strBody
		}
		return p - 1
	case strU1, strU2, strU3:
		if b < 0x80 || b > 0xbf {
			return strFail
		}
		return map3(p)
	case strU2E0:
		return inRange(b, 0xa0, 0xbf, strU1)
	case strU2ED:
		return inRange(b, 0x80, 0x9f, strU1)
	case strU3F0:
		return inRange(b, 0x90, 0xbf, strU2)
	case strU3F4:
		return inRange(b, 0x80, 0x8f, strU2)
	}
	return strFail
}

// map3 is the phase after one continuation byte in strU1..strU3.
func map3(p uint8) uint8 {
	switch p {
	case strU3:
		return strU2
	case strU2:
		return strU1
	}
	return strBody
}

func inRange(b, lo, hi, next uint8) uint8 {
	if b < lo || b > hi {
		return strFail
	}
	return next
}

func isHex(b byte) bool {
	return b >= '0' && b <= '9' || b >= 'a' && b <= 'f' || b >= 'A' && b <= 'F'
}

// Number lexer phases, following the JSON number grammar
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
const (
	numStart uint8 = iota
	numMinus
	numZero
	numInt
	numDot
	numFrac
	numExp
	numExpSign
	numExpDigits

	numFail uint8 = 0xff
)

// numFinal reports whether a number may end in phase p.
func numFinal(p uint8) bool {
	return p == numZero || p == numInt || p == numFrac || p == numExpDigits
}

// numNext is the number lexer's transition. Integers stop before a fraction
// or exponent: they are generated in plain integer form.
func numNext(p, b uint8, integer bool) uint8 {
	digit := b >= '0' && b <= '9'
	switch p {
	case numStart:
		if b == '-' {
			return numMinus
		}
		fallthrough
	case numMinus:
		switch {
		case b == '0':
			return numZero
		case digit:
			return numInt
		}
	case numInt:
		if digit {
			return numInt
		}
		fallthrough
	case numZero:
		if integer {
			return numFail
		}
		switch b {
		case '.':
			return numDot
		case 'e', 'E':
			return numExp
		}
	case numDot:
		if digit {
			return numFrac
		}
	case numFrac:
		if digit {
			return numFrac
		}
		if b == 'e' || b == 'E' {
			return numExp
		}
	case numExp:
		if b == '+' || b == '-' {
			return numExpSign
		}
		fallthrough
	case numExpSign, numExpDigits:
		if digit {
			return numExpDigits
		}
	}
	return numFail
}
