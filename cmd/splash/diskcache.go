package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"path/filepath"
	"runtime/debug"

	"github.com/splash-inference/splash/engine/kvdisk"
)

// diskCacheBytes is --max-cache-disk in bytes: 0 (the default, also "")
// keeps the prefix cache in RAM only.
func (f *serveFlags) diskCacheBytes() (int64, error) {
	if f.maxCacheDisk == "" || f.maxCacheDisk == "0" {
		return 0, nil
	}
	n, err := parseSize(f.maxCacheDisk, true)
	if err != nil {
		return 0, fmt.Errorf("serve: --max-cache-disk: %w", err)
	}
	return n, nil
}

// openDiskCache opens the prefix cache's disk tier for the model and plan
// under --cache-dir/kv, or returns nil when --max-cache-disk is 0, the
// model has state layers (whose snapshots the tier does not hold yet) or
// the directory cannot be used (a warning: serving goes on with RAM only).
func openDiskCache(s *stdio, f *serveFlags, identity string, p plan, hasState bool) *kvdisk.Store {
	budget, err := f.diskCacheBytes()
	if budget == 0 || err != nil {
		return nil
	}
	if hasState {
		fmt.Fprintln(s.err, "warning: --max-cache-disk is ignored: the disk tier holds attention layers' KV blocks only, and this model has state layers")
		return nil
	}
	dir := kvdisk.Dir(filepath.Join(f.cacheDir, "kv"), identity, p.kvType.String(), p.blockSize)
	block := max(int64(p.KVPerToken)*int64(p.blockSize), 1)
	// The writer's queue holds copies of evicted blocks: 64 MiB of them.
	queue := int(max(4, (64<<20)/block))
	st, err := kvdisk.Open(kvdisk.Config{Dir: dir, Budget: budget, Queue: queue,
		Logger: slog.New(slog.NewTextHandler(s.err, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	if err != nil {
		fmt.Fprintf(s.err, "warning: the prefix cache's disk tier is off: %v\n", err)
		return nil
	}
	stats := st.Stats()
	fmt.Fprintf(s.err, "prefix cache on disk: %.1f MiB of a %.1f MiB budget (--max-cache-disk) in %d blocks of %.1f MiB, in %s\n",
		float64(stats.Bytes)/(1<<20), float64(budget)/(1<<20), stats.Records, float64(block)/(1<<20), dir)
	return st
}

// demoIdentity names the embedded demo model, whose weights the build
// generates from demoSpec: by the spec and the build's revision.
func demoIdentity() string {
	h := sha256.New()
	fmt.Fprintf(h, "%+v", demoSpec())
	if bi, ok := debug.ReadBuildInfo(); ok {
		fmt.Fprintln(h, bi.Main.Version)
		for _, kv := range bi.Settings {
			if kv.Key == "vcs.revision" || kv.Key == "vcs.modified" {
				fmt.Fprintln(h, kv.Key, kv.Value)
			}
		}
	}
	return "demo-" + hex.EncodeToString(h.Sum(nil)[:16])
}
