package api

import "strings"

// outputSplitter splits one choice's output, as it streams, into reasoning,
// answer text and tool calls: first the <think> block, then the
// <tool_call> markup of the answer — and of the reasoning too, because
// models sometimes make a call before closing </think> (vLLM #39056); such
// a call is returned as a call and its markup leaves the reasoning. Every
// dialect's writer, streaming or not, goes through one of these, so they
// all agree on what is reasoning, text and call.
type outputSplitter struct {
	think *thinkSplitter
	// inThink and inAnswer parse calls in each part; nil when the request
	// offered no tools (the markup is then plain text).
	inThink, inAnswer *toolSplitter
	next              int  // calls announced so far
	thinkOver         bool // answer text has begun: the reasoning is over
}

func newOutputSplitter(startsInThink, tools bool) *outputSplitter {
	s := &outputSplitter{think: newThinkSplitter(startsInThink)}
	if tools {
		s.inThink, s.inAnswer = &toolSplitter{next: &s.next}, &toolSplitter{next: &s.next}
	}
	return s
}

// feed takes the next chunk of output (final: the last one) and returns
// what it brings, in output order: reasoning text, answer text and the
// progress of calls (announced, arguments streamed, completed).
func (s *outputSplitter) feed(chunk string, final bool) []piece {
	reasoning, answer := s.think.feed(chunk)
	if final {
		r2, a2 := s.think.flush()
		reasoning, answer = reasoning+r2, answer+a2
	}
	if s.inAnswer == nil {
		var out []piece
		if reasoning != "" {
			out = append(out, piece{reasoning: true, text: reasoning})
		}
		if answer != "" {
			out = append(out, piece{text: answer})
		}
		return out
	}
	// Once the answer has begun the reasoning is over, and so is a call
	// left open inside it (its closing tag never came): end it before any
	// answer text or call, so the two never interleave.
	var out []piece
	endThink := final || (answer != "" && !s.thinkOver)
	if !s.thinkOver {
		out = s.inThink.feed(out, reasoning, true, endThink)
		s.thinkOver = endThink
	} else if reasoning != "" {
		out = append(out, piece{reasoning: true, text: reasoning})
	}
	return s.inAnswer.feed(out, answer, false, final)
}

// joined flattens pieces for writers that send them together (a Chat
// Completions chunk): all reasoning, all answer text, the call events.
func joined(pieces []piece) (reasoning, answer string, calls []callEvent) {
	var r, a strings.Builder
	for _, p := range pieces {
		switch {
		case p.call != nil:
			calls = append(calls, *p.call)
		case p.reasoning:
			r.WriteString(p.text)
		default:
			a.WriteString(p.text)
		}
	}
	return r.String(), a.String(), calls
}

// feedAll splits a whole output: text and the completed calls.
func (s *outputSplitter) feedAll(output string) (reasoning, answer string, calls []chatToolCall) {
	reasoning, answer, events := joined(s.feed(output, true))
	for _, ev := range events {
		if ev.done != nil {
			calls = append(calls, *ev.done)
		}
	}
	return reasoning, answer, calls
}

// calls is how many calls the choice has completed so far.
func (s *outputSplitter) calls() int {
	if s.inAnswer == nil {
		return 0
	}
	return s.inThink.calls + s.inAnswer.calls
}

// finishReason is the OpenAI finish reason: "tool_calls" when the choice
// ended naturally after making calls.
func (s *outputSplitter) finishReason(reason FinishReason) string {
	if s.calls() > 0 && reason == FinishStop {
		return "tool_calls"
	}
	return string(reason)
}
