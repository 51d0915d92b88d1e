package mediaurl

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"
)

func TestIsPublic(t *testing.T) {
	tests := []struct {
		ip   string
		want bool
	}{
		{"8.8.8.8", true},
		{"2606:4700:4700::1111", true},
		{"64:ff9b::808:808", true}, // NAT64 of 8.8.8.8
		{"127.0.0.1", false},
		{"127.1.2.3", false},
		{"10.1.2.3", false},
		{"172.16.0.1", false},
		{"192.168.1.1", false},
		{"169.254.169.254", false}, // cloud metadata
		{"100.64.0.1", false},
		{"0.0.0.0", false},
		{"224.0.0.1", false},
		{"255.255.255.255", false},
		{"198.18.0.1", false},
		{"::1", false},
		{"::", false},
		{"fe80::1", false},
		{"fc00::1", false},
		{"fd12:3456::1", false},
		{"ff02::1", false},
		{"::ffff:127.0.0.1", false},
		{"::ffff:10.0.0.1", false},
		{"64:ff9b::7f00:1", false}, // NAT64 of 127.0.0.1
		{"2002:a00:1::", false},    // 6to4 of 10.0.0.1
		{"2001:db8::1", false},
	}
	for _, tt := range tests {
		if got := isPublic(net.ParseIP(tt.ip)); got != tt.want {
			t.Errorf("isPublic(%s) = %v, want %v", tt.ip, got, tt.want)
		}
	}
}

func TestResolveInline(t *testing.T) {
	png := "\x89PNG\r\n\x1a\nrest!" // 13 bytes: base64 pads it
	b64 := base64.StdEncoding.EncodeToString([]byte(png))
	tests := []struct {
		name, url string
		remote    bool
		want      error
		wantType  string
	}{
		{"data URL", "data:image/png;base64," + b64, false, nil, "image/png"},
		{"data URL with parameters", "data:application/pdf;name=a.pdf;base64," + b64, false, nil, "application/pdf"},
		{"unpadded", "data:image/png;base64," + strings.TrimRight(b64, "="), false, nil, "image/png"},
		{"upper-case scheme", "DATA:image/PNG;BASE64," + b64, false, nil, "image/png"},
		{"not base64", "data:image/png," + png, false, ErrBadDataURL, ""},
		{"bad base64", "data:image/png;base64,%%%", false, ErrBadDataURL, ""},
		{"no comma", "data:image/png;base64", false, ErrBadDataURL, ""},
		{"too large", "data:image/png;base64," + strings.Repeat("QUFB", 30), false, ErrTooLarge, ""},
		{"remote off", "https://example.com/cat.png", false, ErrRemoteDisabled, ""},
		{"file", "file:///etc/passwd", true, ErrScheme, ""},
		{"ftp", "ftp://example.com/a.png", true, ErrScheme, ""},
		{"empty", "", true, ErrScheme, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := New(Options{AllowRemote: tt.remote, MaxBytes: 64})
			m, err := r.Resolve(t.Context(), tt.url)
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
			if err == nil && (string(m.Data) != png || m.MediaType != tt.wantType) {
				t.Errorf("got %q of type %q", m.Data, m.MediaType)
			}
		})
	}
}

// fakeLookup resolves names from a table, never from the network.
func fakeLookup(names map[string]string) func(context.Context, string) ([]netip.Addr, error) {
	return func(_ context.Context, host string) ([]netip.Addr, error) {
		if a, err := netip.ParseAddr(host); err == nil {
			return []netip.Addr{a}, nil
		}
		ip, ok := names[host]
		if !ok {
			return nil, fmt.Errorf("no such host %s", host)
		}
		return []netip.Addr{netip.MustParseAddr(ip)}, nil
	}
}

// TestResolveRefusesAddresses: names and literals that lead to internal
// addresses are refused at dial time, before any packet is sent.
func TestResolveRefusesAddresses(t *testing.T) {
	r := New(Options{AllowRemote: true})
	r.lookup = fakeLookup(map[string]string{
		"internal.example": "10.0.0.5",
		"rebind.example":   "127.0.0.1",
		"metadata.example": "169.254.169.254",
		"v6.example":       "::1",
		"mapped.example":   "::ffff:127.0.0.1",
	})
	for _, u := range []string{
		"http://internal.example/a.png", "https://rebind.example/a.pdf", "http://metadata.example/latest/meta-data/",
		"http://v6.example:8080/", "http://mapped.example/", "http://127.0.0.1:1/", "http://[::1]:1/", "http://0.0.0.0:80/",
	} {
		t.Run(u, func(t *testing.T) {
			_, err := r.Resolve(t.Context(), u)
			if !errors.Is(err, ErrAddress) || !strings.Contains(err.Error(), "resolves to") {
				t.Fatalf("err = %v, want %v naming the address", err, ErrAddress)
			}
		})
	}
}

// TestResolveFetch fetches from a loopback server that the test lets the
// resolver reach (127.0.0.1 only), under the size, redirect and time
// limits.
func TestResolveFetch(t *testing.T) {
	const body = "%PDF-1.4 a small file"
	mux := http.NewServeMux()
	mux.HandleFunc("/ok", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/pdf; charset=binary")
		fmt.Fprint(w, body)
	})
	mux.HandleFunc("/big", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, strings.Repeat("x", 100)) })
	mux.HandleFunc("/stream", func(w http.ResponseWriter, _ *http.Request) {
		for range 10 {
			fmt.Fprint(w, strings.Repeat("x", 20))
			w.(http.Flusher).Flush() // chunked: no Content-Length to check up front
		}
	})
	mux.HandleFunc("/missing", http.NotFound)
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
	srv := httptest.NewServer(mux)
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	mux.HandleFunc("/to-internal", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://127.0.0.2:"+port+"/ok", http.StatusFound)
	})
	mux.HandleFunc("/to-file", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "file:///etc/passwd", http.StatusFound)
	})
	mux.HandleFunc("/to-ok", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/ok", http.StatusFound) })

	base := "http://media.example:" + port
	tests := []struct {
		path    string
		timeout time.Duration
		want    error
	}{
		{"/ok", time.Minute, nil},
		{"/to-ok", time.Minute, nil},
		{"/big", time.Minute, ErrTooLarge},
		{"/stream", time.Minute, ErrTooLarge},
		{"/missing", time.Minute, ErrFetch},
		{"/to-internal", time.Minute, ErrAddress},
		{"/to-file", time.Minute, ErrFetch},
		{"/slow", 50 * time.Millisecond, ErrTimeout},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			r := New(Options{AllowRemote: true, MaxBytes: 64, Timeout: tt.timeout})
			r.lookup = fakeLookup(map[string]string{"media.example": "127.0.0.1"})
			r.publicAddr = func(ip net.IP) bool { return ip.Equal(net.IPv4(127, 0, 0, 1)) }
			m, err := r.Resolve(t.Context(), base+tt.path)
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
			if err == nil && (string(m.Data) != body || m.MediaType != "application/pdf") {
				t.Errorf("got %q of type %q", m.Data, m.MediaType)
			}
		})
	}
}

// FuzzResolveData: any data: URL decodes within the cap or is refused
// with one of the package's errors; nothing is fetched.
func FuzzResolveData(f *testing.F) {
	f.Add("data:image/png;base64,iVBORw0KGgo=")
	f.Add("data:application/pdf;base64,JVBERi0xLjQ=")
	f.Add("data:;base64,")
	f.Add("data:text/plain,hello")
	f.Add("data:x;base64,====")
	r := New(Options{MaxBytes: 64})
	f.Fuzz(func(t *testing.T, rest string) {
		m, err := r.Resolve(t.Context(), "data:"+rest)
		switch {
		case err == nil && len(m.Data) > 64:
			t.Fatalf("%d bytes decoded past the cap", len(m.Data))
		case err != nil && !errors.Is(err, ErrBadDataURL) && !errors.Is(err, ErrTooLarge):
			t.Fatalf("unexpected error %v", err)
		}
	})
}
