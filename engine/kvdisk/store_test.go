package kvdisk

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// entry returns a KV record whose payload and tokens derive from i.
func entry(i int) Entry {
	toks := make([]int32, 16)
	for j := range toks {
		toks[j] = int32(i*100 + j)
	}
	payload := make([]byte, 1000)
	for j := range payload {
		payload[j] = byte(i*7 + j)
	}
	return Entry{Kind: KindKV, Hash: uint64(0x1000 + i), Parent: uint64(0x1000 + i - 1), Tokens: toks, Payload: payload}
}

func open(t *testing.T, dir string, budget int64) *Store {
	t.Helper()
	s, err := Open(Config{Dir: dir, Budget: budget})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func sameEntry(a, b Entry) bool {
	return a.Kind == b.Kind && a.Hash == b.Hash && a.Parent == b.Parent && slices.Equal(a.Tokens, b.Tokens) && bytes.Equal(a.Payload, b.Payload)
}

func TestRoundTrip(t *testing.T) {
	for _, kind := range []Kind{KindKV, KindState} {
		s := open(t, t.TempDir(), 1<<20)
		e := entry(3)
		e.Kind = kind
		if err := s.Put(e); err != nil {
			t.Fatal(err)
		}
		if !s.Match(kind, e.Hash, e.Parent, e.Tokens) || s.Match(kind, e.Hash, e.Parent+1, e.Tokens) || s.Match(kind, e.Hash, e.Parent, e.Tokens[1:]) {
			t.Fatalf("kind %d: Match does not check the parent and tokens", kind)
		}
		got, err := s.Get(kind, e.Hash)
		if err != nil {
			t.Fatal(err)
		}
		if !sameEntry(got, e) {
			t.Fatalf("kind %d: read back %+v, wrote %+v", kind, got, e)
		}
		if _, err := s.Get(kind, e.Hash+1); err == nil {
			t.Fatal("Get of an absent record succeeded")
		}
		st := s.Stats()
		if st.Records != 1 || st.Writes != 1 || st.Reads != 1 || st.ReadBytes != st.WriteBytes || st.Bytes != st.WriteBytes {
			t.Fatalf("kind %d: stats %+v", kind, st)
		}
	}
}

// recordFile returns the path of the one record file in dir.
func recordFile(t *testing.T, dir string) string {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(dir, "*"+recordSuffix))
	if len(m) != 1 {
		t.Fatalf("%d record files, want 1", len(m))
	}
	return m[0]
}

// TestDamageDetected: a record damaged after it was written is dropped,
// at Get (checked against its checksum) or at Open (its header and size).
func TestDamageDetected(t *testing.T) {
	damages := []struct {
		name   string
		damage func(b []byte) []byte
	}{
		{"payload byte flipped", func(b []byte) []byte { b[headerSize+64+10] ^= 1; return b }},
		{"token changed", func(b []byte) []byte { b[headerSize] ^= 0x80; return b }},
		{"checksum changed", func(b []byte) []byte { b[len(b)-1] ^= 1; return b }},
		{"truncated", func(b []byte) []byte { return b[:len(b)-100] }},
		{"truncated inside the header", func(b []byte) []byte { return b[:20] }},
		{"empty", func(b []byte) []byte { return nil }},
		{"grown", func(b []byte) []byte { return append(b, 0) }},
		{"bad magic", func(b []byte) []byte { b[0] = 'X'; return b }},
		{"another version", func(b []byte) []byte { b[8] = 99; return b }},
		{"another hash", func(b []byte) []byte { b[16] ^= 1; return b }},
	}
	for _, d := range damages {
		for _, reopen := range []bool{false, true} {
			dir := t.TempDir()
			s := open(t, dir, 1<<20)
			e := entry(1)
			if err := s.Put(e); err != nil {
				t.Fatal(err)
			}
			p := recordFile(t, dir)
			b, _ := os.ReadFile(p)
			if err := os.WriteFile(p, d.damage(b), 0o644); err != nil {
				t.Fatal(err)
			}
			if reopen {
				s = open(t, dir, 1<<20)
			}
			if _, err := s.Get(KindKV, e.Hash); err == nil {
				t.Fatalf("%s (reopened %v): Get served a damaged record", d.name, reopen)
			}
			st := s.Stats()
			if st.Records != 0 || st.Bytes != 0 || st.Corrupt != 1 {
				t.Fatalf("%s (reopened %v): stats %+v, want the record dropped and counted", d.name, reopen, st)
			}
			if m, _ := filepath.Glob(filepath.Join(dir, "*")); len(m) != 0 {
				t.Fatalf("%s (reopened %v): files left: %v", d.name, reopen, m)
			}
		}
	}
}

func TestRestartRebuildsIndex(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir, 1<<20)
	for i := range 5 {
		if !s.Spill(entry(i)) {
			t.Fatal("Spill dropped a record with an empty queue")
		}
	}
	s.Flush()
	before := s.Stats()
	s.Close()
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("not ours"), 0o644)

	s = open(t, dir, 1<<20)
	st := s.Stats()
	if st.Records != 5 || st.Bytes != before.Bytes {
		t.Fatalf("reopened: %d records of %d bytes, had 5 of %d", st.Records, st.Bytes, before.Bytes)
	}
	for i := range 5 {
		e := entry(i)
		if !s.Match(KindKV, e.Hash, e.Parent, e.Tokens) {
			t.Fatalf("record %d not indexed after a restart", i)
		}
		got, err := s.Get(KindKV, e.Hash)
		if err != nil || !sameEntry(got, e) {
			t.Fatalf("record %d after a restart: %v", i, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "notes.txt")); err != nil {
		t.Fatal("Open deleted a file that is not a record")
	}
}

func TestBudgetEvictsLeastRecentlyUsed(t *testing.T) {
	dir := t.TempDir()
	size := int64(len(encode(nil, entry(0))))
	s := open(t, dir, 3*size)
	for i := range 3 {
		s.Put(entry(i))
	}
	if _, err := s.Get(KindKV, entry(0).Hash); err != nil { // 0 is now the most recently used
		t.Fatal(err)
	}
	s.Put(entry(3)) // evicts 1, the least recently used
	for i, want := range []bool{true, false, true, true} {
		if got := s.Contains(KindKV, entry(i).Hash); got != want {
			t.Fatalf("record %d kept %v, want %v", i, got, want)
		}
	}
	if st := s.Stats(); st.Bytes != 3*size || st.Records != 3 {
		t.Fatalf("stats %+v, want 3 records of %d bytes", st, size)
	}
	if m, _ := filepath.Glob(filepath.Join(dir, "*"+recordSuffix)); len(m) != 3 {
		t.Fatalf("%d files on disk, want 3", len(m))
	}
	// A smaller budget at the next Open trims the oldest writes.
	s.Close()
	s = open(t, dir, 2*size)
	if st := s.Stats(); st.Records != 2 || st.Bytes != 2*size {
		t.Fatalf("reopened with a smaller budget: %+v", st)
	}
	if err := s.Put(Entry{Kind: KindKV, Hash: 1, Payload: make([]byte, 3*size)}); err == nil {
		t.Fatal("a record larger than the budget was written")
	}
}

// TestKilledWriteLeavesNothingVisible: what a process killed while writing
// leaves (a temporary file, of any length) is deleted at the next Open and
// never served; a record whose rename happened is whole.
func TestKilledWriteLeavesNothingVisible(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir, 1<<20)
	s.Put(entry(0))
	s.Close()
	whole := encode(nil, entry(1))
	for i, n := range []int{0, 10, headerSize + 3, len(whole) / 2, len(whole)} {
		os.WriteFile(filepath.Join(dir, strings.Repeat("9", i+1)+tmpSuffix), whole[:n], 0o644)
	}
	// A torn record under a record's name (a file system that renamed
	// before the data reached the disk).
	os.WriteFile(filepath.Join(dir, "0000000000001002-1"+recordSuffix), encode(nil, entry(2))[:500], 0o644)

	s = open(t, dir, 1<<20)
	if st := s.Stats(); st.Records != 1 || st.Corrupt != 1 {
		t.Fatalf("stats %+v, want the one whole record and the torn one dropped", st)
	}
	for i := 1; i <= 2; i++ {
		if _, err := s.Get(KindKV, entry(i).Hash); err == nil {
			t.Fatalf("record %d of a killed write was served", i)
		}
	}
	if m, _ := filepath.Glob(filepath.Join(dir, "*")); len(m) != 1 {
		t.Fatalf("files left: %v", m)
	}
}

// TestWriteErrorStopsWriting: a write that fails (here the directory is
// gone) is counted and stops writing; reads of what is indexed go on.
func TestWriteErrorStopsWriting(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cache")
	s := open(t, dir, 1<<20)
	if err := s.Put(entry(0)); err != nil {
		t.Fatal(err)
	}
	os.RemoveAll(dir)
	if err := s.Put(entry(1)); err == nil {
		t.Fatal("a write into a removed directory succeeded")
	}
	os.MkdirAll(dir, 0o755)
	if s.Spill(entry(2)) {
		t.Fatal("Spill queued a record after writes stopped")
	}
	st := s.Stats()
	if st.Writing || st.WriteErrors != 1 || st.Dropped != 1 || st.Records != 1 {
		t.Fatalf("stats %+v", st)
	}
	if _, err := s.Get(KindKV, entry(0).Hash); err == nil {
		t.Fatal("a record whose file was removed was served")
	}
}

func TestOpenRefusesNoBudget(t *testing.T) {
	if _, err := Open(Config{Dir: t.TempDir()}); err == nil {
		t.Fatal("Open with no budget succeeded")
	}
}

func TestDirSeparatesIdentities(t *testing.T) {
	a := Dir("/c", "sha256-ab", "f16", 16)
	for _, b := range []string{Dir("/c", "sha256-cd", "f16", 16), Dir("/c", "sha256-ab", "q8", 16), Dir("/c", "sha256-ab", "f16", 32)} {
		if a == b {
			t.Fatalf("two identities share %s", a)
		}
	}
}

// TestSpillBuffersAreReused: a payload buffer Spill wrote comes back from
// Buffer (sync.Pool may drop it, so the test allows a fresh one), and
// records written from reused buffers read back intact.
func TestSpillBuffersAreReused(t *testing.T) {
	s := open(t, t.TempDir(), 1<<20)
	for i := range 4 {
		e := entry(i)
		buf := append(s.Buffer(len(e.Payload)), e.Payload...)
		e.Payload = buf
		if !s.Spill(e) {
			t.Fatal("Spill dropped a record")
		}
		s.Flush()
		if b := s.Buffer(10); cap(b) < 10 || len(b) != 0 {
			t.Fatalf("Buffer(10): len %d cap %d", len(b), cap(b))
		}
	}
	for i := range 4 {
		got, err := s.Get(KindKV, entry(i).Hash)
		if err != nil || !sameEntry(got, entry(i)) {
			t.Fatalf("record %d written from a reused buffer: %v", i, err)
		}
	}
}

// TestConcurrentPutsOfOneRecord: the same record put from several
// goroutines at once (a spill and the shutdown's save) is indexed once
// and reads back.
func TestConcurrentPutsOfOneRecord(t *testing.T) {
	s := open(t, t.TempDir(), 1<<20)
	done := make(chan error)
	for range 8 {
		go func() { done <- s.Put(entry(5)) }()
	}
	for range 8 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	if st := s.Stats(); st.Records != 1 || st.Bytes != int64(len(encode(nil, entry(5)))) {
		t.Fatalf("stats %+v", st)
	}
	if got, err := s.Get(KindKV, entry(5).Hash); err != nil || !sameEntry(got, entry(5)) {
		t.Fatalf("read back: %v", err)
	}
}
