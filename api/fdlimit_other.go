//go:build !unix

package api

// openFileLimit is unknown on this platform: the connection cap stands as
// configured.
func openFileLimit() int { return 0 }
