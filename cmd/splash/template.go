package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/goccy/go-json"
	"github.com/peterbourgon/ff/v4"

	"github.com/splash-inference/splash/tokenizer"
	"github.com/splash-inference/splash/tokenizer/chat"
)

func newTemplateCmd(s *stdio) *ff.Command {
	fs := ff.NewFlagSet("template")
	dir := fs.StringLong("tokenizer", "", "directory with tokenizer_config.json: a tokenizer folder, a package or a checkpoint")
	spans := fs.BoolLong("spans", "print {\"prompt\": ..., \"content_spans\": [[start, end], ...]}: the byte ranges that came from the request")
	tokens := fs.BoolLong("tokens", "print the prompt's token ids as the server encodes them: control tokens only from the template")
	return &ff.Command{
		Name:      "template",
		Usage:     "splash template --tokenizer DIR [--spans | --tokens] < REQUEST.json",
		ShortHelp: "render the model's chat template for a JSON request on stdin",
		LongHelp: `Reads {"messages": [...], "tools": [...], "add_generation_prompt": true, "enable_thinking": false}
on stdin (other keys become template variables) and prints the rendered prompt. Everything the
request holds is content: its text never becomes a control token. The flags show where the
content lies and the ids the prompt encodes to.`,
		Flags: fs,
		Exec: func(ctx context.Context, args []string) error {
			if *dir == "" {
				return errors.New("template: --tokenizer is required")
			}
			if *spans && *tokens {
				return errors.New("template: --spans and --tokens are exclusive")
			}
			tpl, err := chat.Load(*dir)
			if err != nil {
				return err
			}
			raw, err := io.ReadAll(s.in)
			if err != nil {
				return fmt.Errorf("template: reading stdin: %w", err)
			}
			req, err := chat.ParseRequest(raw)
			if err != nil {
				return err
			}
			p, err := tpl.RenderPrompt(req)
			if err != nil {
				return err
			}
			switch {
			case *spans:
				out := struct {
					Prompt string   `json:"prompt"`
					Spans  [][2]int `json:"content_spans"`
				}{p.Text, make([][2]int, len(p.Content))}
				for i, sp := range p.Content {
					out.Spans[i] = [2]int{sp.Start, sp.End}
				}
				return printJSON(s.out, out)
			case *tokens:
				tk, err := tokenizer.Load(*dir)
				if err != nil {
					return err
				}
				content := make([]tokenizer.Span, len(p.Content))
				for i, sp := range p.Content {
					content[i] = tokenizer.Span(sp)
				}
				ids := tk.EncodePrompt(p.Text, content)
				if ids == nil {
					ids = []int32{}
				}
				return printJSON(s.out, ids)
			}
			_, err = io.WriteString(s.out, p.Text)
			return err
		},
	}
}

// printJSON writes v as one line of JSON, "<" and ">" as themselves.
func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}
