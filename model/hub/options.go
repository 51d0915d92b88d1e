package hub

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
)

// DefaultEndpoint is the hub used when HF_ENDPOINT is unset.
const DefaultEndpoint = "https://huggingface.co"

// Doer sends one HTTP request; *http.Client is one. Tests pass a client
// pointed at an httptest fake hub.
type Doer interface {
	Do(*http.Request) (*http.Response, error)
}

// Progress reports a download under way.
type Progress struct {
	File        string // path inside the repository
	Done, Total int64  // bytes of this file (Total 0 when unknown)
	Index       int    // this file's position, from 1
	Files       int    // files being downloaded in this resolution
}

// Options tell a Resolver where the cache and the hub are.
type Options struct {
	CacheDir string // root of the HF hub cache (see CacheDirFromEnv)
	Endpoint string // hub base URL without a trailing slash
	Token    string // bearer token for private and gated repositories
	Offline  bool   // never contact the hub
	Client   Doer   // http.DefaultClient when nil
	// Progress, when set, is called as bytes arrive (every read of up to
	// 256 KiB) and once when each file completes.
	Progress func(Progress)
}

// OptionsFromEnv reads the settings huggingface_hub reads: HF_HUB_CACHE,
// HF_HOME, HF_ENDPOINT, HF_TOKEN (else the token file at HF_TOKEN_PATH, else
// $HF_HOME/token) and HF_HUB_OFFLINE. getenv is os.Getenv outside tests.
func OptionsFromEnv(getenv func(string) string) Options {
	o := Options{CacheDir: CacheDirFromEnv(getenv), Endpoint: strings.TrimRight(getenv("HF_ENDPOINT"), "/")}
	if o.Endpoint == "" {
		o.Endpoint = DefaultEndpoint
	}
	o.Token = strings.TrimSpace(getenv("HF_TOKEN"))
	if o.Token == "" {
		path := getenv("HF_TOKEN_PATH")
		if path == "" {
			path = filepath.Join(hfHome(getenv), "token")
		}
		if b, err := os.ReadFile(path); err == nil {
			o.Token = strings.TrimSpace(string(b))
		}
	}
	switch strings.ToLower(getenv("HF_HUB_OFFLINE")) {
	case "1", "true", "yes", "on":
		o.Offline = true
	}
	return o
}

// CacheDirFromEnv is HF_HUB_CACHE, else $HF_HOME/hub, else
// ~/.cache/huggingface/hub (XDG_CACHE_HOME replaces ~/.cache when set).
func CacheDirFromEnv(getenv func(string) string) string {
	if d := getenv("HF_HUB_CACHE"); d != "" {
		return expandHome(d, getenv)
	}
	return filepath.Join(hfHome(getenv), "hub")
}

func hfHome(getenv func(string) string) string {
	if d := getenv("HF_HOME"); d != "" {
		return expandHome(d, getenv)
	}
	if d := getenv("XDG_CACHE_HOME"); d != "" {
		return filepath.Join(d, "huggingface")
	}
	return filepath.Join(getenv("HOME"), ".cache", "huggingface")
}

func expandHome(p string, getenv func(string) string) string {
	if p == "~" || strings.HasPrefix(p, "~/") {
		return filepath.Join(getenv("HOME"), p[1:])
	}
	return p
}
