package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/peterbourgon/ff/v4"
)

// TestHelpListsEveryFlagWithEnvVar checks `splash CMD --help` for every
// command: each flag appears with its environment variable, and flags with
// a default show it.
func TestHelpListsEveryFlagWithEnvVar(t *testing.T) {
	for _, cmd := range commands(&stdio{}) {
		t.Run(cmd.Name, func(t *testing.T) {
			var out, errw bytes.Buffer
			if err := run(context.Background(), []string{cmd.Name, "--help"}, &stdio{in: strings.NewReader(""), out: &out, err: &errw}); err != nil {
				t.Fatalf("--help: %v", err)
			}
			help := errw.String()
			if !strings.Contains(help, "USAGE") {
				t.Fatalf("no usage section:\n%s", help)
			}
			cmd.Flags.WalkFlags(func(f ff.Flag) error {
				name, ok := f.GetLongName()
				if !ok {
					return nil
				}
				line := flagLine(help, name)
				if line == "" {
					t.Errorf("flag --%s missing from help:\n%s", name, help)
					return nil
				}
				if want := "$" + envVar(name); !strings.Contains(line, want) {
					t.Errorf("flag --%s: %q lacks %s", name, line, want)
				}
				if def := f.GetDefault(); def != "" && !strings.Contains(line, "(default: "+def+")") {
					t.Errorf("flag --%s: %q lacks its default %q", name, line, def)
				}
				return nil
			})
		})
	}
}

// flagLine is the help line that documents --name.
func flagLine(help, name string) string {
	for _, l := range strings.Split(help, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "--"+name+" ") {
			return l
		}
	}
	return ""
}

func TestEnvVarNames(t *testing.T) {
	for _, tc := range []struct{ flag, want string }{
		{"port", "SPLASH_PORT"},
		{"max-context", "SPLASH_MAX_CONTEXT"},
		{"api-key", "SPLASH_API_KEY"},
		{"max-image-pixels", "SPLASH_MAX_IMAGE_PIXELS"},
	} {
		if got := envVar(tc.flag); got != tc.want {
			t.Errorf("envVar(%q) = %q, want %q", tc.flag, got, tc.want)
		}
	}
}

func TestVersion(t *testing.T) {
	var out bytes.Buffer
	if err := run(context.Background(), []string{"version"}, &stdio{out: &out, err: &out}); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out.String(), "splash ") || !strings.Contains(out.String(), "kernels cpu/") {
		t.Fatalf("version output %q", out.String())
	}
	if err := run(context.Background(), []string{"version", "extra"}, &stdio{out: &out, err: &out}); err == nil {
		t.Fatal("version with an argument: want an error")
	}
}
