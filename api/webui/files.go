package webui

import (
	"embed"
	"path"
	"strings"
)

// URL paths of the page and of its assets.
const (
	IndexPath   = "/"
	AssetPrefix = "/webui/"
)

// static holds the page's files; it is written once by the compiler and
// only read.
//
//go:embed static
var static embed.FS

// File is one embedded file, ready to serve.
type File struct {
	Body        []byte
	ContentType string
}

// Lookup returns the file served at urlPath, if there is one.
func Lookup(urlPath string) (File, bool) {
	name, ok := fileName(urlPath)
	if !ok {
		return File{}, false
	}
	body, err := static.ReadFile("static/" + name)
	if err != nil {
		return File{}, false
	}
	return File{Body: body, ContentType: contentType(name)}, true
}

// Owns reports whether urlPath belongs to the page (the page itself or one
// of its assets), whether or not such a file exists. Servers use it to
// exempt the page from API-key checks, as they do /health.
func Owns(urlPath string) bool {
	return urlPath == IndexPath || strings.HasPrefix(urlPath, AssetPrefix)
}

// Assets lists the URL paths of every embedded asset besides the page.
func Assets() []string {
	entries, err := static.ReadDir("static")
	if err != nil { // cannot happen: the directory is embedded
		return nil
	}
	var out []string
	for _, e := range entries {
		if e.Name() != "index.html" {
			out = append(out, AssetPrefix+e.Name())
		}
	}
	return out
}

// fileName maps a URL path to a file name in static/. Only flat names are
// accepted, so no path can climb out of the directory.
func fileName(urlPath string) (string, bool) {
	if urlPath == IndexPath {
		return "index.html", true
	}
	name, ok := strings.CutPrefix(urlPath, AssetPrefix)
	if !ok || name == "" || name == "index.html" || strings.ContainsAny(name, "/\\") || strings.HasPrefix(name, ".") {
		return "", false
	}
	return name, true
}

// contentType is the Content-Type of an embedded file, by extension.
func contentType(name string) string {
	switch path.Ext(name) {
	case ".html":
		return "text/html; charset=utf-8"
	case ".css":
		return "text/css; charset=utf-8"
	case ".js":
		return "text/javascript; charset=utf-8"
	case ".svg":
		return "image/svg+xml"
	default:
		return "application/octet-stream"
	}
}
