package main

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/peterbourgon/ff/v4"
)

// TestFlagsAnywhere: flags before, between and after the arguments, with
// values as `--quant q4` and `--quant=q4`, booleans alone or with a value,
// repeated list flags, "--" ending the flags; and a bad flag anywhere
// fails as it would first.
func TestFlagsAnywhere(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		quant   string // the flags' values after parsing, as "" for defaults
		special string
		plots   string
		rest    []string // the arguments
		wantErr string
	}{
		{args: []string{"SRC", "DST", "--quant", "q4"}, quant: "q4", rest: []string{"SRC", "DST"}},
		{args: []string{"--quant", "q4", "SRC", "DST"}, quant: "q4", rest: []string{"SRC", "DST"}},
		{args: []string{"SRC", "--quant=q8", "DST"}, quant: "q8", rest: []string{"SRC", "DST"}},
		{args: []string{"SRC", "--special", "DST"}, special: "true", rest: []string{"SRC", "DST"}},
		{args: []string{"SRC", "DST", "--special"}, special: "true", rest: []string{"SRC", "DST"}},
		{args: []string{"SRC", "--special", "false", "DST"}, special: "false", rest: []string{"SRC", "DST"}},
		{args: []string{"SRC", "--special=true", "DST", "--quant", "q8"}, quant: "q8", special: "true", rest: []string{"SRC", "DST"}},
		{args: []string{"--plot", "a.svg", "SRC", "--plot", "b.svg"}, plots: "a.svg, b.svg", rest: []string{"SRC"}},
		{args: []string{"SRC", "--", "--quant", "q4", "-x"}, rest: []string{"SRC", "--quant", "q4", "-x"}},
		{args: []string{"--quant", "q4", "--", "SRC"}, quant: "q4", rest: []string{"SRC"}},
		{args: []string{"--", "--special"}, rest: []string{"--special"}},
		{args: []string{"SRC", "DST"}, rest: []string{"SRC", "DST"}},
		{args: nil},
		{args: []string{"SRC", "DST", "--quant", "q5"}, wantErr: `set "q5"`},
		{args: []string{"SRC", "--nope", "DST"}, wantErr: `unknown flag "nope"`},
		{args: []string{"SRC", "DST", "--quant"}, wantErr: "missing value"},
		{args: []string{"SRC", "--help"}, wantErr: ff.ErrHelp.Error()},
	} {
		fs := ff.NewFlagSet("test")
		quant := fs.StringEnum(0, "quant", "", "", "q4", "q8")
		special := fs.BoolLong("special", "")
		plots := fs.StringListLong("plot", "")
		err := flagsAnywhere{fs}.Parse(tc.args)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%q: error %v, want %q", tc.args, err, tc.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tc.args, err)
			continue
		}
		// set is a flag's value where the arguments set it, else "".
		set := func(name, v string) string {
			if f, _ := fs.GetFlag(name); !f.IsSet() {
				return ""
			}
			return v
		}
		got := [3]string{set("quant", *quant), set("special", strconv.FormatBool(*special)), set("plot", strings.Join(*plots, ", "))}
		if want := [3]string{tc.quant, tc.special, tc.plots}; got != want {
			t.Errorf("%q: --quant, --special, --plot %q, want %q", tc.args, got, want)
		}
		if rest := fs.GetArgs(); !slices.Equal(rest, tc.rest) && len(rest)+len(tc.rest) > 0 {
			t.Errorf("%q: arguments %q, want %q", tc.args, rest, tc.rest)
		}
	}
}
