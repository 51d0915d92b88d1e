// Command splash is the Splash inference server and its tools.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/peterbourgon/ff/v4"
)

// stdio is where a command reads and writes; tests swap it for buffers.
type stdio struct {
	in       io.Reader
	out, err io.Writer
}

// commands returns the subcommands of splash. Each lives in its own file as
// newXxxCmd(s *stdio) *ff.Command. Their flags go anywhere among their
// arguments (flagsAnywhere), but for the agent launchers': what follows a
// launcher's own flags is the agent's command line, its flags included.
func commands(s *stdio) []*ff.Command {
	cmds := []*ff.Command{
		newBenchCmd(s),
		newGenerateCmd(s),
		newPackCmd(s),
		newPullCmd(s),
		newServeCmd(s),
		newTemplateCmd(s),
		newTokenizeCmd(s),
		newVersionCmd(s),
	}
	for _, c := range cmds {
		c.Flags = flagsAnywhere{c.Flags.(*ff.FlagSet)}
	}
	cmds = append(cmds, newClaudeCmd(s), newCodexCmd(s), newHermesCmd(s), newOpencodeCmd(s))
	slices.SortFunc(cmds, func(a, b *ff.Command) int { return strings.Compare(a.Name, b.Name) })
	return cmds
}

// newRootCmd is `splash`, whose subcommands are commands(s).
func newRootCmd(s *stdio) *ff.Command {
	return &ff.Command{
		Name:        "splash",
		Usage:       "splash <COMMAND> [FLAGS]",
		ShortHelp:   "local LLM inference server for fleets of coding agents",
		Flags:       ff.NewFlagSet("splash"),
		Subcommands: commands(s),
	}
}

// run parses args (without the program name) and runs the chosen command.
// Every flag of every command can also be set as SPLASH_<FLAG> in env.
func run(ctx context.Context, args []string, s *stdio) error {
	root := newRootCmd(s)
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
