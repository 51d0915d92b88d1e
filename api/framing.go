package api

import (
	"bytes"

	"github.com/valyala/fasthttp"
)

// ambiguousFraming reports a request that declares both a Content-Length
// and a Transfer-Encoding. RFC 9112 §6.3 lets a server read such a body
// as chunked, which fasthttp does, but the two disagree on where the
// request ends, the mismatch request smuggling through a proxy relies on,
// so the request is refused (as Go's net/http and most peers do). fasthttp
// drops the Content-Length while parsing: the raw headers still show it.
func ambiguousFraming(h *fasthttp.RequestHeader) bool {
	if len(h.Peek("Transfer-Encoding")) == 0 {
		return false
	}
	for line := range bytes.SplitSeq(h.RawHeaders(), []byte("\n")) {
		name, _, ok := bytes.Cut(line, []byte(":"))
		if ok && bytes.EqualFold(bytes.TrimSpace(name), []byte("Content-Length")) {
			return true
		}
	}
	return false
}
