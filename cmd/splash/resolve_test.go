package main

import (
	"bytes"
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/splash-inference/splash/model/hub"
	"github.com/splash-inference/splash/model/testmodel"
)

const fakeCommit = "1111111111111111111111111111111111111111"

// serveRepoDir serves dir as the hub repository owner/name at fakeCommit,
// in the hub's URL shapes, with safetensors files as LFS files.
func serveRepoDir(t *testing.T, repoID, dir string) *httptest.Server {
	t.Helper()
	files := map[string][]byte{}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		files[e.Name()] = b
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/api/models/"+repoID+"/revision/main":
			type sib struct {
				Name   string         `json:"rfilename"`
				Size   int            `json:"size"`
				BlobID string         `json:"blobId"`
				LFS    map[string]any `json:"lfs,omitempty"`
			}
			var sibs []sib
			for name, b := range files {
				h := sha1.Sum(append([]byte(fmt.Sprintf("blob %d\x00", len(b))), b...))
				s := sib{Name: name, Size: len(b), BlobID: hex.EncodeToString(h[:])}
				if strings.HasSuffix(name, ".safetensors") {
					sum := sha256.Sum256(b)
					s.LFS = map[string]any{"sha256": hex.EncodeToString(sum[:]), "size": len(b)}
				}
				sibs = append(sibs, s)
			}
			json.NewEncoder(w).Encode(map[string]any{"sha": fakeCommit, "siblings": sibs})
		case strings.HasPrefix(r.URL.Path, "/"+repoID+"/resolve/"+fakeCommit+"/"):
			b, ok := files[strings.TrimPrefix(r.URL.Path, "/"+repoID+"/resolve/"+fakeCommit+"/")]
			if !ok {
				http.NotFound(w, r)
				return
			}
			http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(b))
		default:
			w.Header().Set("X-Error-Code", "RepoNotFound")
			http.Error(w, `{"error":"Repository not found"}`, http.StatusNotFound)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// tinyCheckpoint writes a loadable tiny Qwen3 checkpoint with its tokenizer
// and a README the resolver must not fetch.
func tinyCheckpoint(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := testmodel.Write(dir, testmodel.Tiny("qwen3")); err != nil {
		t.Fatal(err)
	}
	if err := testmodel.CopyTokenizer(dir, "qwen3"); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "README.md"), []byte("# tiny"), 0o644)
	return dir
}

func TestPullThenLoadFromCache(t *testing.T) {
	srv := serveRepoDir(t, "acme/tiny", tinyCheckpoint(t))
	cache := t.TempDir()
	t.Setenv("HF_HUB_CACHE", cache)
	t.Setenv("HF_ENDPOINT", srv.URL)
	t.Setenv("HF_TOKEN", "")
	t.Setenv("HF_HUB_OFFLINE", "")

	stdout, stderr, err := runSplash(t, "pull", "acme/tiny")
	if err != nil {
		t.Fatalf("pull: %v\n%s", err, stderr)
	}
	want := filepath.Join(cache, "models--acme--tiny", "snapshots", fakeCommit)
	if strings.TrimSpace(stdout) != want {
		t.Errorf("pull printed %q, want %q", stdout, want)
	}
	if !strings.Contains(stderr, "model.safetensors") || !strings.Contains(stderr, "100%") {
		t.Errorf("no progress bar on stderr:\n%s", stderr)
	}
	if _, err := os.Lstat(filepath.Join(want, "README.md")); err == nil {
		t.Error("README.md was downloaded")
	}

	// Offline now: serve's loader finds the model in the cache alone.
	srv.Close()
	t.Setenv("HF_HUB_OFFLINE", "1")
	var errb bytes.Buffer
	m, err := loadModelSpec(context.Background(), &stdio{out: &bytes.Buffer{}, err: &errb}, "acme/tiny", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer m.close()
	if m.name != "acme/tiny" || m.cfg.HiddenSize != 64 {
		t.Errorf("loaded %q with hidden %d, want acme/tiny with 64", m.name, m.cfg.HiddenSize)
	}
}

func TestServeModelFromHub(t *testing.T) {
	srv := serveRepoDir(t, "acme/tiny", tinyCheckpoint(t))
	t.Setenv("HF_HUB_CACHE", t.TempDir())
	t.Setenv("HF_ENDPOINT", srv.URL)
	t.Setenv("HF_TOKEN", "")
	t.Setenv("HF_HUB_OFFLINE", "")
	addr, _, stop := startServe(t, "--model", "acme/tiny")
	defer func() {
		if err := stop(); err != nil {
			t.Error(err)
		}
	}()
	if ids := servedModels(t, addr); len(ids) != 1 || ids[0] != "acme/tiny" {
		t.Fatalf("/v1/models = %v; want acme/tiny", ids)
	}
}

// servedModels is the ids /v1/models of the server at addr lists.
func servedModels(t *testing.T, addr string) []string {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/v1/models")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil {
		t.Fatalf("/v1/models: %v", err)
	}
	var ids []string
	for _, m := range list.Data {
		ids = append(ids, m.ID)
	}
	return ids
}

func TestPullErrors(t *testing.T) {
	srv := serveRepoDir(t, "acme/tiny", t.TempDir())
	t.Setenv("HF_HUB_CACHE", t.TempDir())
	t.Setenv("HF_ENDPOINT", srv.URL)
	t.Setenv("HF_TOKEN", "")
	t.Setenv("HF_HUB_OFFLINE", "")
	tests := []struct {
		name string
		args []string
		want string
	}{
		{name: "no argument", args: []string{"pull"}, want: "exactly one"},
		{name: "missing repo", args: []string{"pull", "acme/missing"}, want: "repository not found"},
		{name: "empty repo", args: []string{"pull", "acme/tiny"}, want: "not a Splash package or supported checkpoint"},
		{name: "not a repo", args: []string{"pull", "nonsense"}, want: "owner/repo"},
		{name: "local dir", args: []string{"pull", t.TempDir()}, want: "local directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := runSplash(t, tt.args...)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err %v, want it to mention %q", err, tt.want)
			}
		})
	}
}

func TestProgressBarRedrawsOnlyOnChange(t *testing.T) {
	var buf bytes.Buffer
	b := &progressBar{w: &buf}
	for done := int64(0); done <= 1000; done++ {
		b.update(hub.Progress{File: "w.safetensors", Done: done, Total: 1000, Index: 2, Files: 3})
	}
	b.update(hub.Progress{File: "next.json", Done: 10, Total: 10, Index: 3, Files: 3})
	b.finish()
	out := buf.String()
	if n := strings.Count(out, "\r"); n != 102 { // 0..100% of the first file, 100% of the second
		t.Errorf("%d redraws, want 102", n)
	}
	if !strings.Contains(out, "[2/3] w.safetensors") || !strings.HasSuffix(out, "\n") || strings.Count(out, "\n") != 2 {
		t.Errorf("bar output %q", out)
	}
}
