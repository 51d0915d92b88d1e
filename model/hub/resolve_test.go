package hub

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const (
	commitA = "0123456789abcdef0123456789abcdef01234567"
	commitB = "89abcdef0123456789abcdef0123456789abcdef"
)

// checkpointRepo is a small single-file checkpoint with files Splash does
// not need (README, a duplicate weights folder).
func checkpointRepo() *fakeRepo {
	return &fakeRepo{
		commit: commitA,
		files: map[string][]byte{
			"config.json":                       []byte(`{"architectures":["Qwen3ForCausalLM"]}`),
			"model.safetensors":                 []byte(strings.Repeat("weights!", 1000)),
			"tokenizer.json":                    []byte(`{"model":{}}`),
			"tokenizer_config.json":             []byte(`{}`),
			"README.md":                         []byte("# hello"),
			"original/consolidated.safetensors": []byte("dup"),
		},
		lfs: map[string]bool{"model.safetensors": true, "original/consolidated.safetensors": true},
	}
}

func newTestResolver(t *testing.T, h *fakeHub, token string) (*Resolver, string) {
	cache := t.TempDir()
	return NewResolver(Options{CacheDir: cache, Endpoint: h.srv.URL, Token: token, Client: h.srv.Client()}), cache
}

func TestResolveDownloadsCheckpointIntoCacheLayout(t *testing.T) {
	repo := checkpointRepo()
	h := newFakeHub(t, "", map[string]*fakeRepo{"acme/tiny": repo})
	r, cache := newTestResolver(t, h, "")
	var progress []Progress
	r.opts.Progress = func(p Progress) { progress = append(progress, p) }

	dir, err := r.Resolve(context.Background(), "acme/tiny")
	if err != nil {
		t.Fatal(err)
	}
	repoDir := filepath.Join(cache, "models--acme--tiny")
	if want := filepath.Join(repoDir, "snapshots", commitA); dir != want {
		t.Fatalf("dir %s, want %s", dir, want)
	}
	if b, err := os.ReadFile(filepath.Join(repoDir, "refs", "main")); err != nil || string(b) != commitA {
		t.Fatalf("refs/main = %q, %v", b, err)
	}
	for _, name := range []string{"config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json"} {
		p := filepath.Join(dir, name)
		got, err := os.ReadFile(p)
		if err != nil || string(got) != string(repo.files[name]) {
			t.Fatalf("%s: %v (content ok: %v)", name, err, string(got) == string(repo.files[name]))
		}
		link, err := os.Readlink(p)
		if err != nil || filepath.IsAbs(link) {
			t.Fatalf("%s is not a relative symlink: %q %v", name, link, err)
		}
		blob := gitBlobID(repo.files[name])
		if repo.lfs[name] {
			blob = sha256Hex(repo.files[name])
		}
		if link != filepath.Join("..", "..", "blobs", blob) {
			t.Errorf("%s links to %s, want blob %s", name, link, blob)
		}
	}
	for _, skipped := range []string{"README.md", "original"} {
		if _, err := os.Lstat(filepath.Join(dir, skipped)); err == nil {
			t.Errorf("%s was downloaded, but a model does not need it", skipped)
		}
	}
	if len(progress) == 0 || progress[len(progress)-1].Done != progress[len(progress)-1].Total {
		t.Errorf("progress reports %+v: want some, the last complete", progress)
	}

	// A second resolution is served from the cache without the hub.
	before := len(h.log())
	h.srv.Close()
	again, err := r.Resolve(context.Background(), "acme/tiny")
	if err != nil || again != dir {
		t.Fatalf("cached resolve: %s, %v", again, err)
	}
	if len(h.log()) != before {
		t.Errorf("cached resolve contacted the hub")
	}
}

func TestResolveShardedCheckpointFetchesIndexedShardsOnly(t *testing.T) {
	repo := &fakeRepo{commit: commitA, files: map[string][]byte{
		"config.json":                      []byte(`{}`),
		"model.safetensors.index.json":     []byte(`{"weight_map":{"a":"model-00001-of-00002.safetensors","b":"model-00002-of-00002.safetensors","c":"model-00001-of-00002.safetensors"}}`),
		"model-00001-of-00002.safetensors": []byte("shard one"),
		"model-00002-of-00002.safetensors": []byte("shard two"),
		"consolidated.safetensors":         []byte("not in the index"),
		"generation_config.json":           []byte(`{}`),
	}, lfs: map[string]bool{"model-00001-of-00002.safetensors": true, "model-00002-of-00002.safetensors": true}}
	h := newFakeHub(t, "", map[string]*fakeRepo{"acme/sharded": repo})
	r, _ := newTestResolver(t, h, "")
	dir, err := r.Resolve(context.Background(), "acme/sharded")
	if err != nil {
		t.Fatal(err)
	}
	names, _ := snapshotNames(dir)
	slices.Sort(names)
	want := []string{"config.json", "generation_config.json", "model-00001-of-00002.safetensors",
		"model-00002-of-00002.safetensors", "model.safetensors.index.json"}
	if !slices.Equal(names, want) {
		t.Fatalf("snapshot holds %v, want %v", names, want)
	}
}

func TestResolveSplashPackageFetchesListedFiles(t *testing.T) {
	manifest := `{"format_version":1,"name":"tiny","target":{"file":"target/weights.bin"},
		"tokenizer":"tokenizer.json","chat_template":"tokenizer_config.json",
		"files":{"target/weights.bin":{"size":4},"tokenizer.json":{"size":2},"tokenizer_config.json":{"size":2}}}`
	repo := &fakeRepo{commit: commitA, files: map[string][]byte{
		"splash.json":           []byte(manifest),
		"target/weights.bin":    []byte("wxyz"),
		"tokenizer.json":        []byte("{}"),
		"tokenizer_config.json": []byte("{}"),
		"config.json":           []byte("{}"), // a package may carry one; not needed
		"notes.txt":             []byte("x"),
	}, lfs: map[string]bool{"target/weights.bin": true}}
	h := newFakeHub(t, "", map[string]*fakeRepo{"acme/pkg": repo})
	r, _ := newTestResolver(t, h, "")
	dir, err := r.Resolve(context.Background(), "acme/pkg")
	if err != nil {
		t.Fatal(err)
	}
	names, _ := snapshotNames(dir)
	slices.Sort(names)
	want := []string{"splash.json", "target/weights.bin", "tokenizer.json", "tokenizer_config.json"}
	if !slices.Equal(names, want) {
		t.Fatalf("snapshot holds %v, want %v", names, want)
	}
	if link, _ := os.Readlink(filepath.Join(dir, "target", "weights.bin")); link != filepath.Join("..", "..", "..", "blobs", sha256Hex([]byte("wxyz"))) {
		t.Errorf("nested file links to %s", link)
	}
}

func TestResolveRevisions(t *testing.T) {
	repo := checkpointRepo()
	repo.branches = map[string]string{"v2": commitB}
	h := newFakeHub(t, "", map[string]*fakeRepo{"acme/tiny": repo})
	tests := []struct {
		spec, wantCommit, wantRef string
		wantErr                   error
	}{
		{spec: "acme/tiny@" + commitA, wantCommit: commitA},
		{spec: "acme/tiny@main", wantCommit: commitA, wantRef: "main"},
		{spec: "acme/tiny@nope", wantErr: ErrRevisionNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.spec, func(t *testing.T) {
			r, cache := newTestResolver(t, h, "")
			dir, err := r.Resolve(context.Background(), tt.spec)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if filepath.Base(dir) != tt.wantCommit {
				t.Errorf("dir %s, want commit %s", dir, tt.wantCommit)
			}
			refs, _ := os.ReadDir(filepath.Join(cache, "models--acme--tiny", "refs"))
			if (tt.wantRef == "") != (len(refs) == 0) {
				t.Errorf("refs %v, want %q", refs, tt.wantRef)
			}
		})
	}
}

func TestResolveErrorsNameTheCause(t *testing.T) {
	private := checkpointRepo()
	private.private = true
	gated := checkpointRepo()
	gated.gated = true
	corrupt := checkpointRepo()
	corrupt.corrupt = map[string]bool{"model.safetensors": true}
	corruptSmall := checkpointRepo()
	corruptSmall.corrupt = map[string]bool{"tokenizer.json": true}
	readme := &fakeRepo{commit: commitA, files: map[string][]byte{"README.md": []byte("hi"), "model.gguf": []byte("x")}}
	repos := map[string]*fakeRepo{"acme/private": private, "acme/gated": gated, "acme/corrupt": corrupt, "acme/readme": readme, "acme/corrupt-small": corruptSmall}
	h := newFakeHub(t, "secret", repos)

	tests := []struct {
		name, spec, token string
		offline           bool
		free              int64 // bytes free on the cache's disk; 0: plenty
		want              error
		wantText          string
	}{
		{name: "missing repo", spec: "acme/missing", want: ErrRepoNotFound, wantText: "acme/missing"},
		{name: "missing repo with token", spec: "acme/missing", token: "secret", want: ErrRepoNotFound},
		{name: "private without token", spec: "acme/private", want: ErrUnauthorized, wantText: "HF_TOKEN"},
		{name: "private with wrong token", spec: "acme/private", token: "wrong", want: ErrUnauthorized, wantText: "no access"},
		{name: "gated without token", spec: "acme/gated", want: ErrUnauthorized, wantText: "gated"},
		{name: "checksum", spec: "acme/corrupt", want: ErrChecksum, wantText: "model.safetensors"},
		{name: "checksum of a small file", spec: "acme/corrupt-small", want: ErrChecksum, wantText: "git blob sha1"},
		{name: "disk full", spec: "acme/private", token: "secret", free: 100, want: ErrDiskFull, wantText: "MiB free"},
		{name: "unsupported", spec: "acme/readme", want: ErrUnsupported},
		{name: "offline", spec: "acme/private", offline: true, want: ErrNotCached, wantText: "HF_HUB_OFFLINE"},
		{name: "not a spec", spec: "just-a-name", want: ErrBadSpec},
		{name: "missing dir", spec: "./no/such/dir", want: ErrBadSpec, wantText: "no directory"},
		{name: "bad revision", spec: "acme/x@", want: ErrBadSpec},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, cache := newTestResolver(t, h, tt.token)
			r.opts.Offline = tt.offline
			if tt.free > 0 {
				r.freeSpace = func(string) (int64, error) { return tt.free, nil }
			}
			_, err := r.Resolve(context.Background(), tt.spec)
			if !errors.Is(err, tt.want) {
				t.Fatalf("err %v, want %v", err, tt.want)
			}
			if !strings.Contains(err.Error(), tt.wantText) {
				t.Errorf("err %q does not mention %q", err, tt.wantText)
			}
			if tt.want == ErrChecksum {
				// The bad download leaves neither a blob nor a partial file.
				blobs, _ := os.ReadDir(filepath.Join(cache, "models--acme--corrupt", "blobs"))
				for _, b := range blobs {
					if b.Name() == sha256Hex(corrupt.files["model.safetensors"]) || strings.HasSuffix(b.Name(), ".incomplete") {
						t.Errorf("left %s behind", b.Name())
					}
				}
			}
		})
	}
}

func TestPrivateRepoWithTokenDownloads(t *testing.T) {
	private := checkpointRepo()
	private.private = true
	h := newFakeHub(t, "secret", map[string]*fakeRepo{"acme/private": private})
	r, _ := newTestResolver(t, h, "secret")
	if _, err := r.Resolve(context.Background(), "acme/private"); err != nil {
		t.Fatal(err)
	}
}

func TestDownloadResumesWithRange(t *testing.T) {
	tests := []struct {
		name    string
		prepare func(t *testing.T, repo *fakeRepo, partial string)
		// wantRange is the Range the weights request carries first.
		wantRange string
	}{
		{
			name: "partial file from an earlier run",
			prepare: func(t *testing.T, repo *fakeRepo, partial string) {
				if err := os.WriteFile(partial, repo.files["model.safetensors"][:3000], 0o644); err != nil {
					t.Fatal(err)
				}
			},
			wantRange: "bytes=3000-",
		},
		{
			name: "partial file longer than the blob",
			prepare: func(t *testing.T, repo *fakeRepo, partial string) {
				if err := os.WriteFile(partial, make([]byte, 9000), 0o644); err != nil {
					t.Fatal(err)
				}
			},
			wantRange: "",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			repo := checkpointRepo()
			h := newFakeHub(t, "", map[string]*fakeRepo{"acme/tiny": repo})
			r, cache := newTestResolver(t, h, "")
			blobs := filepath.Join(cache, "models--acme--tiny", "blobs")
			os.MkdirAll(blobs, 0o755)
			tt.prepare(t, repo, filepath.Join(blobs, sha256Hex(repo.files["model.safetensors"])+".incomplete"))
			dir, err := r.Resolve(context.Background(), "acme/tiny")
			if err != nil {
				t.Fatal(err)
			}
			got, _ := os.ReadFile(filepath.Join(dir, "model.safetensors"))
			if string(got) != string(repo.files["model.safetensors"]) {
				t.Fatal("resumed file differs from the original")
			}
			var weightsReq string
			for _, l := range h.log() {
				if strings.Contains(l, "/resolve/") && strings.Contains(l, "model.safetensors") {
					weightsReq = l
					break
				}
			}
			if gotRange := strings.TrimSpace(strings.TrimPrefix(weightsReq, "GET /acme/tiny/resolve/"+commitA+"/model.safetensors")); gotRange != tt.wantRange {
				t.Errorf("first weights request %q, want range %q", weightsReq, tt.wantRange)
			}
		})
	}
}

func TestInterruptedDownloadResumesOnRerun(t *testing.T) {
	repo := checkpointRepo()
	repo.cutAfter = 1234
	h := newFakeHub(t, "", map[string]*fakeRepo{"acme/tiny": repo})
	r, _ := newTestResolver(t, h, "")
	if _, err := r.Resolve(context.Background(), "acme/tiny"); err == nil || !strings.Contains(err.Error(), "rerun to resume") {
		t.Fatalf("cut download: err %v, want a resumable failure", err)
	}
	dir, err := r.Resolve(context.Background(), "acme/tiny")
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "config.json")); string(got) != string(repo.files["config.json"]) {
		t.Fatal("config.json differs after resume")
	}
	resumed := false
	for _, l := range h.log() {
		resumed = resumed || strings.HasSuffix(l, "bytes=1234-")
	}
	if !resumed {
		t.Errorf("no Range request resumed at byte 1234: %v", h.log())
	}
}

func TestResolveUsesExistingDirectory(t *testing.T) {
	dir := t.TempDir()
	r := NewResolver(Options{CacheDir: t.TempDir(), Offline: true})
	got, err := r.Resolve(context.Background(), dir)
	if err != nil || got != dir {
		t.Fatalf("got %s, %v", got, err)
	}
	f := filepath.Join(dir, "file")
	os.WriteFile(f, nil, 0o644)
	if _, err := r.Resolve(context.Background(), f); !errors.Is(err, ErrBadSpec) {
		t.Fatalf("a file: err %v, want ErrBadSpec", err)
	}
}

func TestConcurrentResolversShareTheCache(t *testing.T) {
	repo := checkpointRepo()
	h := newFakeHub(t, "", map[string]*fakeRepo{"acme/tiny": repo})
	cache := t.TempDir()
	const n = 4
	dirs, errs := make([]string, n), make([]error, n)
	done := make(chan int)
	for i := range n {
		go func() {
			r := NewResolver(Options{CacheDir: cache, Endpoint: h.srv.URL, Client: h.srv.Client()})
			dirs[i], errs[i] = r.Resolve(context.Background(), "acme/tiny")
			done <- i
		}()
	}
	for range n {
		<-done
	}
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("resolver %d: %v", i, errs[i])
		}
		got, _ := os.ReadFile(filepath.Join(dirs[i], "model.safetensors"))
		if string(got) != string(repo.files["model.safetensors"]) {
			t.Fatalf("resolver %d read a damaged model.safetensors", i)
		}
	}
}
