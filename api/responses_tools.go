package api

import (
	"strconv"

	"github.com/goccy/go-json"
)

// Tool calling in the Responses API: tools are flat ({"type":"function",
// "name", "parameters"}), may be grouped in namespaces, and calls come back
// as "function_call" output items (streamed as output_item.added, argument
// deltas, function_call_arguments.done, output_item.done). The model sees
// the same chat-template tool list as in Chat Completions, and its
// <tool_call> markup goes through the same parser.

// responsesTool is one entry of "tools": a function, a namespace of
// functions, or a hosted tool (web_search, file_search, ...).
type responsesTool struct {
	Type        string          `json:"type"`
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
	Strict      *bool           `json:"strict"`
	Tools       []responsesTool `json:"tools"` // a namespace's functions
}

// offeredTools are the functions a Responses request offers the model, in
// the Chat shape the template and the forced-call grammar take, with the
// namespace of each namespaced one (calls carry it back).
type offeredTools struct {
	chat      []json.RawMessage
	namespace map[string]string // function name -> its namespace
	hosted    map[string]bool   // hosted tool types the request listed
}

// parseResponsesTools keeps the functions, flattening namespaces (Codex
// groups its sub-agent tools in one), and drops hosted tools: Splash cannot
// run a web search or a code interpreter, and a client such as Codex lists
// web_search on every request, so refusing them would refuse the client.
func parseResponsesTools(raw []json.RawMessage) (offeredTools, error) {
	out := offeredTools{namespace: map[string]string{}, hosted: map[string]bool{}}
	var add func(t responsesTool, ns string, at string) error
	add = func(t responsesTool, ns, at string) error {
		switch t.Type {
		case "function":
			if t.Name == "" {
				return invalidf("tools", "%s: a function tool needs a name", at)
			}
			fn := map[string]any{"name": t.Name, "description": t.Description, "parameters": t.Parameters}
			if t.Strict != nil {
				fn["strict"] = *t.Strict
			}
			b, err := json.Marshal(map[string]any{"type": "function", "function": fn})
			if err != nil {
				return invalidf("tools", "%s: %v", at, err)
			}
			out.chat = append(out.chat, b)
			if ns != "" {
				out.namespace[t.Name] = ns
			}
		case "namespace":
			if ns != "" {
				return invalidf("tools", "%s: namespaces do not nest", at)
			}
			for j, inner := range t.Tools {
				if err := add(inner, t.Name, at+".tools["+strconv.Itoa(j)+"]"); err != nil {
					return err
				}
			}
		case "":
			return invalidf("tools", "%s: a tool needs a type", at)
		default:
			out.hosted[t.Type] = true
		}
		return nil
	}
	for i, r := range raw {
		var t responsesTool
		if err := json.Unmarshal(r, &t); err != nil {
			return out, invalidf("tools", "tools[%d]: %v", i, err)
		}
		if err := add(t, "", "tools["+strconv.Itoa(i)+"]"); err != nil {
			return out, err
		}
	}
	return out, nil
}

// responsesToolChoice is the Responses "tool_choice": "none", "auto",
// "required", {"type": "function", "name": ...}, or a hosted tool type.
func responsesToolChoice(raw json.RawMessage, tools offeredTools) (*toolChoice, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var c toolChoice
	if firstByte(raw) == '"' {
		if err := c.UnmarshalJSON(raw); err != nil {
			return nil, err
		}
		return &c, nil
	}
	var obj struct {
		Type string `json:"type"`
		Name string `json:"name"`
	}
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, invalidf("tool_choice", "tool_choice must be a string or an object with a type")
	}
	switch {
	case obj.Type == "function" && obj.Name != "":
		return &toolChoice{Mode: "required", Name: obj.Name}, nil
	case obj.Type == "function":
		return nil, invalidf("tool_choice", "tool_choice of type function needs a name")
	case tools.hosted[obj.Type]:
		return nil, invalidf("tool_choice", "tool_choice %q names a hosted tool, which Splash cannot run", obj.Type)
	}
	return nil, invalidf("tool_choice", "tool_choice type %q is not supported (want function, or none, auto, required)", obj.Type)
}

// toolChoiceOut is how the response object echoes the request's choice.
func toolChoiceOut(c *toolChoice) any {
	switch {
	case c == nil:
		return "auto"
	case c.Name != "":
		return map[string]string{"type": "function", "name": c.Name}
	}
	return c.Mode
}

// functionCallItem is the output item of one parsed call.
func functionCallItem(call chatToolCall, namespace, status string) responseItem {
	args := call.Function.Arguments
	return responseItem{Type: "function_call", ID: "fc_" + call.ID[len("call_"):], Status: status, CallID: call.ID,
		Name: call.Function.Name, Namespace: namespace, Arguments: &args}
}

// Function-call stream events.
type (
	argsDeltaEvent struct {
		Type           string `json:"type"`
		SequenceNumber int    `json:"sequence_number"`
		ItemID         string `json:"item_id"`
		OutputIndex    int    `json:"output_index"`
		Delta          string `json:"delta"`
	}
	argsDoneEvent struct {
		Type           string `json:"type"`
		SequenceNumber int    `json:"sequence_number"`
		ItemID         string `json:"item_id"`
		OutputIndex    int    `json:"output_index"`
		Name           string `json:"name"`
		Arguments      string `json:"arguments"`
	}
)

// callEvent streams a function_call output item: output_item.added (empty
// arguments) when the call is announced, argument deltas as they come,
// function_call_arguments.done and output_item.done when it ends.
func (r *responsesStream) callEvent(w *sseWriter, e callEvent) {
	if e.start {
		r.closeItem(w, "completed")
		empty := ""
		r.item = functionCallItem(chatToolCall{ID: e.id, Function: chatFunctionCall{Name: e.name}}, r.plan.tools.namespace[e.name], "in_progress")
		r.item.Arguments = &empty
		r.open = "function_call"
		w.send("response.output_item.added", itemEvent{Type: "response.output_item.added", SequenceNumber: r.next(), OutputIndex: len(r.obj.Output), Item: r.item})
	}
	index := len(r.obj.Output)
	if e.delta != "" {
		w.send("response.function_call_arguments.delta", argsDeltaEvent{Type: "response.function_call_arguments.delta",
			SequenceNumber: r.next(), ItemID: r.item.ID, OutputIndex: index, Delta: e.delta})
	}
	if e.done == nil {
		return
	}
	item := functionCallItem(*e.done, r.plan.tools.namespace[e.done.Function.Name], "completed")
	w.send("response.function_call_arguments.done", argsDoneEvent{Type: "response.function_call_arguments.done",
		SequenceNumber: r.next(), ItemID: item.ID, OutputIndex: index, Name: item.Name, Arguments: *item.Arguments})
	w.send("response.output_item.done", itemEvent{Type: "response.output_item.done", SequenceNumber: r.next(), OutputIndex: index, Item: item})
	r.obj.Output = append(r.obj.Output, item)
	r.calls = append(r.calls, *e.done)
	r.open = ""
}
