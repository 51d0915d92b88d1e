package kvdisk

import (
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkRead reads 32 records of a 0.6B-shaped 32-token block (3.5 MiB)
// through Get (verified) and as plain files, from the page cache:
// the cost of the checks against the read itself.
func BenchmarkRead(b *testing.B) {
	dir := b.TempDir()
	s, err := Open(Config{Dir: dir, Budget: 1 << 30})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	const records, size = 32, 28 * 2 * 8 * 128 * 32 * 2
	for i := range records {
		e := entry(i)
		e.Payload = make([]byte, size)
		if err := s.Put(e); err != nil {
			b.Fatal(err)
		}
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*"+recordSuffix))
	b.Run("store", func(b *testing.B) {
		b.SetBytes(records * size)
		for b.Loop() {
			for i := range records {
				if _, err := s.Get(KindKV, entry(i).Hash); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	b.Run("plain", func(b *testing.B) {
		b.SetBytes(records * size)
		for b.Loop() {
			for _, f := range files {
				if _, err := os.ReadFile(f); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}
