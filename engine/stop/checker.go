package stop

import "strings"

// Checker finds stop strings in streamed text. See the package doc.
type Checker struct {
	stops   []string
	held    string // a tail that is a proper prefix of some stop string
	stopped bool
}

// NewChecker returns a Checker for the given stop strings; empty strings are
// ignored.
func NewChecker(stops []string) *Checker {
	c := &Checker{}
	for _, s := range stops {
		if s != "" {
			c.stops = append(c.stops, s)
		}
	}
	return c
}

// Push adds newly detokenized text. It returns the text that is safe to
// emit now and whether a stop string has matched; after a match the
// sequence is over and further pushes return nothing.
func (c *Checker) Push(text string) (emit string, stopped bool) {
	if c.stopped {
		return "", true
	}
	buf := c.held + text
	if i := c.firstMatch(buf); i >= 0 {
		c.held, c.stopped = "", true
		return buf[:i], true
	}
	keep := c.pendingSuffix(buf)
	c.held = buf[len(buf)-keep:]
	return buf[:len(buf)-keep], false
}

// Flush returns the text still held back, for a sequence that ended for
// another reason (a stop token, length).
func (c *Checker) Flush() string {
	h := c.held
	c.held = ""
	return h
}

// firstMatch returns the earliest index where any stop string occurs.
func (c *Checker) firstMatch(buf string) int {
	first := -1
	for _, s := range c.stops {
		if i := strings.Index(buf, s); i >= 0 && (first < 0 || i < first) {
			first = i
		}
	}
	return first
}

// pendingSuffix returns the length of the longest tail of buf that is a
// proper prefix of a stop string: text that a later piece might complete.
// The tail starts where a stop string starts, so it never splits a UTF-8
// character.
func (c *Checker) pendingSuffix(buf string) int {
	longest := 0
	for _, s := range c.stops {
		for n := min(len(s)-1, len(buf)); n > longest; n-- {
			if strings.HasSuffix(buf, s[:n]) {
				longest = n
				break
			}
		}
	}
	return longest
}
