package api

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
	next              int // calls announced so far
}

func newOutputSplitter(startsInThink, tools bool) *outputSplitter {
	s := &outputSplitter{think: newThinkSplitter(startsInThink)}
	if tools {
		s.inThink, s.inAnswer = &toolSplitter{next: &s.next}, &toolSplitter{next: &s.next}
	}
	return s
}

// feed takes the next chunk of output (final: the last one) and returns
// the reasoning and answer text decided so far and the progress of calls
// (announced, arguments streamed, completed), in order.
func (s *outputSplitter) feed(chunk string, final bool) (reasoning, answer string, calls []callEvent) {
	reasoning, answer = s.think.feed(chunk)
	if final {
		r2, a2 := s.think.flush()
		reasoning, answer = reasoning+r2, answer+a2
	}
	if s.inAnswer == nil {
		return reasoning, answer, nil
	}
	reasoning, calls = s.inThink.feed(reasoning, final)
	answer, more := s.inAnswer.feed(answer, final)
	return reasoning, answer, append(calls, more...)
}

// feedAll splits a whole output: text and the completed calls.
func (s *outputSplitter) feedAll(output string) (reasoning, answer string, calls []chatToolCall) {
	reasoning, answer, events := s.feed(output, true)
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
