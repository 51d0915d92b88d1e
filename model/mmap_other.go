//go:build !unix

package model

import (
	"fmt"
	"os"
)

// mapFile reads the whole file into memory on platforms without mmap.
func mapFile(path string) ([]byte, func() error, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("model: %w", err)
	}
	return data, func() error { return nil }, nil
}
