package model

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"slices"
)

// Identity names the weights in dir, for caches that only the same
// weights may reuse (the prefix cache's disk tier): a package by the hash
// of its manifest, which holds every file's SHA-256; a checkpoint served in
// place by its config and its files' names, sizes and modification times.
func Identity(dir string) (string, error) {
	h := sha256.New()
	if b, err := os.ReadFile(filepath.Join(dir, ManifestName)); err == nil {
		h.Write(b)
		return "pkg-" + hex.EncodeToString(h.Sum(nil)[:16]), nil
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return "", err
	}
	names := make([]string, 0, len(ents))
	for _, e := range ents {
		names = append(names, e.Name())
	}
	slices.Sort(names)
	for _, n := range names {
		fi, err := os.Stat(filepath.Join(dir, n))
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		fmt.Fprintf(h, "%s %d %d\n", n, fi.Size(), fi.ModTime().UnixNano())
		if n == "config.json" {
			b, _ := os.ReadFile(filepath.Join(dir, n))
			h.Write(b)
		}
	}
	return "ckpt-" + hex.EncodeToString(h.Sum(nil)[:16]), nil
}
