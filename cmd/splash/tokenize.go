package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/peterbourgon/ff/v4"

	"github.com/splash-inference/splash/tokenizer"
)

func newTokenizeCmd(s *stdio) *ff.Command {
	fs := ff.NewFlagSet("tokenize")
	dir := fs.StringLong("tokenizer", "", "directory with tokenizer.json: a tokenizer folder, a package or a checkpoint")
	special := fs.BoolLong("special", "parse special tokens written in the text (e.g. <|im_start|>)")
	return &ff.Command{
		Name:      "tokenize",
		Usage:     "splash tokenize --tokenizer DIR [--special] < TEXT",
		ShortHelp: "print the token ids of stdin as a JSON array",
		Flags:     fs,
		Exec: func(ctx context.Context, args []string) error {
			if *dir == "" {
				return errors.New("tokenize: --tokenizer is required")
			}
			tk, err := tokenizer.Load(*dir)
			if err != nil {
				return err
			}
			text, err := io.ReadAll(s.in)
			if err != nil {
				return fmt.Errorf("tokenize: reading stdin: %w", err)
			}
			ids := tk.Encode(string(text), *special)
			if ids == nil {
				ids = []int32{}
			}
			return printJSON(s.out, ids)
		},
	}
}
