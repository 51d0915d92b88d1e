package hub

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// repoDir is the repository's directory in the cache.
func (r *Resolver) repoDir(ref Ref) string { return filepath.Join(r.opts.CacheDir, ref.cacheFolder()) }

// cachedCommit is the commit ref's revision points at in the cache, or ""
// when the cache does not know the revision.
func (r *Resolver) cachedCommit(ref Ref) string {
	if isCommit(ref.Revision) {
		return ref.Revision
	}
	b, err := os.ReadFile(filepath.Join(r.repoDir(ref), "refs", filepath.FromSlash(ref.Revision)))
	if err != nil {
		return ""
	}
	if c := strings.TrimSpace(string(b)); isCommit(c) {
		return c
	}
	return ""
}

func (r *Resolver) snapshotDir(ref Ref, commit string) string {
	return filepath.Join(r.repoDir(ref), "snapshots", commit)
}

// snapshotNames lists the files of a snapshot whose content is present
// (a dangling symlink to a missing blob does not count), as slash paths.
func snapshotNames(dir string) ([]string, error) {
	var names []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		if st, err := os.Stat(p); err != nil || !st.Mode().IsRegular() {
			return nil
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		names = append(names, filepath.ToSlash(rel))
		return nil
	})
	return names, err
}

// completeSnapshot reports whether dir holds every file its model needs.
// An unsupported or partial snapshot is not complete; the reason is
// returned for the offline error message.
func completeSnapshot(dir string) (bool, error) {
	names, err := snapshotNames(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return false, fmt.Errorf("no snapshot at %s", dir)
		}
		return false, err
	}
	present := make(map[string]bool, len(names))
	for _, n := range names {
		present[n] = true
	}
	need, err := neededFiles(names, func(name string) ([]byte, error) {
		return os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
	})
	if err != nil {
		return false, err
	}
	for _, n := range need {
		if !present[n] {
			return false, fmt.Errorf("%s is missing %s", dir, n)
		}
	}
	return true, nil
}
