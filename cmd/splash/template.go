package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/peterbourgon/ff/v4"

	"github.com/splash-inference/splash/tokenizer/chat"
)

func newTemplateCmd(s *stdio) *ff.Command {
	fs := ff.NewFlagSet("template")
	dir := fs.StringLong("tokenizer", "", "directory with tokenizer_config.json: a tokenizer folder, a package or a checkpoint")
	return &ff.Command{
		Name:      "template",
		Usage:     "splash template --tokenizer DIR < REQUEST.json",
		ShortHelp: "render the model's chat template for a JSON request on stdin",
		LongHelp: `Reads {"messages": [...], "tools": [...], "add_generation_prompt": true, "enable_thinking": false}
on stdin (other keys become template variables) and prints the rendered prompt.`,
		Flags: fs,
		Exec: func(ctx context.Context, args []string) error {
			if *dir == "" {
				return errors.New("template: --tokenizer is required")
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
			out, err := tpl.Render(req)
			if err != nil {
				return err
			}
			_, err = io.WriteString(s.out, out)
			return err
		},
	}
}
