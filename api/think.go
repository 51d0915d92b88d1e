package api

import "strings"

const (
	thinkOpen  = "<think>"
	thinkClose = "</think>"
)

// thinkPhase is where a thinkSplitter is in the model's output.
type thinkPhase int

const (
	phaseStart  thinkPhase = iota // nothing but whitespace seen: a <think> may still open
	phaseThink                    // inside the reasoning block
	phaseAnswer                   // after the block (or there was none)
)

// thinkSplitter separates a model's <think>…</think> reasoning from its
// answer in streamed text. Tags may arrive split across chunks: a tail that
// could begin a tag is held back until the next chunk decides it. Only one
// block, at the start of the output, is reasoning; a "<think>" later in the
// answer is ordinary text. Whitespace right after each tag is dropped, as
// models put newlines there that belong to neither part.
type thinkSplitter struct {
	phase   thinkPhase
	pending string // held-back text: a possible tag prefix
	trim    bool   // drop leading whitespace of the current part
}

// newThinkSplitter starts in the reasoning block when the prompt already
// opened it (templates that end the prompt with "<think>").
func newThinkSplitter(startsInThink bool) *thinkSplitter {
	if startsInThink {
		return &thinkSplitter{phase: phaseThink, trim: true}
	}
	return &thinkSplitter{phase: phaseStart}
}

// feed consumes the next chunk and returns the reasoning and answer text
// that are now certain.
func (t *thinkSplitter) feed(chunk string) (reasoning, answer string) {
	s := t.pending + chunk
	t.pending = ""
	var r, a strings.Builder
	for s != "" {
		switch t.phase {
		case phaseStart:
			lead := strings.TrimLeft(s, " \t\r\n")
			switch {
			case strings.HasPrefix(lead, thinkOpen):
				s = lead[len(thinkOpen):]
				t.phase, t.trim = phaseThink, true
			case strings.HasPrefix(thinkOpen, lead):
				t.pending = s // whitespace or a partial "<think>": undecided
				return r.String(), a.String()
			default:
				t.phase = phaseAnswer
			}
		case phaseThink:
			i := strings.Index(s, thinkClose)
			if i < 0 {
				keep := partialSuffix(s, thinkClose)
				t.emit(&r, s[:len(s)-keep])
				t.pending = s[len(s)-keep:]
				return r.String(), a.String()
			}
			t.emit(&r, s[:i])
			s = s[i+len(thinkClose):]
			t.phase, t.trim = phaseAnswer, true
		case phaseAnswer:
			t.emit(&a, s)
			s = ""
		}
	}
	return r.String(), a.String()
}

// flush ends the stream: held-back text is released as what it was.
func (t *thinkSplitter) flush() (reasoning, answer string) {
	s := t.pending
	t.pending = ""
	var r, a strings.Builder
	if t.phase == phaseThink {
		t.emit(&r, s)
	} else {
		t.emit(&a, s)
	}
	return r.String(), a.String()
}

// emit appends s to the current part, dropping leading whitespace while
// trim is on.
func (t *thinkSplitter) emit(b *strings.Builder, s string) {
	if t.trim {
		s = strings.TrimLeft(s, " \t\r\n")
		if s == "" {
			return
		}
		t.trim = false
	}
	b.WriteString(s)
}

// partialSuffix is the length of the longest proper suffix of s that is a
// prefix of tag.
func partialSuffix(s, tag string) int {
	for n := min(len(s), len(tag)-1); n > 0; n-- {
		if strings.HasSuffix(s, tag[:n]) {
			return n
		}
	}
	return 0
}
