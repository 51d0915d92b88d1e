package api

import (
	"reflect"
	"strings"
	"testing"
)

// splitOutput feeds output in the given chunks and joins what comes out:
// the completed calls, after checking that the streamed announcements and
// argument deltas of each call add up to it; deltas counts argument deltas
// sent before calls completed.
func splitOutput(t *testing.T, startsInThink bool, chunks []string) (reasoning, answer string, calls []chatToolCall, finish string, deltas int) {
	t.Helper()
	s := newOutputSplitter(startsInThink, true)
	streamed := map[int]*chatToolCall{}
	handle := func(events []callEvent) {
		for _, e := range events {
			if e.start {
				if streamed[e.index] != nil {
					t.Fatalf("call %d announced twice", e.index)
				}
				streamed[e.index] = &chatToolCall{ID: e.id, Function: chatFunctionCall{Name: e.name}}
			}
			sc := streamed[e.index]
			if sc == nil {
				t.Fatalf("event for call %d before its start: %+v", e.index, e)
			}
			sc.Function.Arguments += e.delta
			if e.done == nil {
				if e.delta != "" {
					deltas++
				}
				continue
			}
			if sc.ID != e.done.ID || sc.Function != e.done.Function {
				t.Fatalf("streamed call %+v differs from the completed one %+v", *sc, *e.done)
			}
			sc.Type = "done"
			c := *e.done
			c.ID = "" // random per call
			calls = append(calls, c)
		}
	}
	for i, c := range chunks {
		for _, p := range s.feed(c, i == len(chunks)-1) {
			switch {
			case p.call != nil:
				handle([]callEvent{*p.call})
			case p.reasoning:
				reasoning += p.text
			default:
				for _, sc := range streamed {
					if sc.Type == "" {
						t.Fatalf("answer text %q while call %+v is open: a dialect would interleave them", p.text, *sc)
					}
				}
				answer += p.text
			}
		}
	}
	return reasoning, answer, calls, s.finishReason(FinishStop), deltas
}

// TestOutputSplitterAtEveryBoundary: recorded model outputs — calls in the
// answer, a call inside the reasoning (vLLM #39056), malformed markup —
// give the same reasoning, text and calls whether the output arrives whole,
// cut at any single byte, or one byte at a time.
func TestOutputSplitterAtEveryBoundary(t *testing.T) {
	call := func(name, args string) chatToolCall {
		return chatToolCall{Type: "function", Function: chatFunctionCall{Name: name, Arguments: args}}
	}
	tests := []struct {
		name          string
		startsInThink bool
		output        string
		reasoning     string
		answer        string
		calls         []chatToolCall
		finish        string
	}{
		{"call in the answer", false, "Let me look.\n<tool_call>\n{\"name\": \"read\", \"arguments\": {\"path\": \"a.go\"}}\n</tool_call>",
			"", "Let me look.\n", []chatToolCall{call("read", `{"path":"a.go"}`)}, "tool_calls"},
		{"call inside reasoning", true, "I need the file. <tool_call>\n{\"name\": \"read\", \"arguments\": {\"path\": \"b.go\"}}\n</tool_call>\n</think>\n\n",
			"I need the file. ", "", []chatToolCall{call("read", `{"path":"b.go"}`)}, "tool_calls"},
		{"calls in reasoning and answer", false, "<think>first <tool_call>{\"name\": \"a\", \"arguments\": {}}</tool_call> then</think>ok<tool_call>{\"name\": \"b\", \"arguments\": {\"x\": [1, 2]}}</tool_call>",
			"first  then", "ok", []chatToolCall{call("a", `{}`), call("b", `{"x":[1,2]}`)}, "tool_calls"},
		{"duplicated closing tag", false, "<tool_call>{\"name\": \"a\", \"arguments\": {\"k\": \"v\"}}</tool_call></tool_call>done",
			"", "done", []chatToolCall{call("a", `{"k":"v"}`)}, "tool_calls"},
		{"truncated call", false, "Sure.<tool_call>{\"name\": \"a\", \"arguments\": {\"k\": \"v",
			"", "Sure.", []chatToolCall{call("a", `{"k":"v`)}, "tool_calls"},
		{"truncated before the arguments", false, "Sure.<tool_call>{\"name\": \"a\", \"argu",
			"", "Sure.<tool_call>{\"name\": \"a\", \"argu", nil, "stop"},
		{"call left open in the reasoning", true, "look <tool_call>{\"name\": \"a\", \"arguments\": {\"q\": 1}}</think>\n\nfine",
			"look ", "fine", []chatToolCall{call("a", `{"q":1}`)}, "tool_calls"},
		{"no markup", false, "<think>hmm</think>plain <tool text", "hmm", "plain <tool text", nil, "stop"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			check := func(how string, chunks []string) {
				t.Helper()
				r, a, calls, finish, _ := splitOutput(t, tc.startsInThink, chunks)
				if r != tc.reasoning || a != tc.answer || !reflect.DeepEqual(calls, tc.calls) || finish != tc.finish {
					t.Fatalf("%s: reasoning %q answer %q calls %+v finish %q\nwant %q %q %+v %q", how, r, a, calls, finish,
						tc.reasoning, tc.answer, tc.calls, tc.finish)
				}
			}
			check("whole", []string{tc.output})
			for i := 1; i < len(tc.output); i++ {
				check("cut at "+tc.output[:i], []string{tc.output[:i], tc.output[i:]})
			}
			var bytes []string
			for i := range len(tc.output) {
				bytes = append(bytes, tc.output[i:i+1])
			}
			check("byte by byte", bytes)
		})
	}
	// Arguments stream while the call is generated, not when it closes.
	out := "<tool_call>\n{\"name\": \"write\", \"arguments\": {\"path\": \"a.txt\", \"text\": \"" + strings.Repeat("x\\n", 200) + "\"}}\n</tool_call>"
	var chunks []string
	for i := 0; i < len(out); i += 5 {
		chunks = append(chunks, out[i:min(i+5, len(out))])
	}
	_, _, calls, _, deltas := splitOutput(t, false, chunks)
	if len(calls) != 1 || deltas < 100 {
		t.Fatalf("%d calls, %d argument deltas before the call closed; want 1 call streamed in many deltas", len(calls), deltas)
	}
}
