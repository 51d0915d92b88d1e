package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/splash-inference/splash/metal"
	"github.com/splash-inference/splash/model"
)

// TestServePacksCheckpointIntoCache: serving a checkpoint packs it into
// the cache once (with a message), later starts reuse the package, and a
// changed checkpoint is packed again.
func TestServePacksCheckpointIntoCache(t *testing.T) {
	ckpt := tinyCheckpoint(t)
	cache := t.TempDir()
	serveOnce := func() string {
		addr, _, stop := startServe(t, "--model", ckpt, "--quant", "q8", "--cache-dir", cache)
		defer func() {
			if err := stop(); err != nil {
				t.Error(err)
			}
		}()
		if ids := servedModels(t, addr); len(ids) != 1 || ids[0] != filepath.Base(ckpt) {
			t.Fatalf("/v1/models = %v, want the checkpoint's name %s", ids, filepath.Base(ckpt))
		}
		pkgs, _ := filepath.Glob(filepath.Join(cache, "packages", "*", model.ManifestName))
		return strings.Join(pkgs, ",")
	}

	first := serveOnce()
	if strings.Count(first, model.ManifestName) != 1 || !strings.Contains(first, "-q8-") {
		t.Fatalf("after the first start the cache holds %q, want one q8 package", first)
	}
	var m model.Manifest
	raw, err := os.ReadFile(first)
	if err != nil || json.Unmarshal(raw, &m) != nil || m.Quant != "q8" {
		t.Fatalf("packaged manifest: quant %q, %v", m.Quant, err)
	}
	if again := serveOnce(); again != first {
		t.Fatalf("second start changed the cache: %q, want %q", again, first)
	}
	// An edited checkpoint is packed again, next to the old package.
	later := time.Now().Add(time.Minute)
	os.Chtimes(filepath.Join(ckpt, "config.json"), later, later)
	if third := serveOnce(); strings.Count(third, model.ManifestName) != 2 {
		t.Fatalf("after editing the checkpoint the cache holds %q, want two packages", third)
	}
}

func TestPackCacheMessages(t *testing.T) {
	ckpt := tinyCheckpoint(t)
	c := packCache{dir: t.TempDir(), quant: metal.Q4}
	var out bytes.Buffer
	s := &stdio{out: &out, err: &out}
	dst, err := c.packageFor(s, ckpt, "acme/tiny")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "packing checkpoint "+ckpt) || !strings.Contains(filepath.Base(dst), "acme--tiny-q4-") {
		t.Fatalf("dst %s, messages %q", dst, out.String())
	}
	out.Reset()
	again, err := c.packageFor(s, ckpt, "acme/tiny")
	if err != nil || again != dst || !strings.Contains(out.String(), "packed earlier") {
		t.Fatalf("second call: %s, %v, %q", again, err, out.String())
	}
	// A package is served as it is.
	if same, err := c.packageFor(s, dst, "x"); err != nil || same != dst {
		t.Fatalf("package dir: %s, %v", same, err)
	}
	// An unwritable cache names the flag to change.
	bad := packCache{dir: filepath.Join(ckpt, "config.json", "sub"), quant: c.quant}
	if _, err := bad.packageFor(s, ckpt, "t"); err == nil || !strings.Contains(err.Error(), "--cache-dir") {
		t.Fatalf("unwritable cache: %v", err)
	}
}
