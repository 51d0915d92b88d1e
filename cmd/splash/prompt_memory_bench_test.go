package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"os"
	"regexp"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"

	"github.com/splash-inference/splash/model/testmodel"
)

// residentBytes reads the process's resident set from /proc (Linux).
func residentBytes() (int64, error) {
	raw, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0, err
	}
	f := strings.Fields(string(raw))
	if len(f) < 2 {
		return 0, fmt.Errorf("short /proc/self/statm: %q", raw)
	}
	pages, err := strconv.ParseInt(f[1], 10, 64)
	return pages * int64(os.Getpagesize()), err
}

// planFigure reads a figure from the memory plan serve printed: the first
// submatch of re, times unit.
func planFigure(b *testing.B, plan, re string, unit float64) float64 {
	b.Helper()
	m := regexp.MustCompile(re).FindStringSubmatch(plan)
	if m == nil {
		b.Fatalf("no %s in the memory plan:\n%s", re, plan)
	}
	v, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		b.Fatal(err)
	}
	return v * unit
}

// BenchmarkPromptMemory serves a small model (hidden 256, two layers, the
// real 151,936-token vocabulary) and sends it one prompt each of 1K, 8K
// and 16K tokens. Per prompt it reports alloc-MiB (what the process
// allocated while serving it), rss-MiB (resident memory right after, over
// what was resident before, garbage collected and returned) and held-MiB
// (the same once the garbage is collected), against the plan's figures:
// plan-kv-MiB (the KV cache the prompt's tokens take, whose pages it writes
// first), plan-step-MiB (a step's scratch at --max-batch-tokens, logits for
// every row included) and plan-attn-MiB (attention's scratch at the
// longest context).
//
// On the 2-core VM (go test -bench PromptMemory -benchtime 1x), before
// attention's scratch was reserved for the served context it grew to every
// chunk's context in turn: 1K, 8K and 16K tokens allocated 16, 526 and
// 1,597 MiB, rss +17, +206 and +233 MiB (the collector, paced by a heap
// that here holds a 128 MiB KV cache and in a real server gigabytes, let
// that much garbage stand), against 1, 8 and 16 MiB of KV planned; with the
// scratch reserved and the runtime's memory limit at the plan's total, they
// allocate 6.7, 2.2 and 3.9 MiB, rss +8.1, +13.6 and +23.7 MiB, held 7.4,
// 11.7 and 20.2 MiB: the prompt's KV pages and the attention scratch's.
func BenchmarkPromptMemory(b *testing.B) {
	if _, err := residentBytes(); err != nil {
		b.Skipf("no resident memory to read: %v", err)
	}
	dir := b.TempDir()
	spec := testmodel.Spec{Arch: "qwen3", Hidden: 256, Intermediate: 768, Layers: 2, Heads: 4, KVHeads: 2, HeadDim: 64,
		Tied: true, Seed: 1, MaxContext: 32768}
	if err := testmodel.Write(dir, spec); err != nil {
		b.Fatal(err)
	}
	addr, _, errb, stop := startServeLogs(b, "--model", dir, "--max-context", "17408", "--kv-memory", "128M", "--threads", "2")
	defer stop()
	plan := errb.String()
	kvPerToken := planFigure(b, plan, `KV per token\s+(\d+) B`, 1)
	stepScratch := planFigure(b, plan, `scratch\s+([\d.]+) MiB per token`, 1<<20) * planFigure(b, plan, `max (\d+) per step`, 1)
	attnScratch := planFigure(b, plan, `attention scratch\s+([\d.]+) MiB`, 1<<20)

	// settled is the resident memory once garbage is collected and
	// returned to the OS.
	settled := func() int64 {
		runtime.GC()
		debug.FreeOSMemory()
		rss, err := residentBytes()
		if err != nil {
			b.Fatal(err)
		}
		return rss
	}
	for _, n := range []int{1 << 10, 8 << 10, 16 << 10} {
		b.Run(fmt.Sprintf("tokens=%d", n), func(b *testing.B) {
			var rss, held, alloc float64
			for i := range b.N {
				ids := make([]int, n)
				for j := range ids {
					ids[j] = 1000 + (j*7+i*13+n)%50000 // distinct from other prompts: no prefix hit
				}
				rss0 := settled()
				var ms runtime.MemStats
				runtime.ReadMemStats(&ms)
				alloc0 := ms.TotalAlloc
				body, _ := json.Marshal(map[string]any{"prompt": ids, "max_tokens": 1})
				res, err := http.Post("http://"+addr+"/v1/completions", "application/json", bytes.NewReader(body))
				if err != nil {
					b.Fatal(err)
				}
				var out bytes.Buffer
				out.ReadFrom(res.Body)
				res.Body.Close()
				if res.StatusCode != 200 {
					b.Fatalf("status %d: %s", res.StatusCode, out.String())
				}
				rss1, err := residentBytes()
				if err != nil {
					b.Fatal(err)
				}
				runtime.ReadMemStats(&ms)
				rss += float64(rss1 - rss0)
				alloc += float64(ms.TotalAlloc - alloc0)
				held += float64(settled() - rss0)
			}
			mib := func(v float64) float64 { return v / (1 << 20) }
			b.ReportMetric(mib(rss/float64(b.N)), "rss-MiB")
			b.ReportMetric(mib(held/float64(b.N)), "held-MiB")
			b.ReportMetric(mib(alloc/float64(b.N)), "alloc-MiB")
			b.ReportMetric(mib(kvPerToken*float64(n)), "plan-kv-MiB")
			b.ReportMetric(mib(stepScratch), "plan-step-MiB")
			b.ReportMetric(mib(attnScratch), "plan-attn-MiB")
		})
	}
}

// TestLimitGoMemory checks that serving sets the runtime's soft memory
// limit to the plan's total and a margin, restores it after, and keeps a
// limit set before (GOMEMLIMIT).
func TestLimitGoMemory(t *testing.T) {
	prev := debug.SetMemoryLimit(math.MaxInt64)
	defer debug.SetMemoryLimit(prev)
	for _, tc := range []struct {
		name         string
		before       int64
		total, limit int64
	}{
		{"small plan", math.MaxInt64, 100 << 20, 100<<20 + planMargin},
		{"large plan", math.MaxInt64, 16 << 30, 16<<30 + 2<<30},
		{"GOMEMLIMIT kept", 1 << 30, 16 << 30, 1 << 30},
	} {
		t.Run(tc.name, func(t *testing.T) {
			debug.SetMemoryLimit(tc.before)
			restore := limitGoMemory(tc.total)
			if got := debug.SetMemoryLimit(-1); got != tc.limit {
				t.Errorf("limit %d, want %d", got, tc.limit)
			}
			restore()
			if got := debug.SetMemoryLimit(-1); got != tc.before {
				t.Errorf("limit after serving %d, want %d", got, tc.before)
			}
		})
	}
}
