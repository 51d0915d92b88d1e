package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/peterbourgon/ff/v4"

	"github.com/splash-inference/splash/model/testmodel"
)

// readmeCommand is one command line of a README form: run for real, or,
// for a server, the network or an agent, only parsed. Its arguments may
// name $CKPT (a tiny Hugging Face checkpoint) and $OUT (a fresh directory).
type readmeCommand struct {
	args  []string
	in    string // stdin of a run
	parse bool   // parse only
	// check is given a run's stdout, or the parsed command's flags and
	// arguments.
	check func(t *testing.T, out string, fs ff.Flags) bool
}

// readmeCommands are the forms of README.md's command table, as written
// there, each with command lines in that form: flags where the README puts
// them, and before and between the arguments too.
var readmeCommands = map[string][]readmeCommand{
	"splash serve": {
		{args: []string{"serve"}, parse: true, check: argsAre()},
		{args: []string{"serve", "--kv-cache-type", "f32", "--port", "0"}, parse: true, check: flagIs("kv-cache-type", "f32")},
		{args: []string{"serve", "--allow-remote-media", "--max-pdf-pages", "20", "--max-media-bytes", "16M"}, parse: true, check: flagIs("max-pdf-pages", "20")},
	},
	"splash generate": {
		{args: []string{"generate", "--model", "$CKPT", "--prompt", "Hi", "--max-tokens", "2", "--ignore-eos"}, check: outHas("")},
		{args: []string{"generate", "--model", "$CKPT", "--prompt-ids", "1,2", "--echo", "--logprobs", "2", "--json", "--max-tokens", "2"}, check: outHas(`"top"`)},
	},
	`splash pack SRC DST --quant q4\|q8\|bf16\|f32 [--draft DIR]`: {
		{args: []string{"pack", "$CKPT", "$OUT/q4", "--quant", "q4"}, check: outHas("wrote")},
		{args: []string{"pack", "$CKPT", "$OUT/q8", "--quant", "q8", "--draft", "$CKPT"}, check: outHas("wrote")},
		{args: []string{"pack", "--quant", "bf16", "$CKPT", "$OUT/bf16"}, check: outHas("wrote")},
		{args: []string{"pack", "$CKPT", "--quant=f32", "$OUT/f32"}, check: outHas("wrote")},
	},
	`splash tokenize --tokenizer DIR [--special]`: {
		{args: []string{"tokenize", "--tokenizer", "$CKPT"}, in: "<|im_start|>Hi", check: outHas("[")},
		{args: []string{"tokenize", "--tokenizer", "$CKPT", "--special"}, in: "<|im_start|>Hi", check: outHas("[151644,")},
		{args: []string{"tokenize", "--special", "--tokenizer", "$CKPT"}, in: "<|im_start|>Hi", check: outHas("[151644,")},
	},
	`splash template --tokenizer DIR [--spans\|--tokens]`: {
		{args: []string{"template", "--tokenizer", "$CKPT"}, in: `{"messages":[{"role":"user","content":"Hi"}]}`, check: outHas("<|im_start|>user\nHi")},
		{args: []string{"template", "--spans", "--tokenizer", "$CKPT"}, in: `{"messages":[{"role":"user","content":"Hi"}]}`, check: outHas("content_spans")},
		{args: []string{"template", "--tokenizer", "$CKPT", "--tokens"}, in: `{"messages":[{"role":"user","content":"Hi"}]}`, check: outHas("151644")},
	},
	"splash bench": {
		{args: []string{"bench"}, parse: true, check: argsAre()},
		{args: []string{"bench", "--compare", "a.json", "b.json", "--plot", "ab.svg"}, parse: true, check: argsAre("b.json")},
	},
	"splash pull owner/repo[@rev]": {
		{args: []string{"pull", "Qwen/Qwen3-0.6B"}, parse: true, check: argsAre("Qwen/Qwen3-0.6B")},
		{args: []string{"pull", "Qwen/Qwen3-0.6B@main"}, parse: true, check: argsAre("Qwen/Qwen3-0.6B@main")},
	},
	`splash claude\|codex\|opencode\|hermes [-- ARGS]`: agentCommands("claude", "codex", "opencode", "hermes"),
	"splash version": {
		{args: []string{"version"}, check: outHas("splash ")},
	},
}

// agentCommands are an agent launcher's command lines: its own flags, then
// the agent's after "--".
func agentCommands(names ...string) []readmeCommand {
	var cs []readmeCommand
	for _, n := range names {
		cs = append(cs,
			readmeCommand{args: []string{n}, parse: true, check: argsAre()},
			readmeCommand{args: []string{n, "--", "--resume", "x"}, parse: true, check: argsAre("--resume", "x")},
			readmeCommand{args: []string{n, "--port", "9000", "--", "-p", "hi"}, parse: true, check: argsAre("-p", "hi")})
	}
	return cs
}

func argsAre(want ...string) func(*testing.T, string, ff.Flags) bool {
	return func(t *testing.T, _ string, fs ff.Flags) bool {
		if got := fs.GetArgs(); !slices.Equal(got, want) && len(got)+len(want) > 0 {
			t.Errorf("arguments %q, want %q", got, want)
			return false
		}
		return true
	}
}

func flagIs(name, want string) func(*testing.T, string, ff.Flags) bool {
	return func(t *testing.T, _ string, fs ff.Flags) bool {
		if f, ok := fs.GetFlag(name); !ok || f.GetValue() != want {
			t.Errorf("--%s is not %q", name, want)
			return false
		}
		return true
	}
}

func outHas(want string) func(*testing.T, string, ff.Flags) bool {
	return func(t *testing.T, out string, _ ff.Flags) bool {
		if out == "" || !strings.Contains(out, want) {
			t.Errorf("output %q, want %q in it", out, want)
			return false
		}
		return true
	}
}

// readmeForms are the command forms of README.md's command table: the
// first cell of each row, as written.
func readmeForms(t *testing.T) []string {
	root, err := testmodel.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(b), "\n## Commands\n")
	if !ok {
		t.Fatal("README.md has no Commands section")
	}
	var forms []string
	for _, line := range strings.Split(table, "\n") {
		if strings.HasPrefix(line, "## ") {
			break
		}
		if cell, ok := strings.CutPrefix(line, "| `"); ok {
			form, _, _ := strings.Cut(cell, "`")
			forms = append(forms, form)
		}
	}
	return forms
}

// TestReadmeCommands runs the command lines of every form of README.md's
// command table, as written there (the table and readmeCommands list the
// same forms): the cheap ones for real on a tiny checkpoint, the server,
// the network's and the agents' parsed.
func TestReadmeCommands(t *testing.T) {
	forms := readmeForms(t)
	var listed []string
	for f := range readmeCommands {
		listed = append(listed, f)
	}
	slices.Sort(listed)
	if sorted := slices.Sorted(slices.Values(forms)); !slices.Equal(sorted, listed) {
		t.Fatalf("README.md's command forms %q, the test's %q", sorted, listed)
	}
	ckpt, out := t.TempDir(), t.TempDir()
	if err := testmodel.Write(ckpt, testmodel.Tiny("qwen3")); err != nil {
		t.Fatal(err)
	}
	dirs := strings.NewReplacer("$CKPT", ckpt, "$OUT", out)
	for _, form := range forms {
		for _, c := range readmeCommands[form] {
			args := make([]string, len(c.args))
			for i, a := range c.args {
				args[i] = dirs.Replace(a)
			}
			var stdout, stderr bytes.Buffer
			s := &stdio{in: strings.NewReader(c.in), out: &stdout, err: &stderr}
			var fs ff.Flags
			var err error
			if c.parse {
				root := newRootCmd(s)
				err = root.Parse(args, ff.WithEnvVarPrefix(envPrefix))
				fs = root.GetSelected().Flags
			} else {
				err = run(context.Background(), args, s)
			}
			if err != nil {
				t.Errorf("%s: %q: %v\n%s", form, c.args, err, stderr.String())
				continue
			}
			if !c.check(t, stdout.String(), fs) {
				t.Errorf("%s: %q", form, c.args)
			}
		}
	}
}
