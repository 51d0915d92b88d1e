package actors

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/splash-inference/splash/engine"
	"github.com/splash-inference/splash/engine/kvcache"
	"github.com/splash-inference/splash/engine/kvdisk"
	"github.com/splash-inference/splash/metal"
	"github.com/splash-inference/splash/model"
)

// newDiskEngine is an engine of blocks 16-token blocks over the disk store s.
func newDiskEngine(t *testing.T, m model.Model, blocks int, s *kvdisk.Store) *Engine {
	t.Helper()
	e, err := New(Config{Model: m, Spec: "off", KVType: metal.KVF16, NewDecoder: func() TextDecoder { return idDecoder{} },
		Scheduler: engine.Config{NumBlocks: blocks, BlockSize: 16, MaxBatchTokens: 256, MaxRunning: 8}, Disk: s,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func openDisk(t *testing.T, dir string) *kvdisk.Store {
	t.Helper()
	s, err := kvdisk.Open(kvdisk.Config{Dir: dir, Budget: 1 << 30})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// metric returns the value line of a metric in the engine's /metrics.
func metric(e *Engine, name string) string {
	var b bytes.Buffer
	e.WriteMetrics(&b)
	for l := range strings.Lines(b.String()) {
		if v, ok := strings.CutPrefix(l, name+" "); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// TestDiskTierServesEvictedPrefix: with a pool too small for two prompts,
// a prompt's blocks evicted by another's are written to disk, and the
// prompt resent is served from there (the prefix hit counts them), with
// the output of a cold run: in the same engine, in a new engine over the
// same directory (a restart), and after a record was corrupted and
// another truncated, when the hit stops before the first damaged block
// and the rest is recomputed. No block leaks.
func TestDiskTierServesEvictedPrefix(t *testing.T) {
	const bs, n = 16, 4
	m := tinyModel(t)
	a := make([]int32, 5*bs+3)
	for j := range a {
		a[j] = int32(100 + (j*13)%50)
	}
	other := make([]int32, 6*bs+4)
	for j := range other {
		other[j] = int32(60 + (j*7)%40)
	}
	cold := greedyAlone(t, m, a, n)
	dir := t.TempDir()

	s := openDisk(t, dir)
	e := newDiskEngine(t, m, 8, s)
	if r := generate(t, e, a, n); !slices.Equal(r.tokens, cold) {
		t.Fatalf("first run %v, cold %v", r.tokens, cold)
	}
	generate(t, e, other, n) // evicts a's blocks but its first
	waitIdle(t, e)
	s.Flush()
	if st := s.Stats(); st.Records < 4 {
		t.Fatalf("%d records on disk after the eviction, want a's 4 evicted blocks at least", st.Records)
	}
	r := generate(t, e, a, n)
	if !slices.Equal(r.tokens, cold) || r.usage.CachedTokens != 5*bs {
		t.Fatalf("resent: %v with %d cached tokens, want %v with %d", r.tokens, r.usage.CachedTokens, cold, 5*bs)
	}
	if got := metric(e, "splash_prefix_cache_disk_hit_tokens_total"); got != "64" {
		t.Fatalf("disk hit tokens %q, want the 4 evicted blocks' 64", got)
	}
	waitIdle(t, e)
	e.Close()
	s.Close()

	// A restart: nothing in RAM, every block of a's prefix on disk.
	s = openDisk(t, dir)
	e = newDiskEngine(t, m, 8, s)
	r = generate(t, e, a, n)
	if !slices.Equal(r.tokens, cold) || r.usage.CachedTokens != 5*bs {
		t.Fatalf("after a restart: %v with %d cached tokens, want %v with %d", r.tokens, r.usage.CachedTokens, cold, 5*bs)
	}
	waitIdle(t, e)
	e.Close()
	s.Close()

	// Damage: a's third block's record corrupted, its fifth truncated.
	hashes := kvcache.ChainHashes(nil, a, bs)
	file := func(i int) string {
		files, _ := filepath.Glob(filepath.Join(dir, fmt.Sprintf("%016x-*.blk", hashes[i])))
		if len(files) != 1 {
			t.Fatalf("block %d: %d record files", i, len(files))
		}
		return files[0]
	}
	b, _ := os.ReadFile(file(2))
	b[len(b)/2] ^= 0x40
	os.WriteFile(file(2), b, 0o644)
	b, _ = os.ReadFile(file(4))
	os.WriteFile(file(4), b[:len(b)-7], 0o644)
	s = openDisk(t, dir)
	if st := s.Stats(); st.Corrupt != 1 {
		t.Fatalf("Open dropped %d damaged records, want the truncated one", st.Corrupt)
	}
	e = newDiskEngine(t, m, 8, s)
	r = generate(t, e, a, n)
	if !slices.Equal(r.tokens, cold) || r.usage.CachedTokens != 2*bs {
		t.Fatalf("with damaged records: %v with %d cached tokens, want %v with the %d before the first damaged block", r.tokens, r.usage.CachedTokens, cold, 2*bs)
	}
	if st := s.Stats(); st.Corrupt != 2 {
		t.Fatalf("%d damaged records dropped, want 2", st.Corrupt)
	}
	waitIdle(t, e)
	e.Close()
	s.Close()
}

// TestDiskTierWriteFailureKeepsServing: when the disk fails (here its
// directory is gone), evictions are counted as failed writes, the cache
// goes on in RAM only and every request is answered as a cold run is.
func TestDiskTierWriteFailureKeepsServing(t *testing.T) {
	const n = 4
	m := tinyModel(t)
	dir := filepath.Join(t.TempDir(), "kv")
	s := openDisk(t, dir)
	defer s.Close()
	e := newDiskEngine(t, m, 8, s)
	defer e.Close()
	os.RemoveAll(dir)
	for i := range 4 {
		p := make([]int32, 90)
		for j := range p {
			p[j] = int32(60 + (i*17+j*7)%50)
		}
		if r := generate(t, e, p, n); !slices.Equal(r.tokens, greedyAlone(t, m, p, n)) {
			t.Fatalf("prompt %d: %v differs from a cold run", i, r.tokens)
		}
	}
	waitIdle(t, e)
	s.Flush()
	if st := s.Stats(); st.Writing || st.WriteErrors != 1 || st.Records != 0 {
		t.Fatalf("stats %+v, want one failed write and writing stopped", st)
	}
	if got := metric(e, "splash_prefix_cache_disk_write_errors_total"); got != "1" {
		t.Fatalf("write errors metric %q", got)
	}
}
