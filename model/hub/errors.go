package hub

import (
	"errors"
	"syscall"
)

// Causes a resolution can fail with; errors wrap exactly one of them.
var (
	// ErrRepoNotFound: the hub has no such repository (or hides a private
	// one from an anonymous request).
	ErrRepoNotFound = errors.New("hub: repository not found")
	// ErrRevisionNotFound: the repository has no such branch, tag or commit.
	ErrRevisionNotFound = errors.New("hub: revision not found")
	// ErrUnauthorized: the repository is private or gated and the token is
	// missing or lacks access.
	ErrUnauthorized = errors.New("hub: not authorized")
	// ErrChecksum: a downloaded file does not match the size or sha256 the
	// hub reported.
	ErrChecksum = errors.New("hub: checksum mismatch")
	// ErrDiskFull: the cache's disk ran out of space.
	ErrDiskFull = errors.New("hub: disk full")
	// ErrUnsupported: the repository is neither a Splash package nor a
	// checkpoint Splash can load.
	ErrUnsupported = errors.New("hub: not a Splash package or supported checkpoint")
	// ErrNotCached: offline mode and the model is not (fully) in the cache.
	ErrNotCached = errors.New("hub: not in the cache")
	// ErrBadSpec: the --model value is neither a directory nor owner/repo.
	ErrBadSpec = errors.New("hub: not a directory or owner/repo")
)

// diskError turns an out-of-space write error into ErrDiskFull, keeping the
// original error in the chain for its path.
func diskError(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, syscall.ENOSPC) {
		return errors.Join(ErrDiskFull, err)
	}
	return err
}
