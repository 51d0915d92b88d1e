package api

import (
	"strings"

	"github.com/goccy/go-json"
)

// Responses API shapes and the event writer that also assembles the final
// response object (used with a nil sseWriter for non-streamed requests).

// responseObject is a "response" object.
type responseObject struct {
	ID                 string             `json:"id"`
	Object             string             `json:"object"`
	CreatedAt          int64              `json:"created_at"`
	Status             string             `json:"status"` // in_progress, completed, incomplete, failed
	Model              string             `json:"model"`
	Output             []responseItem     `json:"output"`
	Usage              *responsesUsage    `json:"usage"`
	Error              *responseError     `json:"error"`
	IncompleteDetails  *incompleteDetails `json:"incomplete_details"`
	Instructions       *string            `json:"instructions"`
	MaxOutputTokens    *int               `json:"max_output_tokens"`
	PreviousResponseID *string            `json:"previous_response_id"`
	Reasoning          reasoningOut       `json:"reasoning"`
	Metadata           map[string]string  `json:"metadata"`
	ParallelToolCalls  bool               `json:"parallel_tool_calls"`
	Temperature        float64            `json:"temperature"`
	TopP               float64            `json:"top_p"`
	ToolChoice         any                `json:"tool_choice"`
	Tools              []json.RawMessage  `json:"tools"`
	Store              bool               `json:"store"`
	Text               textConfig         `json:"text"`
}

type reasoningOut struct {
	Effort *string `json:"effort"`
}

type textConfig struct {
	Format struct {
		Type string `json:"type"`
	} `json:"format"`
}

type responseError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

type incompleteDetails struct {
	Reason string `json:"reason"`
}

// responseItem is an output item: a reasoning item, an assistant message
// or a function call.
type responseItem struct {
	Type    string         `json:"type"`
	ID      string         `json:"id"`
	Status  string         `json:"status"`
	Role    string         `json:"role,omitempty"`
	Summary *[]any         `json:"summary,omitempty"` // reasoning items only: []
	Content []responsePart `json:"content,omitzero"`  // nil only for function calls
	// function_call items
	CallID    string  `json:"call_id,omitempty"`
	Name      string  `json:"name,omitempty"`
	Namespace string  `json:"namespace,omitempty"`
	Arguments *string `json:"arguments,omitempty"`
}

// responsePart is an output_text or reasoning_text content part.
type responsePart struct {
	Type        string              `json:"type"`
	Text        string              `json:"text"`
	Annotations *[]any              `json:"annotations,omitempty"` // output_text only: []
	Logprobs    *[]chatTokenLogprob `json:"logprobs,omitempty"`    // output_text only
}

type responsesUsage struct {
	InputTokens         int                     `json:"input_tokens"`
	InputTokensDetails  promptTokensDetails     `json:"input_tokens_details"`
	OutputTokens        int                     `json:"output_tokens"`
	OutputTokensDetails completionTokensDetails `json:"output_tokens_details"`
	TotalTokens         int                     `json:"total_tokens"`
}

func toResponsesUsage(u Usage) *responsesUsage {
	return &responsesUsage{
		InputTokens: u.PromptTokens, InputTokensDetails: promptTokensDetails{CachedTokens: u.CachedPromptTokens},
		OutputTokens: u.CompletionTokens, OutputTokensDetails: completionTokensDetails{ReasoningTokens: u.ReasoningTokens},
		TotalTokens: u.PromptTokens + u.CompletionTokens,
	}
}

func outputTextPart(text string, logprobs []chatTokenLogprob) responsePart {
	annotations := []any{}
	if logprobs == nil {
		logprobs = []chatTokenLogprob{}
	}
	return responsePart{Type: "output_text", Text: text, Annotations: &annotations, Logprobs: &logprobs}
}

// newResponseObject is the envelope of a response before any output.
func (s *Server) newResponseObject(id string, p *responsesPlan) responseObject {
	r := p.req
	o := responseObject{
		ID: id, Object: "response", CreatedAt: s.opts.Now().Unix(), Status: "in_progress", Model: s.opts.ModelID,
		Output: []responseItem{}, Instructions: optionalText(r.Instructions), MaxOutputTokens: r.MaxOutputTokens,
		PreviousResponseID: optionalText(r.PreviousResponseID), Reasoning: reasoningOut{Effort: optionalText(p.effort)},
		Metadata: r.Metadata, ParallelToolCalls: r.ParallelToolCalls == nil || *r.ParallelToolCalls, Temperature: valueOr(r.Temperature, defaultTemperature),
		TopP: valueOr(r.TopP, 1), ToolChoice: toolChoiceOut(p.choice), Tools: r.Tools, Store: r.Store == nil || *r.Store,
	}
	if o.Metadata == nil {
		o.Metadata = map[string]string{}
	}
	if o.Tools == nil {
		o.Tools = []json.RawMessage{}
	}
	o.Text.Format.Type = "text"
	return o
}

// Stream event payloads; each carries "type" and "sequence_number".
type (
	responseEvent struct {
		Type           string         `json:"type"`
		SequenceNumber int            `json:"sequence_number"`
		Response       responseObject `json:"response"`
	}
	itemEvent struct {
		Type           string       `json:"type"`
		SequenceNumber int          `json:"sequence_number"`
		OutputIndex    int          `json:"output_index"`
		Item           responseItem `json:"item"`
	}
	partEvent struct {
		Type           string       `json:"type"`
		SequenceNumber int          `json:"sequence_number"`
		ItemID         string       `json:"item_id"`
		OutputIndex    int          `json:"output_index"`
		ContentIndex   int          `json:"content_index"`
		Part           responsePart `json:"part"`
	}
	textDeltaEvent struct {
		Type           string              `json:"type"`
		SequenceNumber int                 `json:"sequence_number"`
		ItemID         string              `json:"item_id"`
		OutputIndex    int                 `json:"output_index"`
		ContentIndex   int                 `json:"content_index"`
		Delta          string              `json:"delta"`
		Logprobs       *[]chatTokenLogprob `json:"logprobs,omitempty"` // output_text deltas only
	}
	textDoneEvent struct {
		Type           string              `json:"type"`
		SequenceNumber int                 `json:"sequence_number"`
		ItemID         string              `json:"item_id"`
		OutputIndex    int                 `json:"output_index"`
		ContentIndex   int                 `json:"content_index"`
		Text           string              `json:"text"`
		Logprobs       *[]chatTokenLogprob `json:"logprobs,omitempty"`
	}
	streamErrorEvent struct {
		Type           string  `json:"type"`
		SequenceNumber int     `json:"sequence_number"`
		Code           *string `json:"code"`
		Message        string  `json:"message"`
		Param          *string `json:"param"`
	}
)

// responsesStream writes the Responses events: response.created,
// response.in_progress, then per output item (a reasoning item, then the
// message) output_item.added, content_part.added, *.delta…, *.done,
// content_part.done, output_item.done; finally response.completed (or
// response.incomplete when max_output_tokens cut it short).
type responsesStream struct {
	obj   responseObject
	plan  *responsesPlan
	seq   int
	split *outputSplitter

	open     string          // "reasoning", "message" or "" (no item open)
	item     responseItem    // the open item
	text     strings.Builder // the open item's text so far
	logprobs []chatTokenLogprob

	reasoning, answer string // finished texts, for the stored conversation
	finish            FinishReason
	calls             []chatToolCall // the calls made, for the stored conversation
	onFinish          func(obj responseObject, reasoning, answer string, calls []chatToolCall)
}

func (s *Server) newResponsesStream(p *responsesPlan) *responsesStream {
	rs := &responsesStream{obj: s.newResponseObject(newID("resp_"), p), plan: p, split: newOutputSplitter(p.prompt.startsInThink, p.parseCalls)}
	rs.onFinish = func(obj responseObject, reasoning, answer string, calls []chatToolCall) {
		if !obj.Store {
			return
		}
		turn := ChatMessage{Role: "assistant", Content: answer, Reasoning: reasoning}
		for _, c := range calls {
			c.Index = nil
			if b, err := json.Marshal(c); err == nil {
				turn.ToolCalls = append(turn.ToolCalls, b)
			}
		}
		history := append(p.history[:len(p.history):len(p.history)], turn)
		s.store.put(obj.ID, storedResponse{object: obj, history: history, images: p.images})
	}
	return rs
}

func (r *responsesStream) next() int {
	n := r.seq
	r.seq++
	return n
}

func (r *responsesStream) begin(w *sseWriter) {
	w.send("response.created", responseEvent{Type: "response.created", SequenceNumber: r.next(), Response: r.obj})
	w.send("response.in_progress", responseEvent{Type: "response.in_progress", SequenceNumber: r.next(), Response: r.obj})
}

// write appends text to an item of the given kind, opening it (and closing
// the previous one) as needed.
func (r *responsesStream) write(w *sseWriter, kind, text string, lps []chatTokenLogprob) {
	if text == "" && (lps == nil || r.open == "function_call") {
		return // logprobs of a call's tokens have no text part to go in
	}
	if r.open != kind {
		r.closeItem(w, "completed")
		r.openItem(w, kind)
	}
	r.text.WriteString(text)
	r.logprobs = append(r.logprobs, lps...)
	ev := textDeltaEvent{Type: "response.output_text.delta", SequenceNumber: r.next(), ItemID: r.item.ID,
		OutputIndex: len(r.obj.Output), Delta: text}
	if kind == "reasoning" {
		ev.Type = "response.reasoning_text.delta"
	} else {
		if lps == nil {
			lps = []chatTokenLogprob{}
		}
		ev.Logprobs = &lps
	}
	w.send(ev.Type, ev)
}

func (r *responsesStream) openItem(w *sseWriter, kind string) {
	r.open = kind
	r.text.Reset()
	r.logprobs = nil
	if kind == "reasoning" {
		summary := []any{}
		r.item = responseItem{Type: "reasoning", ID: newID("rs_"), Status: "in_progress", Summary: &summary, Content: []responsePart{}}
	} else {
		r.item = responseItem{Type: "message", ID: newID("msg_"), Status: "in_progress", Role: "assistant", Content: []responsePart{}}
	}
	index := len(r.obj.Output)
	w.send("response.output_item.added", itemEvent{Type: "response.output_item.added", SequenceNumber: r.next(), OutputIndex: index, Item: r.item})
	w.send("response.content_part.added", partEvent{Type: "response.content_part.added", SequenceNumber: r.next(),
		ItemID: r.item.ID, OutputIndex: index, Part: r.part()})
}

// part is the open item's content part as it stands.
func (r *responsesStream) part() responsePart {
	if r.open == "reasoning" {
		return responsePart{Type: "reasoning_text", Text: r.text.String()}
	}
	return outputTextPart(r.text.String(), r.logprobs)
}

func (r *responsesStream) closeItem(w *sseWriter, status string) {
	if r.open == "" || r.open == "function_call" {
		return // a call item ends with its done event (callEvent)
	}
	index, part := len(r.obj.Output), r.part()
	done := textDoneEvent{Type: "response.output_text.done", SequenceNumber: r.next(), ItemID: r.item.ID, OutputIndex: index, Text: part.Text, Logprobs: part.Logprobs}
	if r.open == "reasoning" {
		done.Type = "response.reasoning_text.done"
		r.reasoning = part.Text
	} else {
		r.answer = part.Text
	}
	w.send(done.Type, done)
	w.send("response.content_part.done", partEvent{Type: "response.content_part.done", SequenceNumber: r.next(), ItemID: r.item.ID, OutputIndex: index, Part: part})
	r.item.Status, r.item.Content = status, []responsePart{part}
	w.send("response.output_item.done", itemEvent{Type: "response.output_item.done", SequenceNumber: r.next(), OutputIndex: index, Item: r.item})
	r.obj.Output = append(r.obj.Output, r.item)
	r.open = ""
}

func (r *responsesStream) event(w *sseWriter, ev Event) {
	pieces := r.split.feed(ev.Text, ev.FinishReason != "")
	if ev.FinishReason != "" {
		r.finish = ev.FinishReason
	}
	var lps []chatTokenLogprob
	if l := toChatLogprobs(ev.Logprobs); l != nil {
		lps = l.Content
	}
	for _, p := range pieces {
		switch {
		case p.call != nil:
			r.callEvent(w, *p.call)
		case p.reasoning:
			r.write(w, "reasoning", p.text, nil)
		default:
			r.write(w, "message", p.text, lps)
			lps = nil // the event's logprobs go with its first answer text
		}
	}
	if lps != nil {
		r.write(w, "message", "", lps)
	}
}

func (r *responsesStream) end(w *sseWriter, usage Usage) {
	status := "completed"
	if r.finish == FinishLength {
		status = "incomplete"
		r.obj.IncompleteDetails = &incompleteDetails{Reason: "max_output_tokens"}
	}
	if r.open == "" && len(r.obj.Output) == 0 {
		r.openItem(w, "message") // an empty answer is still a message
	}
	r.closeItem(w, status)
	r.obj.Status, r.obj.Usage = status, toResponsesUsage(usage)
	r.onFinish(r.obj, r.reasoning, r.answer, r.calls)
	w.send("response."+status, responseEvent{Type: "response." + status, SequenceNumber: r.next(), Response: r.obj})
}

func (r *responsesStream) fail(w *sseWriter, err error) {
	e := asAPIError(err)
	w.send("error", streamErrorEvent{Type: "error", SequenceNumber: r.next(), Code: optional(e.code), Message: e.message, Param: optional(e.param)})
}

func (r *responsesStream) ping(w *sseWriter) { w.comment("ping") }
