package hub

import (
	"fmt"
	"strings"
)

// DefaultRevision is the branch used when a reference names none.
const DefaultRevision = "main"

// Ref names a model repository on the hub at a revision.
type Ref struct {
	Owner, Name string
	Revision    string // branch, tag or commit; DefaultRevision when empty
}

// RepoID is owner/name, as the hub's URLs spell it.
func (r Ref) RepoID() string { return r.Owner + "/" + r.Name }

// String is owner/name@revision.
func (r Ref) String() string { return r.RepoID() + "@" + r.Revision }

// cacheFolder is the repository's directory name inside the cache root.
func (r Ref) cacheFolder() string { return "models--" + r.Owner + "--" + r.Name }

// ParseRef reads owner/repo or owner/repo@revision. Owner and repo take the
// characters the hub allows in names: letters, digits, '-', '_' and '.'.
func ParseRef(s string) (Ref, error) {
	repo, rev, hasRev := strings.Cut(s, "@")
	owner, name, ok := strings.Cut(repo, "/")
	if !ok || !validName(owner) || !validName(name) {
		return Ref{}, fmt.Errorf("%w: %q (want owner/repo[@revision])", ErrBadSpec, s)
	}
	if hasRev && (rev == "" || strings.Contains(rev, "..") || strings.HasPrefix(rev, "/")) {
		return Ref{}, fmt.Errorf("%w: %q has a bad revision", ErrBadSpec, s)
	}
	if rev == "" {
		rev = DefaultRevision
	}
	return Ref{Owner: owner, Name: name, Revision: rev}, nil
}

func validName(s string) bool {
	if s == "" || s == "." || s == ".." || len(s) > 96 {
		return false
	}
	for _, c := range s {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '-', c == '_', c == '.':
		default:
			return false
		}
	}
	return true
}

// isCommit reports whether rev is a full 40-hex-digit commit sha.
func isCommit(rev string) bool {
	if len(rev) != 40 {
		return false
	}
	for _, c := range rev {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}
