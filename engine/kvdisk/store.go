package kvdisk

import (
	"container/list"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"
)

// Config configures a Store.
type Config struct {
	Dir    string // the records' directory (Dir builds one per cache identity); created if missing
	Budget int64  // bytes of record files kept at most; must be positive
	// Queue is how many records Spill holds for the writer before it drops
	// more; 64 when zero.
	Queue  int
	Logger *slog.Logger // warnings (a write that failed); nil discards them
}

// Stats is a snapshot of a Store.
type Stats struct {
	Budget, Bytes int64 // the byte budget and the record bytes on disk
	Records       int
	Reads, Writes int64 // records read (verified) and written
	// ReadBytes and WriteBytes are the record bytes read and written.
	ReadBytes, WriteBytes int64
	Corrupt               int64 // records dropped by a failed check, at Open or Get
	Dropped               int64 // records Spill dropped: queue full or writes stopped
	WriteErrors           int64 // failed writes; the first stops writing
	Writing               bool  // false once a write failed: the cache is RAM-only
}

// key names a record: its kind and chain hash.
type key struct {
	kind Kind
	hash uint64
}

// item is one indexed record.
type item struct {
	key    key
	parent uint64
	tokens []int32
	size   int64
	elem   *list.Element // in Store.lru, front most recently used
}

// Store is a directory of records with an in-memory index of their
// headers. It is safe for concurrent use: Get runs on the caller's
// goroutine, Spill's writes on the store's writer goroutine.
type Store struct {
	dir    string
	budget int64
	logger *slog.Logger

	mu    sync.Mutex
	index map[key]*item
	lru   *list.List
	stats Stats

	bufs  sync.Pool // *[]byte: payloads Spill wrote, for Buffer
	jobs  chan job
	done  chan struct{} // closed when the writer has stopped
	close sync.Once
}

// job is one record to write, or (flushed not nil) a marker the writer
// closes once every record queued before it is written.
type job struct {
	e       Entry
	flushed chan struct{}
}

// Dir is the directory of the records of one cache identity under root:
// a model (its package hash), a KV cache type and a block size.
func Dir(root, model, kvType string, blockSize int) string {
	return filepath.Join(root, model, fmt.Sprintf("%s-b%d", kvType, blockSize))
}

// Open opens (creating) the directory, rebuilds the index from the
// records' headers, deleting temporary files and files that are not
// records of this directory, trims it to the budget and starts the writer.
func Open(c Config) (*Store, error) {
	if c.Budget <= 0 {
		return nil, fmt.Errorf("kvdisk: budget %d, want a positive number of bytes", c.Budget)
	}
	if c.Queue == 0 {
		c.Queue = 64
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if err := os.MkdirAll(c.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("kvdisk: %w", err)
	}
	s := &Store{dir: c.Dir, budget: c.Budget, logger: c.Logger, index: make(map[key]*item), lru: list.New(),
		jobs: make(chan job, c.Queue), done: make(chan struct{})}
	s.stats.Budget, s.stats.Writing = c.Budget, true
	if err := s.scan(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.trim(nil)
	s.mu.Unlock()
	go s.write()
	return s, nil
}

// Close writes what Spill queued and stops the writer; later calls do
// nothing. Spill and Flush must not be called after.
func (s *Store) Close() error {
	s.close.Do(func() { close(s.jobs) })
	<-s.done
	return nil
}

// Stats returns a snapshot.
func (s *Store) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.stats
	st.Records = len(s.index)
	return st
}

// Contains reports whether a record of this kind and hash is indexed.
func (s *Store) Contains(kind Kind, hash uint64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.index[key{kind, hash}]
	return ok
}

// Match reports whether a record of this kind and hash is indexed with
// this parent hash and these tokens: a 64-bit hash collision is a miss.
func (s *Store) Match(kind Kind, hash, parent uint64, tokens []int32) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	it, ok := s.index[key{kind, hash}]
	return ok && it.parent == parent && slices.Equal(it.tokens, tokens)
}

// Get reads a record and verifies it: its checksum, and its header against
// the index. A record that fails is deleted and counted in Corrupt; every
// failure is an error, to be taken as a miss.
func (s *Store) Get(kind Kind, hash uint64) (Entry, error) {
	k := key{kind, hash}
	s.mu.Lock()
	it, ok := s.index[k]
	var parent uint64
	var tokens []int32
	if ok {
		parent, tokens = it.parent, it.tokens
	}
	s.mu.Unlock()
	if !ok {
		return Entry{}, fmt.Errorf("kvdisk: no record %016x", hash)
	}
	b, err := os.ReadFile(s.path(k))
	if errors.Is(err, fs.ErrNotExist) {
		return Entry{}, fmt.Errorf("kvdisk: record %016x was evicted", hash)
	}
	var e Entry
	if err == nil {
		e, err = decode(b)
	}
	if err == nil && (e.Kind != kind || e.Hash != hash || e.Parent != parent || !slices.Equal(e.Tokens, tokens)) {
		err = fmt.Errorf("%w: header differs from the index", errCorrupt)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		if cur := s.index[k]; cur == it {
			s.drop(it)
			s.stats.Corrupt++
		}
		return Entry{}, fmt.Errorf("kvdisk: record %016x: %w", hash, err)
	}
	if cur := s.index[k]; cur == it {
		s.lru.MoveToFront(it.elem)
	}
	s.stats.Reads++
	s.stats.ReadBytes += int64(len(b))
	return e, nil
}

// Put writes a record now, replacing none: a record already indexed under
// its kind and hash is only marked used. A record larger than the budget
// is not written.
func (s *Store) Put(e Entry) error {
	k := key{e.Kind, e.Hash}
	s.mu.Lock()
	if it, ok := s.index[k]; ok {
		s.lru.MoveToFront(it.elem)
		s.mu.Unlock()
		return nil
	}
	writing := s.stats.Writing
	s.mu.Unlock()
	if !writing {
		return errors.New("kvdisk: writes stopped after an error")
	}
	head := encodeHead(nil, e)
	size := int64(len(head) + len(e.Payload) + crcSize)
	if size > s.budget {
		return fmt.Errorf("kvdisk: a record of %d bytes exceeds the budget of %d", size, s.budget)
	}
	if err := s.writeFile(k, head, e.Payload); err != nil {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.stats.WriteErrors++
		if s.stats.Writing {
			s.stats.Writing = false
			s.logger.Warn("kvdisk: a write failed; the prefix cache stays in RAM only", "dir", s.dir, "error", err)
		}
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if old, ok := s.index[k]; ok {
		// Written twice at once (a spill and the shutdown's save): the
		// file is the later, equal record, which the index already lists.
		s.lru.MoveToFront(old.elem)
		return nil
	}
	it := &item{key: k, parent: e.Parent, tokens: slices.Clone(e.Tokens), size: size}
	s.insert(it)
	s.stats.Writes++
	s.stats.WriteBytes += it.size
	s.trim(it)
	return nil
}

// Spill queues a record for the writer and returns at once; the store
// owns e's slices from then on. It reports false when the record is
// dropped: the queue is full or writes have stopped.
func (s *Store) Spill(e Entry) bool {
	s.mu.Lock()
	writing := s.stats.Writing
	s.mu.Unlock()
	if writing {
		select {
		case s.jobs <- job{e: e}:
			return true
		default:
		}
	}
	s.mu.Lock()
	s.stats.Dropped++
	s.mu.Unlock()
	return false
}

// Buffer returns an empty byte slice of capacity at least n for a payload
// to Spill: one of an earlier Spill's, once written, when it is large
// enough, so that evicting blocks does not allocate a buffer each.
func (s *Store) Buffer(n int) []byte {
	if p, ok := s.bufs.Get().(*[]byte); ok && cap(*p) >= n {
		return (*p)[:0]
	}
	return make([]byte, 0, n)
}

// Flush waits until every record Spill queued before it is written.
func (s *Store) Flush() {
	ch := make(chan struct{})
	s.jobs <- job{flushed: ch}
	<-ch
}

// write is the writer goroutine.
func (s *Store) write() {
	defer close(s.done)
	for j := range s.jobs {
		if j.flushed != nil {
			close(j.flushed)
			continue
		}
		_ = s.Put(j.e) // counted and logged by Put; a failed spill is only a lost record
		s.bufs.Put(&j.e.Payload)
	}
}

// writeFile makes the record of head and payload the file of k,
// atomically: a temporary file, synced, renamed into place. A process
// killed before the rename leaves only the temporary file, which Open
// deletes.
func (s *Store) writeFile(k key, head, payload []byte) error {
	f, err := os.CreateTemp(s.dir, "*"+tmpSuffix)
	if err != nil {
		return err
	}
	_, err = f.Write(head)
	if err == nil {
		_, err = f.Write(payload)
	}
	if err == nil {
		_, err = f.Write(binary.LittleEndian.AppendUint32(nil, recordCRC(head, payload)))
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), s.path(k))
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}

// insert indexes it as the most recently used; the lock is held.
func (s *Store) insert(it *item) {
	it.elem = s.lru.PushFront(it)
	s.index[it.key] = it
	s.stats.Bytes += it.size
}

// drop forgets it and deletes its file; the lock is held.
func (s *Store) drop(it *item) {
	s.lru.Remove(it.elem)
	delete(s.index, it.key)
	s.stats.Bytes -= it.size
	os.Remove(s.path(it.key))
}

// trim drops least recently used records, never keep, until the records
// fit the budget; the lock is held.
func (s *Store) trim(keep *item) {
	for s.stats.Bytes > s.budget {
		e := s.lru.Back()
		if e == nil || e.Value.(*item) == keep {
			return
		}
		s.drop(e.Value.(*item))
	}
}

// readHeader reads the header and token ids of the record file at path.
func readHeader(path string) (header, []int32, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return header{}, nil, 0, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return header{}, nil, 0, err
	}
	var hb [headerSize]byte
	if _, err := io.ReadFull(f, hb[:]); err != nil {
		return header{}, nil, 0, fmt.Errorf("%w: %v", errCorrupt, err)
	}
	h, err := decodeHeader(hb[:])
	if err != nil {
		return header{}, nil, 0, err
	}
	if fi.Size() != h.size() {
		return header{}, nil, 0, fmt.Errorf("%w: %d bytes, the header says %d", errCorrupt, fi.Size(), h.size())
	}
	tb := make([]byte, 4*h.tokens)
	if _, err := io.ReadFull(f, tb); err != nil {
		return header{}, nil, 0, fmt.Errorf("%w: %v", errCorrupt, err)
	}
	toks := make([]int32, h.tokens)
	for i := range toks {
		toks[i] = int32(binary.LittleEndian.Uint32(tb[4*i:]))
	}
	return h, toks, fi.ModTime().UnixNano(), nil
}
