package webui

import (
	"strings"
	"testing"
)

func TestLookup(t *testing.T) {
	tests := []struct {
		path        string
		ok          bool
		contentType string
		contains    string
	}{
		{"/", true, "text/html; charset=utf-8", "<title>Splash</title>"},
		{"/webui/style.css", true, "text/css; charset=utf-8", "body"},
		{"/webui/app.js", true, "text/javascript; charset=utf-8", "/v1/chat/completions"},
		{"/webui/markdown.js", true, "text/javascript; charset=utf-8", "renderMarkdown"},
		{"/webui/sse.js", true, "text/javascript; charset=utf-8", "readSSE"},
		{"/webui/index.html", false, "", ""}, // the page lives at / only
		{"/webui/", false, "", ""},
		{"/webui/missing.js", false, "", ""},
		{"/webui/../files.go", false, "", ""},
		{"/webui/.hidden", false, "", ""},
		{"/index.html", false, "", ""},
		{"/v1/models", false, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			f, ok := Lookup(tt.path)
			if ok != tt.ok {
				t.Fatalf("Lookup(%q) ok = %v, want %v", tt.path, ok, tt.ok)
			}
			if !ok {
				return
			}
			if f.ContentType != tt.contentType {
				t.Errorf("content type = %q, want %q", f.ContentType, tt.contentType)
			}
			if !strings.Contains(string(f.Body), tt.contains) {
				t.Errorf("body does not contain %q", tt.contains)
			}
		})
	}
}

func TestOwns(t *testing.T) {
	tests := []struct {
		path string
		want bool
	}{
		{"/", true},
		{"/webui/app.js", true},
		{"/webui/nothing-here", true},
		{"/health", false},
		{"/v1/models", false},
		{"/webuix", false},
		{"", false},
	}
	for _, tt := range tests {
		if got := Owns(tt.path); got != tt.want {
			t.Errorf("Owns(%q) = %v, want %v", tt.path, got, tt.want)
		}
	}
}

// TestAssetsAreLinked checks that every asset is found by Lookup and that
// the page references it, so a renamed file cannot silently break the page.
func TestAssetsAreLinked(t *testing.T) {
	page, ok := Lookup(IndexPath)
	if !ok {
		t.Fatal("no page")
	}
	assets := Assets()
	if len(assets) < 4 {
		t.Fatalf("Assets() = %v, want the stylesheet and three scripts", assets)
	}
	for _, a := range assets {
		if _, ok := Lookup(a); !ok {
			t.Errorf("Lookup(%q) failed", a)
		}
		if !strings.Contains(string(page.Body), `"`+a+`"`) {
			t.Errorf("index.html does not reference %s", a)
		}
	}
}
