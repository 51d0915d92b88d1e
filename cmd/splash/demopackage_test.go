package main

import (
	"bytes"
	"compress/gzip"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/splash-inference/splash/metal"
	"github.com/splash-inference/splash/model"
	"github.com/splash-inference/splash/model/testmodel"
)

func TestDemoPackageFor(t *testing.T) {
	manifest := func(dir string) string { return dir + "/" + model.ManifestName + ".gz" }
	both := fstest.MapFS{manifest(demoPackage): {}, manifest(demoDFlashPackage): {}}
	draftOnly := fstest.MapFS{manifest(demoPackage): {}}
	dflashOnly := fstest.MapFS{manifest(demoDFlashPackage): {}}
	none := fstest.MapFS{"demo/tokenizer.json.gz": {}}
	for _, tc := range []struct {
		name string
		fsys fs.FS
		spec string
		want string
	}{
		{"auto prefers the draft model's package", both, "auto", demoPackage},
		{"dflash", both, "dflash", demoDFlashPackage},
		{"draft", both, "draft", demoPackage},
		{"ngram", both, "ngram", demoPackage},
		{"off", both, "off", demoPackage},
		{"auto without dflash", draftOnly, "auto", demoPackage},
		{"auto without a draft package", dflashOnly, "auto", demoDFlashPackage},
		{"draft without a draft package", dflashOnly, "draft", demoDFlashPackage},
		{"random demo", none, "auto", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := demoPackageFor(tc.fsys, tc.spec); got != tc.want {
				t.Errorf("demoPackageFor(%q) = %q, want %q", tc.spec, got, tc.want)
			}
		})
	}
}

// gzipPackage returns the package in dir as the embedded demo holds it:
// every file gzip-compressed under prefix.
func gzipPackage(t *testing.T, dir, prefix string) fstest.MapFS {
	t.Helper()
	fsys := fstest.MapFS{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		raw, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		var b bytes.Buffer
		zw := gzip.NewWriter(&b)
		zw.Write(raw)
		zw.Close()
		rel, _ := filepath.Rel(dir, p)
		fsys[prefix+"/"+filepath.ToSlash(rel)+".gz"] = &fstest.MapFile{Data: b.Bytes()}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return fsys
}

// TestWithDemoPackage checks that an embedded package loads with its
// tokenizer and template, the DFlash package over the files it shares
// with the other, that the extracted copy is removed once loaded, and
// that a damaged one is refused.
func TestWithDemoPackage(t *testing.T) {
	pkg, err := testmodel.Package(t.TempDir(), testmodel.Tiny("qwen3"), metal.Q8)
	if err != nil {
		t.Fatal(err)
	}
	good := gzipPackage(t, pkg, demoPackage)
	manifest := "/" + model.ManifestName + ".gz"
	// layered stores in demoDFlashPackage only the manifest (a real one
	// also has its own draft): every file it lists is demoPackage's.
	layered := func(m fstest.MapFS) { m[demoDFlashPackage+manifest] = m[demoPackage+manifest] }
	for _, tc := range []struct {
		name   string
		dir    string
		edit   func(fstest.MapFS)
		errSub string
	}{
		{"loads", demoPackage, func(fstest.MapFS) {}, ""},
		{"over the shared files", demoDFlashPackage, layered, ""},
		{"shared file changed", demoDFlashPackage, func(m fstest.MapFS) {
			layered(m)
			m[demoPackage+"/tokenizer_config.json.gz"] = m[demoPackage+"/tokenizer.json.gz"]
		}, "tokenizer_config.json has"},
		{"not gzip", demoPackage, func(m fstest.MapFS) {
			m[demoPackage+"/tokenizer.json.gz"] = &fstest.MapFile{Data: []byte("{}")}
		}, "tokenizer.json.gz"},
		{"uncompressed file", demoPackage, func(m fstest.MapFS) {
			m[demoPackage+"/notes.txt"] = &fstest.MapFile{Data: []byte("x")}
		}, "not gzip-compressed"},
		{"no manifest", demoPackage, func(m fstest.MapFS) { delete(m, demoPackage+"/"+model.ManifestName+".gz") }, "neither a Splash package"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tmp := t.TempDir()
			t.Setenv("TMPDIR", tmp)
			fsys := fstest.MapFS{}
			for k, v := range good {
				fsys[k] = v
			}
			tc.edit(fsys)
			m, err := withDemoPackage(fsys, tc.dir, loadModelDir)
			if tc.errSub != "" {
				if err == nil || !strings.Contains(err.Error(), tc.errSub) {
					t.Fatalf("error %v, want one containing %q", err, tc.errSub)
				}
			} else {
				if err != nil {
					t.Fatal(err)
				}
				defer m.close()
				if m.cfg.HiddenSize != 64 || m.tok == nil || m.tpl == nil || !strings.HasPrefix(m.identity, "pkg-") {
					t.Fatalf("loaded hidden %d tokenizer %v template %v identity %q", m.cfg.HiddenSize, m.tok != nil, m.tpl != nil, m.identity)
				}
				// the weights outlive their removed files
				emb, err := m.tensors.Tensor("model.embed_tokens.weight")
				if err != nil {
					t.Fatal(err)
				}
				if n := len(emb.Dequantize()); n != emb.Rows*emb.Cols {
					t.Fatalf("embeddings read back as %d values, want %d", n, emb.Rows*emb.Cols)
				}
			}
			if left, _ := os.ReadDir(tmp); len(left) != 0 {
				t.Errorf("%d entries left in the temporary directory", len(left))
			}
		})
	}
}
