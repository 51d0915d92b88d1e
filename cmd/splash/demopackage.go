package main

import (
	"compress/gzip"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/splash-inference/splash/model"
)

// The trained splash-demo (scripts/train-demo, `make demo-embed`) is
// embedded as Splash packages under demo/, every file gzip-compressed
// (NAME.gz): demoPackage holds the target and its draft model,
// demoDFlashPackage the target and its DFlash draft (a package holds one
// draft). demoDFlashPackage stores only the files that differ from
// demoPackage's (its manifest and draft): the rest, the target's weights
// and the tokenizer, are demoPackage's. Without them the build serves the
// random demo (demoSpec).
const (
	demoPackage       = "demo/splash-demo"
	demoDFlashPackage = "demo/splash-demo-dflash"
)

// demoPackageFor picks the embedded package to serve with --spec spec:
// the DFlash one for dflash, else the one with the draft model;
// whichever exists when only one does, "" when none does. auto takes the
// draft model's package, where it runs the better of the draft model and
// n-gram lookup: the embedded DFlash draft is accepted too rarely to pay
// for its block passes in a batch (README, "Training the demo model", has
// the measurements). Revisit when a better DFlash draft is embedded.
func demoPackageFor(fsys fs.FS, spec string) string {
	has := func(dir string) bool {
		_, err := fs.Stat(fsys, dir+"/"+model.ManifestName+".gz")
		return err == nil
	}
	order := []string{demoPackage, demoDFlashPackage}
	if spec == "dflash" {
		order = []string{demoDFlashPackage, demoPackage}
	}
	for _, dir := range order {
		if has(dir) {
			return dir
		}
	}
	return ""
}

// withDemoPackage extracts the package dir of fsys (over demoPackage's
// files, which it shares) into a temporary directory, opens it with open
// and removes the directory: what open keeps of it is mapped or read into
// memory, which outlives the files. The package's manifest checks every
// file's size and SHA-256, so a shared file that is not the one it was
// packed with is refused.
func withDemoPackage[T any](fsys fs.FS, dir string, open func(dir string) (T, error)) (T, error) {
	var zero T
	tmp, err := os.MkdirTemp("", "splash-demo-*")
	if err != nil {
		return zero, fmt.Errorf("demo model: %w", err)
	}
	defer os.RemoveAll(tmp)
	if dir != demoPackage {
		if _, serr := fs.Stat(fsys, demoPackage); serr == nil {
			err = extractPackage(fsys, demoPackage, tmp)
		}
	}
	if err == nil {
		err = extractPackage(fsys, dir, tmp)
	}
	if err != nil {
		return zero, fmt.Errorf("demo model: %w", err)
	}
	v, err := open(tmp)
	if err != nil {
		return zero, fmt.Errorf("demo model: %w", err)
	}
	return v, nil
}

// extractPackage writes every NAME.gz under dir of fsys, decompressed, to
// the same place under out.
func extractPackage(fsys fs.FS, dir, out string) error {
	return fs.WalkDir(fsys, dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, ok := strings.CutSuffix(strings.TrimPrefix(p, dir+"/"), ".gz")
		if !ok {
			return fmt.Errorf("embedded %s is not gzip-compressed (.gz)", p)
		}
		dst := filepath.Join(out, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		return gunzipFile(fsys, p, dst)
	})
}

func gunzipFile(fsys fs.FS, src, dst string) error {
	in, err := fsys.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	zr, err := gzip.NewReader(in)
	if err != nil {
		return fmt.Errorf("%s: %w", path.Base(src), err)
	}
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, zr); err != nil {
		out.Close()
		return fmt.Errorf("%s: %w", path.Base(src), err)
	}
	return out.Close()
}
