package hub

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// sibling is one file of a revision in the hub's model-info answer
// (GET /api/models/{repo}/revision/{rev}?blobs=true).
type sibling struct {
	Name   string `json:"rfilename"`
	Size   int64  `json:"size"`
	BlobID string `json:"blobId"` // git blob sha1; the etag of a non-LFS file
	LFS    *struct {
		SHA256 string `json:"sha256"`
		Size   int64  `json:"size"`
	} `json:"lfs"`
}

// blobName is the file's name in blobs/: the sha256 of an LFS file, else
// its git blob id, as huggingface_hub names them (both are its etag).
func (s sibling) blobName() string {
	if s.LFS != nil && s.LFS.SHA256 != "" {
		return s.LFS.SHA256
	}
	return s.BlobID
}

// size is the file's byte count, from the LFS pointer when there is one.
func (s sibling) size() int64 {
	if s.LFS != nil && s.LFS.Size > 0 {
		return s.LFS.Size
	}
	return s.Size
}

// revisionInfo is the part of the model-info answer used here.
type revisionInfo struct {
	SHA      string    `json:"sha"`
	Siblings []sibling `json:"siblings"`
}

// fetchRevision asks the hub for ref's commit and file list.
func (r *Resolver) fetchRevision(ctx context.Context, ref Ref) (*revisionInfo, error) {
	u := r.opts.Endpoint + "/api/models/" + ref.RepoID() + "/revision/" + url.PathEscape(ref.Revision) + "?blobs=true"
	resp, err := r.get(ctx, u, "")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, r.statusError(resp, ref)
	}
	var info revisionInfo
	if err := json.NewDecoder(io.LimitReader(resp.Body, 64<<20)).Decode(&info); err != nil {
		return nil, fmt.Errorf("hub: %s: bad model info: %w", ref, err)
	}
	if !isCommit(info.SHA) {
		return nil, fmt.Errorf("hub: %s: model info has no commit sha", ref)
	}
	return &info, nil
}

// fileURL is where the hub serves path at commit.
func (r *Resolver) fileURL(ref Ref, commit, path string) string {
	parts := strings.Split(path, "/")
	for i, p := range parts {
		parts[i] = url.PathEscape(p)
	}
	return r.opts.Endpoint + "/" + ref.RepoID() + "/resolve/" + commit + "/" + strings.Join(parts, "/")
}

// get sends a GET with the token and, when rangeHeader is set, a Range.
func (r *Resolver) get(ctx context.Context, u, rangeHeader string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, fmt.Errorf("hub: %w", err)
	}
	if r.opts.Token != "" {
		req.Header.Set("Authorization", "Bearer "+r.opts.Token)
	}
	if rangeHeader != "" {
		req.Header.Set("Range", rangeHeader)
	}
	req.Header.Set("User-Agent", "splash")
	client := r.opts.Client
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("hub: GET %s: %w", u, err)
	}
	return resp, nil
}

// statusError names the cause of a failed hub answer. The hub answers 401
// (not 404) for a repository it will not show an anonymous caller, with
// X-Error-Code saying RepoNotFound or GatedRepo.
func (r *Resolver) statusError(resp *http.Response, ref Ref) error {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
	msg := strings.TrimSpace(string(body))
	var j struct {
		Error string `json:"error"`
	}
	if json.Unmarshal(body, &j) == nil && j.Error != "" {
		msg = j.Error
	}
	code := resp.Header.Get("X-Error-Code")
	denied := resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden
	switch {
	case code == "GatedRepo":
		return fmt.Errorf("%w: %s is gated: accept its terms on the hub and use a token with access (HTTP %d: %s)", ErrUnauthorized, ref.RepoID(), resp.StatusCode, msg)
	case code == "RevisionNotFound":
		return fmt.Errorf("%w: %s has no revision %q (%s)", ErrRevisionNotFound, ref.RepoID(), ref.Revision, msg)
	case code == "EntryNotFound":
		return fmt.Errorf("hub: %s: a file the listing named is missing (HTTP %d: %s)", ref, resp.StatusCode, msg)
	case denied && r.opts.Token == "":
		return fmt.Errorf("%w: %s is private, gated or missing, and no token is set: set HF_TOKEN (HTTP %d: %s)", ErrUnauthorized, ref.RepoID(), resp.StatusCode, msg)
	case code == "RepoNotFound" || resp.StatusCode == http.StatusNotFound:
		return fmt.Errorf("%w: %s at %s (HTTP %d; a private repository your token cannot see looks the same)", ErrRepoNotFound, ref.RepoID(), r.opts.Endpoint, resp.StatusCode)
	case denied:
		return fmt.Errorf("%w: the token has no access to %s (HTTP %d: %s)", ErrUnauthorized, ref.RepoID(), resp.StatusCode, msg)
	}
	return fmt.Errorf("hub: %s: HTTP %d from %s: %s", ref, resp.StatusCode, r.opts.Endpoint, msg)
}
