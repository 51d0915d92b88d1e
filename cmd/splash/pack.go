package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/peterbourgon/ff/v4"

	"github.com/splash-inference/splash/metal"
	"github.com/splash-inference/splash/model"
)

func newPackCmd(s *stdio) *ff.Command {
	fs := ff.NewFlagSet("pack")
	quant := fs.StringEnum(0, "quant", "weight type of the package: q4, q8, bf16 or f32", "q4", "q8", "bf16", "f32")
	draft := fs.StringLong("draft", "", "Hugging Face checkpoint of a draft to include: a small causal LM, or a DFlash/DFlash2 block-diffusion draft (its kind is recorded)")
	name := fs.StringLong("name", "", "package name (default: the source directory's name)")
	return &ff.Command{
		Name:      "pack",
		Usage:     "splash pack [FLAGS] SRC DST",
		ShortHelp: "convert a Hugging Face checkpoint into a Splash package",
		LongHelp:  "Reads config.json and *.safetensors from SRC and writes a package to DST (which must not exist).",
		Flags:     fs,
		Exec: func(ctx context.Context, args []string) error {
			if len(args) != 2 {
				return errors.New("pack: want SRC and DST")
			}
			q, err := metal.ParseDType(*quant)
			if err != nil {
				return fmt.Errorf("pack: --quant: %w", err)
			}
			st, err := model.Pack(args[0], args[1], model.PackOptions{Quant: q, Draft: *draft, Name: *name, Progress: s.err})
			if err != nil {
				return err
			}
			fmt.Fprintf(s.out, "wrote %s: %d tensors, %.1f MB of weights in %s\n", args[1], st.Tensors, float64(st.Bytes)/1e6, st.Elapsed.Round(1e6))
			return nil
		},
	}
}
