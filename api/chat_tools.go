package api

import (
	"strings"

	"github.com/splash-inference/splash/engine/grammar/toolcall"
)

// Tool calls in every dialect: when a request declares tools, the model's
// answer is split into text and <tool_call> blocks (the Qwen/Hermes
// format) by a streaming parser. A call is announced as soon as its name is
// known and its arguments stream as they are generated (compacted, adding
// up to exactly the parsed call's arguments); the markup never reaches the
// content.

// chatToolCall is one entry of a message's (or delta's) "tool_calls".
type chatToolCall struct {
	Index    *int             `json:"index,omitempty"` // streaming deltas only
	ID       string           `json:"id,omitempty"`
	Type     string           `json:"type,omitempty"`
	Function chatFunctionCall `json:"function"`
}

type chatFunctionCall struct {
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments"` // a JSON object, as a string
}

// callEvent is progress of one call: its start (id and name known), more
// argument bytes, or its end with the whole call.
type callEvent struct {
	index int    // the call's place among the choice's calls
	id    string // call_...
	name  string
	start bool   // the first event of the call: announce it
	delta string // argument bytes not yet sent
	// done carries the whole call at its end; the start and the deltas
	// before it (if any) add up to it.
	done *chatToolCall
}

// toolSplitter applies the parser to one part (answer or reasoning) of a
// choice's output.
type toolSplitter struct {
	p     toolcall.Parser
	next  *int // the choice's call counter, shared by its splitters
	calls int  // calls completed in this part
	open  *openCall
}

// openCall is the call being generated and what has been sent of it.
type openCall struct {
	id       string
	index    int
	args     toolcall.ArgStream
	consumed int  // body bytes given to args
	started  bool // its start event went out
}

// piece is one part of a choice's output, in order: text of a kind
// (reasoning or answer), or progress of a call.
type piece struct {
	reasoning bool // text is reasoning (else answer text)
	text      string
	call      *callEvent
}

// feed appends to out the pieces text brings: the text decided so far (of
// the kind reasoning says) and the call events, in output order, so a
// writer never puts text inside a call that is still open.
func (t *toolSplitter) feed(out []piece, text string, reasoning, final bool) []piece {
	out = t.segments(out, t.p.Feed(text), reasoning)
	if body, ok := t.p.OpenBody(); ok {
		for _, e := range t.progress(body) {
			out = append(out, piece{call: &e})
		}
	}
	if final {
		out = t.segments(out, t.p.Flush(), reasoning)
	}
	return out
}

// segments turns parsed segments into text and call-end pieces.
func (t *toolSplitter) segments(out []piece, segs []toolcall.Segment, reasoning bool) []piece {
	call := func(e callEvent) { out = append(out, piece{call: &e}) }
	for _, s := range segs {
		if s.Call == nil {
			if s.Malformed != "" && t.open != nil && t.open.started {
				// Announced as a call already (its name and the start of
				// its arguments were generated): end it with the arguments
				// generated, whole or not — a call cut by max_tokens, whose
				// finish reason "length" says why — rather than repeat its
				// markup as text. Streamed or not, the answer is the same.
				call(t.finish(chatToolCall{Function: chatFunctionCall{Arguments: t.open.args.Arguments()}}))
				continue
			}
			t.open = nil
			// the newlines a model puts between and after its calls are not
			// content
			if t.calls == 0 || strings.TrimSpace(s.Text) != "" {
				out = append(out, piece{reasoning: reasoning, text: s.Text})
			}
			continue
		}
		call(t.finish(chatToolCall{Type: "function",
			Function: chatFunctionCall{Name: s.Call.Name, Arguments: string(s.Call.Arguments)}}))
	}
	return out
}

// progress streams the open call's name and new argument bytes.
func (t *toolSplitter) progress(body string) []callEvent {
	if t.open == nil {
		t.open = &openCall{id: newID("call_")}
	}
	o := t.open
	delta := o.args.Feed(body[o.consumed:])
	o.consumed = len(body)
	name, ok := o.args.Name()
	if !ok {
		return nil
	}
	ev := callEvent{id: o.id, name: name, delta: delta}
	if !o.started {
		o.started, o.index = true, *t.next
		*t.next++
		ev.start = true
	}
	ev.index = o.index
	if !ev.start && delta == "" {
		return nil
	}
	return []callEvent{ev}
}

// finish ends the open call (or a call that never streamed) with call,
// whose arguments the sent deltas are a prefix of.
func (t *toolSplitter) finish(call chatToolCall) callEvent {
	o := t.open
	t.open = nil
	t.calls++
	if o == nil || !o.started {
		id := newID("call_")
		if o != nil {
			id = o.id
		}
		call.ID, call.Type = id, "function"
		ev := callEvent{index: *t.next, id: id, name: call.Function.Name, start: true, delta: call.Function.Arguments, done: &call}
		*t.next++
		return ev
	}
	call.ID, call.Type = o.id, "function"
	if call.Function.Name == "" {
		call.Function.Name, _ = o.args.Name()
	}
	sent := o.args.Arguments()
	rest := strings.TrimPrefix(call.Function.Arguments, sent)
	if len(rest) == len(call.Function.Arguments) && sent != "" {
		// What streamed is not a prefix of the parsed arguments (it cannot
		// happen for an object the parser accepts); the client has what
		// streamed, so that is the call.
		call.Function.Arguments, rest = sent, ""
	}
	return callEvent{index: o.index, id: o.id, name: call.Function.Name, delta: rest, done: &call}
}
