package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/splash-inference/splash/api"
	"github.com/splash-inference/splash/api/textmodel"
	"github.com/splash-inference/splash/tokenizer/chat"
)

// Tool-call parsers, one per model family's call format. Splash parses the
// Qwen/Hermes format (<tool_call>{"name": ..., "arguments": ...}</tool_call>),
// which Qwen2.5/Qwen3 and Hermes-style templates use; which one a model
// needs is read from its own chat template, the part of the package that
// tells the model how to call tools.
const (
	toolParserHermes = "hermes"
	toolParserNone   = "none"
)

// probeTool is the tool a probe render offers; its name shows whether the
// template puts tools in the prompt at all.
const probeTool = "splash_probe_tool"

// detectToolParser renders a one-message conversation with one tool and
// reads the format off the prompt: the tool's name and the <tool_call> tag
// mean Hermes; a prompt without the tool means the template ignores tools.
// why says what was found, for the start-up message.
func detectToolParser(tpl *chat.Template) (parser, why string) {
	p, err := textmodel.Template{T: tpl}.Render(api.ChatRenderRequest{
		Messages:            []api.ChatMessage{{Role: "user", Content: "hi"}},
		Tools:               [][]byte{[]byte(`{"type":"function","function":{"name":"` + probeTool + `","description":"probe","parameters":{"type":"object","properties":{}}}}`)},
		AddGenerationPrompt: true,
	})
	text := p.Text
	switch {
	case err != nil:
		return toolParserNone, fmt.Sprintf("the chat template fails with tools (%v)", err)
	case !strings.Contains(text, probeTool):
		return toolParserNone, "the chat template ignores tools"
	case strings.Contains(text, "<tool_call>"):
		return toolParserHermes, "the chat template describes <tool_call> calls"
	}
	return toolParserNone, "the chat template lists tools but not in the <tool_call> format"
}

// chooseToolParser resolves --tool-parser (auto, hermes or none) for the
// model's template and says which it took on w.
func chooseToolParser(flag string, tpl *chat.Template, w io.Writer) string {
	parser, why := flag, "--tool-parser"
	if flag == "auto" {
		parser, why = detectToolParser(tpl)
	}
	switch parser {
	case toolParserNone:
		fmt.Fprintf(w, "tool calls: off (%s); requests offering tools get a 400\n", why)
	default:
		fmt.Fprintf(w, "tool calls: %s parser (%s)\n", parser, why)
	}
	return parser
}
