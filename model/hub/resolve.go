package hub

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Resolver turns --model values into model directories. Each blob is
// downloaded under a file lock (on unix), so processes resolving the same
// model at once wait for each other instead of mixing partial files.
type Resolver struct {
	opts Options
	// freeSpace reports the bytes free under a directory (-1: unknown);
	// tests swap it to play a full disk.
	freeSpace func(dir string) (int64, error)
}

// NewResolver returns a resolver with opts (see OptionsFromEnv).
func NewResolver(opts Options) *Resolver {
	opts.Endpoint = strings.TrimRight(opts.Endpoint, "/")
	if opts.Endpoint == "" {
		opts.Endpoint = DefaultEndpoint
	}
	return &Resolver{opts: opts, freeSpace: diskFree}
}

// Resolve returns the directory spec names: spec itself when it is a
// directory, else the cached snapshot of the owner/repo[@revision] it
// names, downloading whatever the model needs that the cache lacks.
func (r *Resolver) Resolve(ctx context.Context, spec string) (string, error) {
	if st, err := os.Stat(spec); err == nil {
		if !st.IsDir() {
			return "", fmt.Errorf("%w: %s is a file; give its directory", ErrBadSpec, spec)
		}
		return spec, nil
	}
	if looksLikePath(spec) {
		return "", fmt.Errorf("%w: no directory %s", ErrBadSpec, spec)
	}
	ref, err := ParseRef(spec)
	if err != nil {
		return "", err
	}
	if commit := r.cachedCommit(ref); commit != "" {
		dir := r.snapshotDir(ref, commit)
		ok, why := completeSnapshot(dir)
		if ok {
			return dir, nil
		}
		if r.opts.Offline {
			return "", fmt.Errorf("%w: %s (offline, HF_HUB_OFFLINE is set): %v", ErrNotCached, ref, why)
		}
	} else if r.opts.Offline {
		return "", fmt.Errorf("%w: %s (offline, HF_HUB_OFFLINE is set; cache %s)", ErrNotCached, ref, r.opts.CacheDir)
	}
	return r.Download(ctx, ref)
}

// Download fetches every file ref's model needs into the cache (skipping
// blobs already there) and returns the snapshot directory.
func (r *Resolver) Download(ctx context.Context, ref Ref) (string, error) {
	info, err := r.fetchRevision(ctx, ref)
	if err != nil {
		return "", err
	}
	commit := info.SHA
	byName := make(map[string]sibling, len(info.Siblings))
	names := make([]string, 0, len(info.Siblings))
	for _, s := range info.Siblings {
		byName[s.Name] = s
		names = append(names, s.Name)
	}
	dir := r.snapshotDir(ref, commit)
	// Metadata (splash.json, the shard index) is read to learn which other
	// files to fetch, so it is downloaded first, on demand.
	fetch := func(name string, index, total int) error {
		s, ok := byName[name]
		if !ok {
			return fmt.Errorf("%w: %s has no %s", ErrUnsupported, ref, name)
		}
		return r.download(ctx, ref, commit, s, index, total)
	}
	need, err := neededFiles(names, func(name string) ([]byte, error) {
		if err := fetch(name, 0, 0); err != nil {
			return nil, err
		}
		return os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
	})
	if err != nil {
		return "", fmt.Errorf("%s: %w", ref, err)
	}
	if err := r.checkSpace(ref, need, byName); err != nil {
		return "", err
	}
	for i, name := range need {
		if err := fetch(name, i+1, len(need)); err != nil {
			return "", err
		}
	}
	if err := r.writeRef(ref, commit); err != nil {
		return "", err
	}
	return dir, nil
}

// checkSpace fails early, before a long download, when the blobs still
// missing will not fit on the cache's disk.
func (r *Resolver) checkSpace(ref Ref, need []string, byName map[string]sibling) error {
	blobs := filepath.Join(r.repoDir(ref), "blobs")
	var missing int64
	for _, name := range need {
		s := byName[name]
		p := filepath.Join(blobs, s.blobName())
		if _, err := os.Stat(p); err == nil {
			continue
		}
		missing += s.size()
		if st, err := os.Stat(p + ".incomplete"); err == nil && st.Size() <= s.size() {
			missing -= st.Size()
		}
	}
	if missing == 0 {
		return nil
	}
	free, err := r.freeSpace(blobs)
	if err != nil || free < 0 || missing <= free {
		return nil // unknown: the write error will tell
	}
	return fmt.Errorf("%w: %s needs %.1f MiB more in %s, which has %.1f MiB free",
		ErrDiskFull, ref, float64(missing)/(1<<20), r.opts.CacheDir, float64(free)/(1<<20))
}

// writeRef records that ref's revision points at commit.
func (r *Resolver) writeRef(ref Ref, commit string) error {
	if isCommit(ref.Revision) {
		return nil
	}
	p := filepath.Join(r.repoDir(ref), "refs", filepath.FromSlash(ref.Revision))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return diskError(fmt.Errorf("hub: %w", err))
	}
	if b, err := os.ReadFile(p); err == nil && string(b) == commit {
		return nil
	}
	if err := os.WriteFile(p, []byte(commit), 0o644); err != nil {
		return diskError(fmt.Errorf("hub: %w", err))
	}
	return nil
}

// looksLikePath tells a path that does not exist from owner/repo, so a typo
// in a directory name is reported as such rather than sent to the hub.
func looksLikePath(s string) bool {
	return strings.HasPrefix(s, "/") || strings.HasPrefix(s, "./") || strings.HasPrefix(s, "../") ||
		strings.HasPrefix(s, "~") || strings.Count(strings.SplitN(s, "@", 2)[0], "/") != 1 ||
		filepath.IsAbs(s)
}
