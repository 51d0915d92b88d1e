package main

import (
	"fmt"
	"io"
	"math"
	"net/http"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// What the soak test measures to tell an idle server from a leaking one:
// the server's gauges, live goroutines and the live heap.

// soakMetrics are the server's gauges that must return to idle.
type soakMetrics struct {
	inFlight, running, waiting, blocksUsed, generated int64
}

// readSoakMetrics scrapes /metrics.
func readSoakMetrics(client *http.Client, base string) (soakMetrics, error) {
	res, err := client.Get(base + "/metrics")
	if err != nil {
		return soakMetrics{}, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return soakMetrics{}, err
	}
	var m soakMetrics
	fields := map[string]*int64{
		"splash_http_generations_in_flight": &m.inFlight, "splash_requests_running": &m.running,
		"splash_requests_waiting": &m.waiting, "splash_kv_blocks_used": &m.blocksUsed,
		"splash_generation_tokens_total": &m.generated,
	}
	seen := 0
	for _, line := range strings.Split(string(b), "\n") {
		name, value, ok := strings.Cut(line, " ")
		if p, known := fields[name]; ok && known {
			if *p, err = strconv.ParseInt(value, 10, 64); err != nil {
				return m, fmt.Errorf("metric %s: %w", name, err)
			}
			seen++
		}
	}
	if seen != len(fields) {
		return m, fmt.Errorf("/metrics lacks some of %v:\n%s", fields, b)
	}
	return m, nil
}

// waitSoakIdle waits until no generation is in flight and no KV block is
// referenced (a block still held then is a leak), and returns the metrics.
func waitSoakIdle(t *testing.T, client *http.Client, base string) soakMetrics {
	t.Helper()
	deadline := time.Now().Add(soakSettle)
	for {
		m, err := readSoakMetrics(client, base)
		if err != nil {
			t.Fatal(err)
		}
		if m.inFlight == 0 && m.running == 0 && m.waiting == 0 && m.blocksUsed == 0 {
			return m
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server did not return to idle: %+v", m)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitGoroutines waits until at most limit goroutines are live (limit < 0:
// until the count stops changing) and returns the count. Idle fasthttp
// workers are not counted: the server's worker pool keeps them for a while
// after a connection closes, by design, and they hold no request.
func waitGoroutines(t *testing.T, limit int) int {
	t.Helper()
	deadline := time.Now().Add(soakSettle)
	prev := -1
	for {
		n := liveGoroutines()
		if (limit < 0 && n == prev) || (limit >= 0 && n <= limit) {
			return n
		}
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("%d goroutines live, at most %d allowed (baseline and slack):\n%s", n, limit, buf[:runtime.Stack(buf, true)])
		}
		prev = n
		time.Sleep(50 * time.Millisecond)
	}
}

// waitStoppedServers waits until servers stopped earlier (by an earlier
// test or subtest) are unreachable, so their memory is not in the baseline
// and then missing from the measurement after the soak, hiding a leak. A
// fasthttp server's worker-pool cleaner sleeps for MaxIdleWorkerDuration
// (10 s) between rounds and holds the whole server, model and KV cache
// included, until it wakes after the server stopped: one cleaner must be
// left, the running server's.
func waitStoppedServers(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(soakSettle)
	for {
		buf := make([]byte, 1<<20)
		stacks := string(buf[:runtime.Stack(buf, true)])
		if strings.Count(stacks, "fasthttp.(*workerPool).Start.func") <= 1 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("servers stopped earlier are still reachable:\n%s", stacks)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// liveGoroutines counts goroutines other than idle fasthttp workers.
func liveGoroutines() int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	count := 0
	for _, g := range strings.Split(string(buf), "\n\n") {
		idleWorker := strings.Contains(g, "fasthttp.(*workerPool).workerFunc") && !strings.Contains(g, "serveConn")
		if strings.HasPrefix(g, "goroutine ") && !idleWorker {
			count++
		}
	}
	return count
}

// soakProfileRate is the heap profile's sampling rate during the soak: at
// one sample per 64 KiB, the model's step scratch (each buffer is at least
// one row of logits, 600 KB with the Qwen3 vocabulary) is all but always
// sampled.
const soakProfileRate = 64 << 10

// liveHeap returns the heap in use after a full collection and, of it,
// the model's step scratch: buffers the forward pass grows to the largest
// batch it has run (model.grow), which depend on how the scheduler happened
// to batch rows, not on how many requests came and went, so the leak check
// leaves them out. They are found in the heap profile (sampled: estimated).
func liveHeap() (heap, scratch uint64) {
	var ms runtime.MemStats
	runtime.GC()
	runtime.GC() // the profile lags one cycle; the second also frees what finalizers released
	runtime.ReadMemStats(&ms)
	for _, r := range memProfile() {
		if inModelScratch(r.Stack()) {
			scratch += inUseEstimate(r)
		}
	}
	return ms.HeapAlloc, min(scratch, ms.HeapAlloc)
}

// memProfile returns the heap profile as of the last collection.
func memProfile() []runtime.MemProfileRecord {
	for n := 256; ; n *= 2 {
		records := make([]runtime.MemProfileRecord, n)
		if got, ok := runtime.MemProfile(records, false); ok {
			return records[:got]
		}
	}
}

// inUseEstimate scales a sampled record's bytes in use: it stands for
// 1/(1-e^(-size/rate)) allocations of its average size.
func inUseEstimate(r runtime.MemProfileRecord) uint64 {
	if r.InUseBytes() <= 0 || r.AllocObjects == 0 {
		return 0
	}
	size := float64(r.AllocBytes) / float64(r.AllocObjects)
	return uint64(float64(r.InUseBytes()) / (1 - math.Exp(-size/float64(runtime.MemProfileRate))))
}

// heapSites estimates the bytes in use per allocation site, named by its
// innermost frames (after a liveHeap call).
func heapSites() map[string]uint64 {
	sites := map[string]uint64{}
	for _, r := range memProfile() {
		if b := inUseEstimate(r); b > 0 {
			var names []string
			frames := runtime.CallersFrames(r.Stack())
			for f, more := frames.Next(); len(names) < 4; f, more = frames.Next() {
				names = append(names, f.Function)
				if !more {
					break
				}
			}
			sites[strings.Join(names, " < ")] += b
		}
	}
	return sites
}

// logHeapGrowth logs the allocation sites that grew most since base.
func logHeapGrowth(t *testing.T, base, now map[string]uint64) {
	type growth struct {
		site  string
		bytes int64
	}
	var gs []growth
	for site, b := range now {
		if d := int64(b) - int64(base[site]); d > 0 {
			gs = append(gs, growth{site, d})
		}
	}
	slices.SortFunc(gs, func(a, b growth) int { return int(b.bytes - a.bytes) })
	for _, g := range gs[:min(len(gs), 10)] {
		t.Logf("heap grew %.2f MiB at %s", heapMiB(uint64(g.bytes)), g.site)
	}
}

// inModelScratch reports whether an allocation's stack is the model's
// scratch growth.
func inModelScratch(stack []uintptr) bool {
	frames := runtime.CallersFrames(stack)
	for {
		f, more := frames.Next()
		if f.Function == "github.com/splash-inference/splash/model.grow" {
			return true
		}
		if !more {
			return false
		}
	}
}

// heapMiB converts bytes to MiB for messages.
func heapMiB(b uint64) float64 { return float64(b) / (1 << 20) }
