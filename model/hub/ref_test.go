package hub

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

func TestParseRef(t *testing.T) {
	tests := []struct {
		in      string
		want    Ref
		wantErr bool
	}{
		{in: "Qwen/Qwen3-0.6B", want: Ref{"Qwen", "Qwen3-0.6B", "main"}},
		{in: "Qwen/Qwen3-0.6B@v1.0", want: Ref{"Qwen", "Qwen3-0.6B", "v1.0"}},
		{in: "a/b@refs/pr/1", want: Ref{"a", "b", "refs/pr/1"}},
		{in: "a/b@" + commitA, want: Ref{"a", "b", commitA}},
		{in: "noslash", wantErr: true},
		{in: "a/b/c", wantErr: true},
		{in: "a/b@", wantErr: true},
		{in: "a/b@../x", wantErr: true},
		{in: "../b", wantErr: true},
		{in: "a b/c", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseRef(tt.in)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err %v, wantErr %v", err, tt.wantErr)
			}
			if err == nil && got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
			if err != nil && !errors.Is(err, ErrBadSpec) {
				t.Errorf("err %v does not wrap ErrBadSpec", err)
			}
		})
	}
}

func TestOptionsFromEnv(t *testing.T) {
	home := t.TempDir()
	hfHome := filepath.Join(home, "hf")
	os.MkdirAll(hfHome, 0o755)
	os.WriteFile(filepath.Join(hfHome, "token"), []byte("hf_file\n"), 0o600)
	tests := []struct {
		name string
		env  map[string]string
		want Options
	}{
		{name: "defaults", env: map[string]string{"HOME": home},
			want: Options{CacheDir: filepath.Join(home, ".cache", "huggingface", "hub"), Endpoint: DefaultEndpoint}},
		{name: "HF_HOME and its token file", env: map[string]string{"HOME": home, "HF_HOME": hfHome},
			want: Options{CacheDir: filepath.Join(hfHome, "hub"), Endpoint: DefaultEndpoint, Token: "hf_file"}},
		{name: "HF_HUB_CACHE wins, HF_TOKEN wins", env: map[string]string{"HOME": home, "HF_HOME": hfHome, "HF_HUB_CACHE": "/c", "HF_TOKEN": "hf_env"},
			want: Options{CacheDir: "/c", Endpoint: DefaultEndpoint, Token: "hf_env"}},
		{name: "tilde, endpoint, offline", env: map[string]string{"HOME": home, "HF_HUB_CACHE": "~/hc", "HF_ENDPOINT": "http://mirror/", "HF_HUB_OFFLINE": "1"},
			want: Options{CacheDir: filepath.Join(home, "hc"), Endpoint: "http://mirror", Offline: true}},
		{name: "XDG cache", env: map[string]string{"HOME": home, "XDG_CACHE_HOME": "/x"},
			want: Options{CacheDir: "/x/huggingface/hub", Endpoint: DefaultEndpoint}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := OptionsFromEnv(func(k string) string { return tt.env[k] })
			if got.CacheDir != tt.want.CacheDir || got.Endpoint != tt.want.Endpoint || got.Token != tt.want.Token || got.Offline != tt.want.Offline {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestDiskErrorNamesFullDisk(t *testing.T) {
	full := fmt.Errorf("hub: writing x: %w", &os.PathError{Op: "write", Path: "x", Err: syscall.ENOSPC})
	if err := diskError(full); !errors.Is(err, ErrDiskFull) || !errors.Is(err, syscall.ENOSPC) {
		t.Errorf("ENOSPC: %v", err)
	}
	other := errors.New("hub: other")
	if err := diskError(other); errors.Is(err, ErrDiskFull) {
		t.Errorf("other error became disk full: %v", err)
	}
}
