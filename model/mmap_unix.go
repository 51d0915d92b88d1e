//go:build unix

package model

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// mapFile memory-maps a whole file read-only. The returned release function
// unmaps it; the bytes must not be used afterwards.
func mapFile(path string) ([]byte, func() error, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("model: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, nil, fmt.Errorf("model: %w", err)
	}
	if st.Size() == 0 {
		return []byte{}, func() error { return nil }, nil
	}
	data, err := unix.Mmap(int(f.Fd()), 0, int(st.Size()), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, nil, fmt.Errorf("model: mmap %s: %w", path, err)
	}
	return data, func() error { return unix.Munmap(data) }, nil
}
