// Command splash is the Splash inference server and its tools.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/peterbourgon/ff/v4"
)

// stdio is where a command reads and writes; tests swap it for buffers.
type stdio struct {
	in       io.Reader
	out, err io.Writer
}

// commands returns the subcommands of splash. Each lives in its own file as
// newXxxCmd(s *stdio) *ff.Command.
func commands(s *stdio) []*ff.Command {
	return []*ff.Command{
		newBenchCmd(s),
		newClaudeCmd(s),
		newCodexCmd(s),
		newGenerateCmd(s),
		newHermesCmd(s),
		newOpencodeCmd(s),
		newPackCmd(s),
		newPullCmd(s),
		newServeCmd(s),
		newTemplateCmd(s),
		newTokenizeCmd(s),
		newVersionCmd(s),
	}
}

// run parses args (without the program name) and runs the chosen command.
// Every flag of every command can also be set as SPLASH_<FLAG> in env.
func run(ctx context.Context, args []string, s *stdio) error {
	root := &ff.Command{
		Name:        "splash",
		Usage:       "splash <COMMAND> [FLAGS]",
		ShortHelp:   "local LLM inference server for fleets of coding agents",
		Flags:       ff.NewFlagSet("splash"),
		Subcommands: commands(s),
	}
	err := root.ParseAndRun(ctx, args, ff.WithEnvVarPrefix(envPrefix))
	switch {
	case errors.Is(err, ff.ErrHelp):
		fmt.Fprint(s.err, helpText(root.GetSelected()))
		return nil
	case errors.Is(err, ff.ErrNoExec):
		fmt.Fprint(s.err, helpText(root.GetSelected()))
		return errors.New("splash: no command given")
	}
	return err
}

func main() {
	s := &stdio{in: os.Stdin, out: os.Stdout, err: os.Stderr}
	if err := run(context.Background(), os.Args[1:], s); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
