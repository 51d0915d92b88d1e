package kvdisk

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// File names: a record is <hash, 16 hex digits>-<kind>.blk; a write in
// progress is a temporary file ending in .tmp.
const (
	recordSuffix = ".blk"
	tmpSuffix    = ".tmp"
)

// path is the file of the record k.
func (s *Store) path(k key) string {
	return filepath.Join(s.dir, fmt.Sprintf("%016x-%d%s", k.hash, k.kind, recordSuffix))
}

// parseName reads a record's key from its file name.
func parseName(name string) (key, bool) {
	var k key
	var kind uint8
	base, ok := strings.CutSuffix(name, recordSuffix)
	if !ok || len(base) < 18 {
		return k, false
	}
	if n, err := fmt.Sscanf(base, "%016x-%d", &k.hash, &kind); n != 2 || err != nil {
		return k, false
	}
	k.kind = Kind(kind)
	return k, fmt.Sprintf("%016x-%d", k.hash, kind) == base
}

// scan rebuilds the index from the directory: temporary files (writes a
// killed process left) are deleted, and so are record files whose header
// is unreadable, foreign or disagrees with the name or the file's size.
// Records enter the LRU order by modification time.
func (s *Store) scan() error {
	ents, err := os.ReadDir(s.dir)
	if err != nil {
		return fmt.Errorf("kvdisk: %w", err)
	}
	type found struct {
		it    *item
		mtime int64
	}
	var all []found
	for _, d := range ents {
		name := d.Name()
		full := filepath.Join(s.dir, name)
		switch {
		case strings.HasSuffix(name, tmpSuffix):
			os.Remove(full)
			continue
		case !strings.HasSuffix(name, recordSuffix) || !d.Type().IsRegular():
			continue // not ours: left alone
		}
		k, ok := parseName(name)
		h, toks, mtime, err := readHeader(full)
		if !ok || err != nil || h.hash != k.hash || h.kind != k.kind {
			os.Remove(full)
			s.stats.Corrupt++
			continue
		}
		all = append(all, found{&item{key: k, parent: h.parent, tokens: toks, size: h.size()}, mtime})
	}
	slices.SortFunc(all, func(a, b found) int { return cmp.Compare(a.mtime, b.mtime) })
	for _, f := range all {
		s.insert(f.it) // oldest first, so the newest ends at the front
	}
	return nil
}
