package hub

import (
	"bytes"
	"context"
	"testing"
)

// BenchmarkDownload measures a fresh 32 MiB LFS download from a loopback
// fake hub: HTTP, sha256, write and link (b.SetBytes reports MB/s).
func BenchmarkDownload(b *testing.B) {
	weights := bytes.Repeat([]byte("0123456789abcdef"), 2<<20)
	repo := &fakeRepo{commit: commitA, files: map[string][]byte{
		"config.json": []byte("{}"), "model.safetensors": weights,
	}, lfs: map[string]bool{"model.safetensors": true}}
	h := newFakeHub(b, "", map[string]*fakeRepo{"acme/big": repo})
	b.SetBytes(int64(len(weights)))
	for b.Loop() {
		r := NewResolver(Options{CacheDir: b.TempDir(), Endpoint: h.srv.URL, Client: h.srv.Client()})
		if _, err := r.Resolve(context.Background(), "acme/big"); err != nil {
			b.Fatal(err)
		}
	}
}
