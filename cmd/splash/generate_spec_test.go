package main

import (
	"encoding/json"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/splash-inference/splash/model/testmodel"
)

// specTraceJSON is generate's --json --spec-trace output.
type specTraceJSON struct {
	Tokens []struct {
		ID int32 `json:"id"`
	} `json:"tokens"`
	SpecTrace []struct {
		Position int     `json:"position"`
		Proposed []int32 `json:"proposed"`
		Accepted int     `json:"accepted"`
	} `json:"spec_trace"`
	Timings struct {
		DecodeSteps int `json:"decode_steps"`
		Speculation *struct {
			Steps              int     `json:"steps"`
			Proposed           int     `json:"proposed"`
			Accepted           int     `json:"accepted"`
			MeanAcceptedLength float64 `json:"mean_accepted_length"`
		} `json:"speculation"`
	} `json:"timings"`
}

// TestGenerateSpecTrace: for every --spec mode, generate --json
// --spec-trace gives --spec off's greedy tokens and a trace consistent
// with them: the steps follow one another (each at the last one's position
// plus its accepted tokens and the target's own), the first at the prompt's
// first generated token; a step's accepted proposals are the sequence's
// tokens after its position, and its first rejected proposal is not (the
// target chose otherwise); together the steps give every generated token
// after the first (which the prompt's pass gives). Sampled (--temperature
// 1), the trace holds the same way (rejection sampling never emits the
// rejected proposal), the tokens being the sample's. The timings'
// speculation summary (steps, proposed, accepted, mean accepted length)
// agrees with the trace, and is absent with --spec off. With --spec-fixed
// every step verifies a whole block (but where it would pass --max-tokens).
func TestGenerateSpecTrace(t *testing.T) {
	src := t.TempDir()
	spec := testmodel.Tiny("qwen3")
	if err := testmodel.Write(src, spec); err != nil {
		t.Fatal(err)
	}
	pkgDraft := filepath.Join(t.TempDir(), "draft")
	if _, err := runCmd(t, "pack", src, pkgDraft, "--quant", "f32", "--draft", src); err != nil {
		t.Fatal(err)
	}
	pkgDFlash := packDFlash(t, spec)
	prompt := []int32{9707, 11, 1879, 0, 9707, 11, 1879, 0, 9707, 11}
	ids := make([]string, len(prompt))
	for i, id := range prompt {
		ids[i] = strconv.Itoa(int(id))
	}
	const maxTokens = 24
	generate := func(t *testing.T, pkg string, flags ...string) specTraceJSON {
		t.Helper()
		args := append([]string{"generate", "--model", pkg, "--prompt-ids", strings.Join(ids, ","), "--max-tokens", strconv.Itoa(maxTokens),
			"--ignore-eos", "--json"}, flags...)
		out, err := runCmd(t, args...)
		if err != nil {
			t.Fatal(err)
		}
		var res specTraceJSON
		if err := json.Unmarshal([]byte(out), &res); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		return res
	}
	sampled := []string{"--temperature", "1", "--seed", "5"}
	for _, tc := range []struct {
		pkg, mode  string
		flags      []string
		speculates bool // some step must propose
	}{
		{pkgDraft, "off", nil, false},
		{pkgDraft, "ngram", nil, true},
		{pkgDraft, "draft", nil, true},
		{pkgDraft, "auto", nil, true},
		{pkgDFlash, "dflash", nil, true},
		{pkgDFlash, "auto", nil, true},
		{pkgDraft, "draft", sampled, true},
		{pkgDFlash, "dflash", sampled, true},
		{pkgDFlash, "dflash", []string{"--spec-fixed"}, true},
		{pkgDraft, "draft", []string{"--spec-fixed"}, true},
	} {
		t.Run(filepath.Base(tc.pkg)+"-"+tc.mode+strings.Join(tc.flags, ""), func(t *testing.T) {
			plain := generate(t, tc.pkg, tc.flags...)
			res := generate(t, tc.pkg, append([]string{"--spec", tc.mode, "--spec-trace"}, tc.flags...)...)
			if plain.SpecTrace != nil {
				t.Fatalf("a trace without --spec-trace: %+v", plain.SpecTrace)
			}
			seq := slices.Clone(prompt)
			greedy := tc.flags == nil || tc.flags[0] == "--spec-fixed"
			for i, tok := range res.Tokens {
				if greedy && (i >= len(plain.Tokens) || tok.ID != plain.Tokens[i].ID) {
					t.Fatalf("--spec %s generated %v, --spec off %v", tc.mode, res.Tokens, plain.Tokens)
				}
				seq = append(seq, tok.ID)
			}
			if len(res.Tokens) != maxTokens || res.SpecTrace == nil {
				t.Fatalf("%d tokens, trace %v", len(res.Tokens), res.SpecTrace)
			}
			pos, proposed, covered := len(prompt), 0, 1
			for i, s := range res.SpecTrace {
				if s.Position != pos || s.Accepted < 0 || s.Accepted > len(s.Proposed) || s.Proposed == nil {
					t.Fatalf("step %d %+v: want position %d and 0..len(proposed) accepted", i, s, pos)
				}
				for j, p := range s.Proposed {
					at := s.Position + 1 + j
					if at >= len(seq) {
						break
					}
					if kept := j < s.Accepted; kept != (p == seq[at]) {
						t.Fatalf("step %d %+v: proposal %d (%d) kept %v, the sequence has %d there", i, s, j, p, kept, seq[at])
					}
					if j >= s.Accepted {
						break
					}
				}
				proposed += len(s.Proposed)
				pos += s.Accepted + 1
				covered += s.Accepted + 1
			}
			last := res.SpecTrace[len(res.SpecTrace)-1]
			if covered < maxTokens || covered-last.Accepted-1 >= maxTokens {
				t.Fatalf("the steps give %d tokens (%d by the last), the output %d: %+v", covered, last.Accepted+1, maxTokens, res.SpecTrace)
			}
			t.Logf("%d steps, %d proposed", len(res.SpecTrace), proposed)
			accepted := covered - 1 - len(res.SpecTrace)
			sum := res.Timings.Speculation
			if plain.Timings.Speculation != nil || plain.Timings.DecodeSteps != maxTokens-1 {
				t.Fatalf("--spec off's timings: %+v", plain.Timings)
			}
			if tc.mode == "off" {
				if sum != nil {
					t.Fatalf("--spec off summarised speculation: %+v", sum)
				}
				return
			}
			if sum == nil || sum.Steps != len(res.SpecTrace) || res.Timings.DecodeSteps != sum.Steps || sum.Proposed != proposed || sum.Accepted != accepted ||
				math.Abs(sum.MeanAcceptedLength-float64(covered-1)/float64(len(res.SpecTrace))) > 1e-9 {
				t.Fatalf("timings %+v (speculation %+v), want %d steps, %d proposed, %d accepted", res.Timings, sum, len(res.SpecTrace), proposed, accepted)
			}
			if (proposed > 0) != tc.speculates {
				t.Fatalf("--spec %s proposed %d tokens", tc.mode, proposed)
			}
			if slices.Contains(tc.flags, "--spec-fixed") {
				// Every step verifies a whole block but those near the end,
				// which stop at --max-tokens.
				full := len(res.SpecTrace[0].Proposed)
				for i, s := range res.SpecTrace {
					if n := len(s.Proposed); n != full && s.Position+1+n < len(prompt)+maxTokens-1 {
						t.Fatalf("--spec-fixed: step %d proposed %d, the first %d: %+v", i, n, full, res.SpecTrace)
					}
				}
			}
		})
	}
}
