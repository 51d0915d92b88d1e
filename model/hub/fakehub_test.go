package hub

import (
	"bytes"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeRepo is one repository served by fakeHub.
type fakeRepo struct {
	commit   string
	branches map[string]string // revision -> commit; "main" always maps to commit
	files    map[string][]byte
	lfs      map[string]bool // files stored in LFS (sha256 reported)
	private  bool            // needs the token
	gated    bool
	corrupt  map[string]bool // serve these with one byte flipped
	// cutAfter, when > 0, makes the first download of each file stop after
	// that many bytes by closing the connection mid-body.
	cutAfter int
}

// fakeHub serves the hub's URL shapes for its repos on 127.0.0.1.
type fakeHub struct {
	t     testing.TB
	token string
	repos map[string]*fakeRepo

	mu       sync.Mutex
	requests []string       // "GET path [Range]" in order
	cut      map[string]int // downloads cut so far, per file
	srv      *httptest.Server
}

func newFakeHub(t testing.TB, token string, repos map[string]*fakeRepo) *fakeHub {
	h := &fakeHub{t: t, token: token, repos: repos, cut: map[string]int{}}
	h.srv = httptest.NewServer(http.HandlerFunc(h.serve))
	t.Cleanup(h.srv.Close)
	return h
}

func (h *fakeHub) log() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.requests...)
}

func (h *fakeHub) serve(w http.ResponseWriter, req *http.Request) {
	h.mu.Lock()
	entry := "GET " + req.URL.EscapedPath()
	if rg := req.Header.Get("Range"); rg != "" {
		entry += " " + rg
	}
	h.requests = append(h.requests, entry)
	h.mu.Unlock()

	p := strings.TrimPrefix(req.URL.Path, "/")
	if rest, ok := strings.CutPrefix(p, "api/models/"); ok {
		parts := strings.SplitN(rest, "/", 4) // owner, name, "revision", rev
		if len(parts) != 4 || parts[2] != "revision" {
			http.NotFound(w, req)
			return
		}
		repo := h.access(w, req, parts[0]+"/"+parts[1])
		if repo == nil {
			return
		}
		h.info(w, req, repo, parts[3])
		return
	}
	parts := strings.SplitN(p, "/", 5) // owner, name, "resolve", commit, path
	if len(parts) != 5 || parts[2] != "resolve" {
		http.NotFound(w, req)
		return
	}
	repo := h.access(w, req, parts[0]+"/"+parts[1])
	if repo == nil {
		return
	}
	data, ok := repo.files[parts[4]]
	if !ok || parts[3] != repo.commit {
		w.Header().Set("X-Error-Code", "EntryNotFound")
		http.Error(w, `{"error":"Entry not found"}`, http.StatusNotFound)
		return
	}
	if repo.corrupt[parts[4]] {
		data = append([]byte(nil), data...)
		data[len(data)/2] ^= 0xff
	}
	h.mu.Lock()
	cut := repo.cutAfter > 0 && h.cut[parts[4]] == 0 && req.Header.Get("Range") == ""
	if cut {
		h.cut[parts[4]]++
	}
	h.mu.Unlock()
	if cut {
		// Promise the whole file, send part of it, drop the connection.
		w.Header().Set("Content-Length", fmt.Sprint(len(data)))
		w.WriteHeader(http.StatusOK)
		w.Write(data[:repo.cutAfter])
		w.(http.Flusher).Flush()
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			conn.Close()
		}
		return
	}
	http.ServeContent(w, req, parts[4], time.Time{}, bytes.NewReader(data))
}

// access applies the hub's answers for missing, private and gated repos.
func (h *fakeHub) access(w http.ResponseWriter, req *http.Request, id string) *fakeRepo {
	repo, ok := h.repos[id]
	sent := req.Header.Get("Authorization")
	authed := h.token != "" && sent == "Bearer "+h.token
	switch {
	case ok && repo.private && sent == "":
		// The hub hides private repos from anonymous callers behind a 401
		// that says "not found".
		w.Header().Set("X-Error-Code", "RepoNotFound")
		http.Error(w, `{"error":"Repository Not Found"}`, http.StatusUnauthorized)
		return nil
	case !ok:
		w.Header().Set("X-Error-Code", "RepoNotFound")
		http.Error(w, `{"error":"Repository Not Found"}`, http.StatusNotFound)
		return nil
	case repo.private && !authed:
		http.Error(w, `{"error":"Invalid credentials in Authorization header"}`, http.StatusUnauthorized)
		return nil
	case repo.gated && !authed:
		w.Header().Set("X-Error-Code", "GatedRepo")
		http.Error(w, `{"error":"Access to model is restricted"}`, http.StatusUnauthorized)
		return nil
	}
	return repo
}

func (h *fakeHub) info(w http.ResponseWriter, req *http.Request, repo *fakeRepo, rev string) {
	commit, ok := repo.branches[rev]
	if rev == "main" || rev == repo.commit {
		commit, ok = repo.commit, true
	}
	if !ok {
		w.Header().Set("X-Error-Code", "RevisionNotFound")
		http.Error(w, `{"error":"Invalid rev id: `+rev+`"}`, http.StatusNotFound)
		return
	}
	if req.URL.Query().Get("blobs") != "true" {
		h.t.Errorf("model info asked without blobs=true: %s", req.URL)
	}
	type lfs struct {
		SHA256      string `json:"sha256"`
		Size        int    `json:"size"`
		PointerSize int    `json:"pointerSize"`
	}
	type sib struct {
		Name   string `json:"rfilename"`
		Size   int    `json:"size"`
		BlobID string `json:"blobId"`
		LFS    *lfs   `json:"lfs,omitempty"`
	}
	out := struct {
		ID       string `json:"id"`
		SHA      string `json:"sha"`
		Siblings []sib  `json:"siblings"`
	}{ID: "x", SHA: commit}
	for name, data := range repo.files {
		s := sib{Name: name, Size: len(data), BlobID: gitBlobID(data)}
		if repo.lfs[name] {
			sum := sha256.Sum256(data)
			s.LFS = &lfs{SHA256: hex.EncodeToString(sum[:]), Size: len(data), PointerSize: 134}
		}
		out.Siblings = append(out.Siblings, s)
	}
	json.NewEncoder(w).Encode(out)
}

// gitBlobID is git's object id of a blob, as the hub reports blobId.
func gitBlobID(data []byte) string {
	h := sha1.New()
	fmt.Fprintf(h, "blob %d\x00", len(data))
	h.Write(data)
	return hex.EncodeToString(h.Sum(nil))
}

func sha256Hex(data []byte) string {
	s := sha256.Sum256(data)
	return hex.EncodeToString(s[:])
}
