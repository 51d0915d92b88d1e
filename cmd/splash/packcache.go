package main

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/splash-inference/splash/metal"
	"github.com/splash-inference/splash/model"
)

// packCache turns Hugging Face checkpoints into Splash packages kept under
// dir, so `splash serve --model CHECKPOINT` runs on the kernels' own layout
// (quantized, 64-byte aligned, mmapped) and pays the conversion once.
type packCache struct {
	dir   string      // the cache root; packages go in dir/packages
	quant metal.DType // weight type of the packages it makes
}

// defaultCacheDir is where packed checkpoints go without --cache-dir: the
// user's cache directory (XDG_CACHE_HOME or ~/.cache on Linux,
// ~/Library/Caches on macOS).
func defaultCacheDir() string {
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "splash")
	}
	return filepath.Join(os.TempDir(), "splash-cache")
}

// packageFor returns the package directory for the model in dir (named
// name in a package it makes): dir itself
// when it is already a package, else the cached package of the checkpoint,
// packing it first (with a message) when the cache lacks it. The cache key
// covers the checkpoint's location, its files' sizes and modification
// times, the weight type and the package format, so an edited checkpoint is
// packed again rather than served stale.
func (c packCache) packageFor(s *stdio, dir, name string) (string, error) {
	if _, err := os.Stat(filepath.Join(dir, model.ManifestName)); err == nil {
		return dir, nil
	}
	if _, err := os.Stat(filepath.Join(dir, "config.json")); err != nil {
		return dir, nil // not a checkpoint either: the loader says so
	}
	key, err := c.key(dir)
	if err != nil {
		return "", err
	}
	dst := filepath.Join(c.dir, "packages", fmt.Sprintf("%s-%s-%s", strings.ReplaceAll(name, "/", "--"), c.quant, key))
	if _, err := os.Stat(filepath.Join(dst, model.ManifestName)); err == nil {
		fmt.Fprintf(s.err, "using %s, packed earlier from %s\n", dst, dir)
		return dst, nil
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return "", fmt.Errorf("pack cache: %w (set --cache-dir)", err)
	}
	fmt.Fprintf(s.err, "packing checkpoint %s as %s into %s (once; later starts reuse it)\n", dir, c.quant, dst)
	st, err := model.Pack(dir, dst, model.PackOptions{Quant: c.quant, Name: name, Progress: s.err})
	if err != nil {
		// Another server may have packed the same checkpoint meanwhile.
		if _, statErr := os.Stat(filepath.Join(dst, model.ManifestName)); statErr == nil {
			return dst, nil
		}
		return "", fmt.Errorf("pack cache: %w", err)
	}
	fmt.Fprintf(s.err, "packed %.1f MB in %s\n", float64(st.Bytes)/1e6, st.Elapsed.Round(1e6))
	return dst, nil
}

// key hashes what decides a checkpoint's package: its absolute path and
// the name, size and modification time of each file Pack reads.
func (c packCache) key(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("pack cache: %w", err)
	}
	entries, err := os.ReadDir(abs)
	if err != nil {
		return "", fmt.Errorf("pack cache: %w", err)
	}
	h := sha256.New()
	fmt.Fprintf(h, "format %d\nquant %s\npath %s\n", model.PackageFormatVersion, c.quant, abs)
	var names []string
	for _, e := range entries {
		if n := e.Name(); strings.HasSuffix(n, ".safetensors") || strings.HasSuffix(n, ".json") {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	for _, n := range names {
		// Stat follows the HF cache's symlinks to the blobs.
		fi, err := os.Stat(filepath.Join(abs, n))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("pack cache: %w", err)
		}
		fmt.Fprintf(h, "%s %d %d\n", n, fi.Size(), fi.ModTime().UnixNano())
	}
	return hex.EncodeToString(h.Sum(nil))[:12], nil
}
