package chat

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/splash-inference/splash/tokenizer/jinja"
)

// Template is a model's parsed chat templates. It is safe for concurrent
// use.
type Template struct {
	def      *jinja.Template
	named    map[string]*jinja.Template // e.g. "tool_use"
	bos, eos string
}

// Request is what to render. Messages and Tools are template values (use
// ParseRequest or jinja.DecodeJSON so objects keep their key order).
type Request struct {
	Messages            []jinja.Value
	Tools               []jinja.Value
	AddGenerationPrompt bool
	EnableThinking      *bool                  // nil leaves enable_thinking undefined
	Extra               map[string]jinja.Value // more template variables (date_string, ...)
}

// Load reads tokenizer_config.json (or .gz) from dir.
func Load(dir string) (*Template, error) {
	p := filepath.Join(dir, "tokenizer_config.json")
	raw, err := os.ReadFile(p)
	if err != nil {
		f, gzErr := os.Open(p + ".gz")
		if gzErr != nil {
			return nil, fmt.Errorf("chat: %w", err)
		}
		defer f.Close()
		zr, err := gzip.NewReader(f)
		if err != nil {
			return nil, fmt.Errorf("chat: %w", err)
		}
		if raw, err = io.ReadAll(zr); err != nil {
			return nil, fmt.Errorf("chat: %w", err)
		}
	}
	return FromConfig(raw)
}

// FromConfig parses the chat template(s) of a tokenizer_config.json.
func FromConfig(configJSON []byte) (*Template, error) {
	var cfg struct {
		ChatTemplate json.RawMessage `json:"chat_template"`
		BOS          any             `json:"bos_token"`
		EOS          any             `json:"eos_token"`
	}
	if err := json.Unmarshal(configJSON, &cfg); err != nil {
		return nil, fmt.Errorf("chat: tokenizer_config.json: %w", err)
	}
	t := &Template{named: map[string]*jinja.Template{}, bos: tokenText(cfg.BOS), eos: tokenText(cfg.EOS)}
	var single string
	var list []struct {
		Name     string `json:"name"`
		Template string `json:"template"`
	}
	switch {
	case len(cfg.ChatTemplate) == 0 || string(cfg.ChatTemplate) == "null":
		return nil, errors.New("chat: tokenizer_config.json has no chat_template")
	case json.Unmarshal(cfg.ChatTemplate, &single) == nil:
		list = append(list, struct {
			Name     string `json:"name"`
			Template string `json:"template"`
		}{"default", single})
	case json.Unmarshal(cfg.ChatTemplate, &list) != nil:
		return nil, errors.New("chat: chat_template is neither a string nor a list of named templates")
	}
	for _, nt := range list {
		parsed, err := jinja.Parse(nt.Template)
		if err != nil {
			return nil, fmt.Errorf("chat: template %q: %w", nt.Name, err)
		}
		t.named[nt.Name] = parsed
	}
	t.def = t.named["default"]
	if t.def == nil {
		return nil, errors.New("chat: chat_template has no \"default\" template")
	}
	return t, nil
}

func tokenText(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case map[string]any:
		s, _ := x["content"].(string)
		return s
	}
	return ""
}

// Prompt is a rendered conversation: its text, and the byte ranges of the
// text that came from the request's content rather than the template.
type Prompt struct {
	Text    string
	Content []jinja.Span
}

// Render renders req with the default template, or the "tool_use" template
// when the request has tools and the model ships one.
func (t *Template) Render(req Request) (string, error) {
	p, err := t.RenderPrompt(req)
	return p.Text, err
}

// RenderPrompt renders req as Render does and says which bytes came from
// the request: everything in its messages, tools and extra variables is
// content (roles, texts, tool calls and their arguments, tool results,
// tool definitions, documents), so only the template's own text can hold
// control tokens (see tokenizer.EncodePrompt).
func (t *Template) RenderPrompt(req Request) (Prompt, error) {
	tpl := t.def
	if len(req.Tools) > 0 && t.named["tool_use"] != nil {
		tpl = t.named["tool_use"]
	}
	vars := map[string]jinja.Value{
		"messages":              jinja.MarkContent(req.Messages),
		"add_generation_prompt": req.AddGenerationPrompt,
		"bos_token":             t.bos,
		"eos_token":             t.eos,
	}
	if req.Messages == nil {
		vars["messages"] = []jinja.Value{}
	}
	if len(req.Tools) > 0 {
		vars["tools"] = jinja.MarkContent(req.Tools)
	} else {
		vars["tools"] = nil
	}
	if req.EnableThinking != nil {
		vars["enable_thinking"] = *req.EnableThinking
	}
	for k, v := range req.Extra {
		vars[k] = jinja.MarkContent(v)
	}
	out, spans, err := tpl.RenderContent(vars)
	if err != nil {
		return Prompt{}, fmt.Errorf("chat: %w", err)
	}
	return Prompt{Text: out, Content: spans}, nil
}

// ParseRequest decodes {"messages": [...], "tools": [...],
// "add_generation_prompt": bool, "enable_thinking": bool, ...}; other keys
// become template variables. All of it is request content.
func ParseRequest(data []byte) (Request, error) {
	v, err := jinja.DecodeJSONContent(bytes.TrimSpace(data))
	if err != nil {
		return Request{}, fmt.Errorf("chat: %w", err)
	}
	m, ok := v.(*jinja.Map)
	if !ok {
		return Request{}, errors.New("chat: the request must be a JSON object")
	}
	var req Request
	for _, k := range m.Keys() {
		val, _ := m.Get(k)
		switch k {
		case "messages", "tools":
			l, ok := val.([]jinja.Value)
			if !ok && val != nil {
				return Request{}, fmt.Errorf("chat: %q must be a list", k)
			}
			if k == "messages" {
				req.Messages = l
			} else {
				req.Tools = l
			}
		case "add_generation_prompt":
			b, ok := val.(bool)
			if !ok {
				return Request{}, errors.New("chat: \"add_generation_prompt\" must be a boolean")
			}
			req.AddGenerationPrompt = b
		case "enable_thinking":
			b, ok := val.(bool)
			if !ok {
				return Request{}, errors.New("chat: \"enable_thinking\" must be a boolean")
			}
			req.EnableThinking = &b
		default:
			if req.Extra == nil {
				req.Extra = map[string]jinja.Value{}
			}
			req.Extra[k] = val
		}
	}
	if len(req.Messages) == 0 {
		return Request{}, errors.New("chat: \"messages\" must be a non-empty list")
	}
	return req, nil
}
