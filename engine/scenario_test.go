package engine

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/splash-inference/splash/engine/spec"
	"github.com/splash-inference/splash/engine/stop"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the expected output of testdata/*.txt scenarios")

// TestScenarios runs the data-driven scheduler scenarios in testdata. Each
// file is a list of cases: command lines, a "----" line, the expected output,
// and a blank line. Commands:
//
//	config block=B blocks=N budget=T running=R [len=L] [draft=K] [cycle]
//	                  (cycle: the fake model continues 0 1 2 ... mod 16)
//	add id=I prompt=N [base=B] [max=M] [stop=T] [logprobs]
//	step [n]          run n steps (default 1), print each plan and output, then stats
//	cancel id=I
//	run               step until idle, print only the final outputs
//
// Every step checks the block pool's invariants; the end of a file checks
// for leaks. go test -run TestScenarios -rewrite regenerates the outputs.
func TestScenarios(t *testing.T) {
	files, err := filepath.Glob("testdata/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no scenarios: %v", err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) { runScenarioFile(t, f) })
	}
}

func runScenarioFile(t *testing.T, path string) {
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var h *harness
	var rewritten strings.Builder
	cases := strings.Split(strings.TrimRight(string(raw), "\n")+"\n", "\n\n")
	for _, c := range cases {
		if strings.TrimSpace(c) == "" {
			continue
		}
		lines := strings.Split(strings.Trim(c, "\n"), "\n")
		sep := slices.Index(lines, "----")
		if sep < 0 {
			t.Fatalf("%s: case without a ---- line:\n%s", path, c)
		}
		cmds, want := strings.Join(lines[:sep], "\n")+"\n", strings.Join(lines[sep+1:], "\n")
		var got strings.Builder
		for _, line := range lines[:sep] {
			if line == "" || strings.HasPrefix(line, "#") {
				continue
			}
			h = scenarioCommand(t, h, line, &got)
		}
		if *rewrite {
			fmt.Fprintf(&rewritten, "%s----\n%s\n", cmds, got.String())
			continue
		}
		if strings.TrimSpace(got.String()) != strings.TrimSpace(want) {
			t.Errorf("%s: after\n%s\ngot:\n%s\nwant:\n%s", path, cmds, got.String(), want)
		}
	}
	if *rewrite {
		if err := os.WriteFile(path, []byte(rewritten.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	closeScenario(h)
}

// closeScenario cancels whatever a scenario left running and checks that
// the pool is then empty.
func closeScenario(h *harness) {
	if h == nil {
		return
	}
	for len(h.s.running) > 0 {
		h.s.Cancel(h.s.running[0].id, stop.Cancelled)
	}
	for len(h.s.waiting) > 0 {
		h.s.Cancel(h.s.waiting[0].id, stop.Cancelled)
	}
	h.checkLeaks()
}

// scenarioCommand runs one command line, writing its output to out.
func scenarioCommand(t *testing.T, h *harness, line string, out *strings.Builder) *harness {
	t.Helper()
	fields := strings.Fields(line)
	args := map[string]int{}
	for _, f := range fields[1:] {
		k, v, hasValue := strings.Cut(f, "=")
		n := 1
		if hasValue {
			var err error
			if n, err = strconv.Atoi(v); err != nil {
				t.Fatalf("%q: %v", line, err)
			}
		}
		args[k] = n
	}
	switch fields[0] {
	case "config":
		closeScenario(h)
		cfg := Config{BlockSize: args["block"], NumBlocks: args["blocks"], MaxBatchTokens: args["budget"],
			MaxRunning: args["running"], MaxModelLen: args["len"], MaxDraft: args["draft"]}
		var p spec.Proposer
		if cfg.MaxDraft > 0 {
			p = spec.Ngram{}
		}
		h := newHarness(t, cfg, p)
		h.m.cycle = args["cycle"] == 1
		return h
	case "add":
		r := Request{ID: uint64(args["id"]), Prompt: prompt(args["prompt"], int32(args["base"])), MaxTokens: args["max"], PromptLogprobs: args["logprobs"] == 1}
		if s, ok := args["stop"]; ok {
			r.StopTokens = []int32{int32(s)}
		}
		h.add(r, greedy())
	case "cancel":
		fmt.Fprintf(out, "cancel %d: %v\n", args["id"], h.s.Cancel(uint64(args["id"]), stop.Cancelled))
	case "step":
		n := max(args["step"], 1)
		if len(fields) > 1 {
			n, _ = strconv.Atoi(fields[1])
		}
		h.onPlan = func(p *Plan) { describePlan(out, p) }
		for range n {
			before := snapshotOut(h)
			if !h.step() {
				fmt.Fprintln(out, "  idle")
				break
			}
			describeOutputs(out, h, before)
		}
		h.onPlan = nil
		st := h.s.Stats()
		fmt.Fprintf(out, "waiting=%d running=%d preemptions=%d blocks used=%d cached=%d hit=%d\n",
			st.Waiting, st.Running, st.Preemptions, st.KV.Used, st.KV.Cached, st.KV.HitTokens)
	case "run":
		h.run()
		ids := make([]uint64, 0, len(h.out))
		for id := range h.out {
			ids = append(ids, id)
		}
		for _, id := range sortedIDs(ids) {
			fmt.Fprintf(out, "%d: %v %s\n", id, h.out[id], h.reason[id])
		}
		st := h.s.Stats()
		fmt.Fprintf(out, "steps=%d preemptions=%d hit=%d\n", h.steps, st.Preemptions, st.KV.HitTokens)
	default:
		t.Fatalf("unknown command %q", line)
	}
	return h
}

func describePlan(out *strings.Builder, p *Plan) {
	for i := range p.Rows {
		r := &p.Rows[i]
		kind := "prefill"
		if r.Kind == DecodeRow {
			kind = "decode"
		}
		fmt.Fprintf(out, "  row seq=%d %s start=%d tokens=%d logits=%d", r.Seq, kind, r.Start, len(r.Tokens)+len(r.Draft), r.NumLogits())
		if len(r.Draft) > 0 {
			fmt.Fprintf(out, " draft=%v", r.Draft)
		}
		fmt.Fprintln(out)
	}
}

func snapshotOut(h *harness) map[uint64]int {
	m := make(map[uint64]int, len(h.out))
	for id, o := range h.out {
		m[id] = len(o)
	}
	return m
}

func describeOutputs(out *strings.Builder, h *harness, before map[uint64]int) {
	ids := make([]uint64, 0, len(h.out))
	for id, o := range h.out {
		if len(o) > before[id] {
			ids = append(ids, id)
		}
	}
	for _, id := range sortedIDs(ids) {
		fmt.Fprintf(out, "  out seq=%d %v", id, h.out[id][before[id]:])
		if r, done := h.reason[id]; done {
			fmt.Fprintf(out, " finished=%s", r)
		}
		fmt.Fprintln(out)
	}
}

func sortedIDs(ids []uint64) []uint64 {
	slices.Sort(ids)
	return ids
}
