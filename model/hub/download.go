package hub

import (
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
)

// copyChunk is how much is read between progress reports.
const copyChunk = 256 << 10

// download makes path of ref at commit present in the snapshot: it fetches
// the blob unless the cache already has it, then links it into place.
func (r *Resolver) download(ctx context.Context, ref Ref, commit string, f sibling, index, total int) error {
	blob := f.blobName()
	if blob == "" || strings.ContainsAny(blob, `/\`) || strings.HasPrefix(blob, ".") {
		return fmt.Errorf("hub: %s: the hub gave %s no usable blob id", ref, f.Name)
	}
	blobs := filepath.Join(r.repoDir(ref), "blobs")
	blobPath := filepath.Join(blobs, blob)
	// Lock the blob where huggingface_hub does (.locks/<repo>/<blob>.lock),
	// so two processes resolving one model do not append to one partial file.
	locks := filepath.Join(r.opts.CacheDir, ".locks", ref.cacheFolder())
	if err := os.MkdirAll(locks, 0o755); err != nil {
		return diskError(fmt.Errorf("hub: %w", err))
	}
	unlock, err := lockFile(filepath.Join(locks, blob+".lock"))
	if err != nil {
		return err
	}
	defer unlock()
	if st, err := os.Stat(blobPath); err != nil || (f.size() > 0 && st.Size() != f.size()) {
		if err := os.MkdirAll(blobs, 0o755); err != nil {
			return diskError(fmt.Errorf("hub: %w", err))
		}
		if err := r.fetchBlob(ctx, ref, commit, f, blobPath, index, total); err != nil {
			return err
		}
	}
	return linkSnapshot(r.snapshotDir(ref, commit), f.Name, blobPath)
}

// fetchBlob downloads one file into blobPath+".incomplete", resuming what
// an earlier run left there, checks it and renames it into place.
func (r *Resolver) fetchBlob(ctx context.Context, ref Ref, commit string, f sibling, blobPath string, index, total int) error {
	partial := blobPath + ".incomplete"
	out, err := os.OpenFile(partial, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return diskError(fmt.Errorf("hub: %w", err))
	}
	defer out.Close()
	have, err := out.Seek(0, io.SeekEnd)
	if err != nil {
		return fmt.Errorf("hub: %w", err)
	}
	want := f.size()
	if want > 0 && have > want {
		// Longer than the file: not a prefix of it. Start over.
		if err := out.Truncate(0); err != nil {
			return fmt.Errorf("hub: %w", err)
		}
		if have, err = out.Seek(0, io.SeekStart); err != nil {
			return fmt.Errorf("hub: %w", err)
		}
	}
	sum := newChecksum(f, want)
	if sum != nil {
		if have > 0 {
			if _, err := io.Copy(sum.h, io.NewSectionReader(out, 0, have)); err != nil {
				return fmt.Errorf("hub: rehashing %s: %w", partial, err)
			}
		}
	}
	report := func(done int64) {
		if r.opts.Progress != nil {
			r.opts.Progress(Progress{File: f.Name, Done: done, Total: want, Index: index, Files: total})
		}
	}
	if want == 0 || have < want {
		if have, err = r.fetchInto(ctx, ref, commit, f, out, have, sum, report); err != nil {
			return err
		}
	}
	report(have)
	if want > 0 && have != want {
		return fmt.Errorf("%w: %s of %s: got %d bytes, the hub reported %d", ErrChecksum, f.Name, ref, have, want)
	}
	if sum != nil {
		if got := hex.EncodeToString(sum.h.Sum(nil)); got != sum.want {
			// A corrupt partial file would fail every resume: drop it.
			out.Close()
			os.Remove(partial)
			return fmt.Errorf("%w: %s of %s: %s %s, the hub reported %s", ErrChecksum, f.Name, ref, sum.algo, got, sum.want)
		}
	}
	if err := out.Sync(); err != nil {
		return diskError(fmt.Errorf("hub: %w", err))
	}
	if err := out.Close(); err != nil {
		return diskError(fmt.Errorf("hub: %w", err))
	}
	if err := os.Rename(partial, blobPath); err != nil {
		return fmt.Errorf("hub: %w", err)
	}
	return nil
}

// checksum is the digest a download is checked against: the sha256 the hub
// reports for an LFS file, else git's blob id, the sha1 of "blob <size>\0"
// followed by the content.
type checksum struct {
	h          hash.Hash
	algo, want string
	gitPrefix  []byte
}

// newChecksum returns the check for f, or nil when the hub gave nothing to
// check against (size is then the only check).
func newChecksum(f sibling, size int64) *checksum {
	switch {
	case f.LFS != nil && f.LFS.SHA256 != "":
		return &checksum{h: sha256.New(), algo: "sha256", want: f.LFS.SHA256}
	case isCommit(f.BlobID) && f.LFS == nil: // 40 hex digits, like a commit
		c := &checksum{h: sha1.New(), algo: "git blob sha1", want: f.BlobID, gitPrefix: fmt.Appendf(nil, "blob %d\x00", size)}
		c.h.Write(c.gitPrefix)
		return c
	}
	return nil
}

func (c *checksum) reset() {
	c.h.Reset()
	c.h.Write(c.gitPrefix)
}

// fetchInto appends the file's bytes from offset have to out, asking for a
// Range when resuming. It returns the file's length on disk afterwards.
func (r *Resolver) fetchInto(ctx context.Context, ref Ref, commit string, f sibling, out *os.File, have int64, sum *checksum, report func(int64)) (int64, error) {
	rangeHeader := ""
	if have > 0 {
		rangeHeader = fmt.Sprintf("bytes=%d-", have)
	}
	resp, err := r.get(ctx, r.fileURL(ref, commit, f.Name), rangeHeader)
	if err != nil {
		return have, err
	}
	defer resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusPartialContent:
		if !strings.HasPrefix(resp.Header.Get("Content-Range"), fmt.Sprintf("bytes %d-", have)) {
			return have, fmt.Errorf("hub: %s: resumed at the wrong offset (Content-Range %q, want %d)", f.Name, resp.Header.Get("Content-Range"), have)
		}
	case http.StatusOK:
		if have > 0 { // the server ignored the Range: start over
			if err := out.Truncate(0); err != nil {
				return 0, fmt.Errorf("hub: %w", err)
			}
			if _, err := out.Seek(0, io.SeekStart); err != nil {
				return 0, fmt.Errorf("hub: %w", err)
			}
			have = 0
			if sum != nil {
				sum.reset()
			}
		}
	case http.StatusRequestedRangeNotSatisfiable:
		return have, nil // nothing past have: the size check decides
	default:
		return have, r.statusError(resp, ref)
	}
	var w io.Writer = out
	if sum != nil {
		w = io.MultiWriter(out, sum.h)
	}
	buf := make([]byte, copyChunk)
	for {
		n, rerr := resp.Body.Read(buf)
		if n > 0 {
			if _, err := w.Write(buf[:n]); err != nil {
				return have, diskError(fmt.Errorf("hub: writing %s: %w", out.Name(), err))
			}
			have += int64(n)
			report(have)
		}
		if errors.Is(rerr, io.EOF) {
			return have, nil
		}
		if rerr != nil {
			return have, fmt.Errorf("hub: downloading %s (rerun to resume): %w", f.Name, rerr)
		}
	}
}

// linkSnapshot points snapshot/name at blobPath with a relative symlink, as
// huggingface_hub does, so the cache can move as a whole.
func linkSnapshot(snapshot, name, blobPath string) error {
	dst := filepath.Join(snapshot, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return diskError(fmt.Errorf("hub: %w", err))
	}
	rel, err := filepath.Rel(filepath.Dir(dst), blobPath)
	if err != nil {
		return fmt.Errorf("hub: %w", err)
	}
	if cur, err := os.Readlink(dst); err == nil && cur == rel {
		return nil
	}
	os.Remove(dst)
	if err := os.Symlink(rel, dst); err != nil {
		return fmt.Errorf("hub: linking %s: %w", dst, err)
	}
	return nil
}
