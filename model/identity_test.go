package model_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/splash-inference/splash/model"
)

// TestIdentity: the same files give the same identity, a changed config or
// manifest another, and a package is named by its manifest alone.
func TestIdentity(t *testing.T) {
	write := func(dir, name, body string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	id := func(dir string) string {
		t.Helper()
		s, err := model.Identity(dir)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	ckpt := t.TempDir()
	write(ckpt, "config.json", `{"hidden_size": 8}`)
	write(ckpt, "model.safetensors", "weights")
	first := id(ckpt)
	if !strings.HasPrefix(first, "ckpt-") || id(ckpt) != first {
		t.Fatalf("checkpoint identity %q, then %q", first, id(ckpt))
	}
	write(ckpt, "config.json", `{"hidden_size": 9}`)
	if id(ckpt) == first {
		t.Error("a changed config kept the checkpoint's identity")
	}

	pkg := t.TempDir()
	write(pkg, model.ManifestName, `{"format": 1}`)
	p1 := id(pkg)
	write(pkg, "notes.txt", "not part of the package")
	if !strings.HasPrefix(p1, "pkg-") || id(pkg) != p1 {
		t.Errorf("package identity %q, then %q with an unrelated file", p1, id(pkg))
	}
	write(pkg, model.ManifestName, `{"format": 2}`)
	if id(pkg) == p1 {
		t.Error("a changed manifest kept the package's identity")
	}
	if _, err := model.Identity(filepath.Join(pkg, "missing")); err == nil {
		t.Error("a missing directory has an identity")
	}
}
