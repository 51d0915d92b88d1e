package main

import (
	"strings"
	"testing"

	"github.com/splash-inference/splash/metal"
	"github.com/splash-inference/splash/model"
)

// TestPlanTablePrintsStates: a model with state layers gets its state per
// sequence and the states' total in the plan (a spare each when it
// speculates); a dense one's plan has no state lines.
func TestPlanTablePrintsStates(t *testing.T) {
	f := &serveFlags{maxRunning: 64, maxBatchTokens: 512}
	base := model.Plan{KVType: metal.KVF16, KVPerToken: 2048, Context: 4096, BlockSize: 32, Blocks: 200, MaxBatchTokens: 512, Budget: 1 << 30}
	hybrid := base
	hybrid.StatePerSeq, hybrid.StateSlots, hybrid.MaxRunning = 3<<20, 5, 5
	speculating := hybrid
	speculating.SpareSlots = 5
	for _, tc := range []struct {
		name string
		p    model.Plan
		want []string
		not  []string
	}{
		{"dense", base, []string{"KV per token       2048 B (f16)", "KV cache           200 blocks × 32 tokens"}, []string{"state"}},
		{"hybrid", hybrid, []string{"state per sequence  3145728 B", "states              5 running sequences × 3.0 MiB = 15.0 MiB (--max-running 64)"}, nil},
		{"hybrid, speculating", speculating, []string{"states              5 running sequences × 2 × 3.0 MiB = 30.0 MiB (a spare each"}, nil},
	} {
		table := plan{Plan: tc.p}.table(f)
		for _, w := range tc.want {
			if !strings.Contains(table, w) {
				t.Errorf("%s: no %q in\n%s", tc.name, w, table)
			}
		}
		for _, n := range tc.not {
			if strings.Contains(table, n) {
				t.Errorf("%s: %q in\n%s", tc.name, n, table)
			}
		}
	}
}
