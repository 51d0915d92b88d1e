package api

import (
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"net"
	"strings"

	"github.com/valyala/fasthttp"

	"github.com/splash-inference/splash/api/webui"
)

// hostAllowlist holds the Host names served (lower case, without port).
type hostAllowlist map[string]bool

func newHostAllowlist(extra []string) hostAllowlist {
	h := hostAllowlist{"127.0.0.1": true, "localhost": true, "::1": true}
	for _, name := range extra {
		h[strings.ToLower(hostName(name))] = true
	}
	return h
}

// allows reports whether a Host header value names a served host.
func (h hostAllowlist) allows(host []byte) bool {
	return h[strings.ToLower(hostName(string(host)))]
}

// hostName strips the port and IPv6 brackets from a Host header value.
func hostName(host string) string {
	if name, _, err := net.SplitHostPort(host); err == nil {
		return name
	}
	return strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
}

// apiKey checks request credentials in constant time. Both sides are hashed
// first so that the comparison time does not reveal the key's length.
type apiKey struct {
	enabled bool
	sum     [sha256.Size]byte
}

func newAPIKey(key string) apiKey {
	return apiKey{enabled: key != "", sum: sha256.Sum256([]byte(key))}
}

// allows reports whether the request carries the key as a Bearer token or
// in x-api-key.
func (k apiKey) allows(h *fasthttp.RequestHeader) bool {
	if !k.enabled {
		return true
	}
	ok := 0
	if auth := h.Peek("Authorization"); len(auth) > 0 {
		const bearer = "bearer "
		if len(auth) > len(bearer) && bytes.EqualFold(auth[:len(bearer)], []byte(bearer)) {
			sum := sha256.Sum256(bytes.TrimSpace(auth[len(bearer):]))
			ok |= subtle.ConstantTimeCompare(sum[:], k.sum[:])
		}
	}
	if key := h.Peek("x-api-key"); len(key) > 0 {
		sum := sha256.Sum256(key)
		ok |= subtle.ConstantTimeCompare(sum[:], k.sum[:])
	}
	return ok == 1
}

// isPublic reports whether a path is served without an API key: the
// probes, and the chat page with its assets (the page asks for the key and
// sends it on its own API calls).
func isPublic(path []byte) bool {
	p := string(path)
	return p == "/health" || p == "/ready" || webui.Owns(p)
}

// guard wraps the router with the Host allowlist, the framing and
// cross-site checks and the API-key check.
func (s *Server) guard(next fasthttp.RequestHandler) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		path := ctx.Path()
		d := dialectOf(path)
		if !s.hosts.allows(ctx.Host()) {
			writeError(ctx, d, &apiError{kind: kindPermission, message: "host " + strconvQuote(ctx.Host()) + " is not allowed; add it with --allowed-host"})
			s.metrics.countRequest(ctx)
			return
		}
		if ambiguousFraming(&ctx.Request.Header) {
			writeError(ctx, d, invalidf("", "the request has both Content-Length and Transfer-Encoding; send one"))
			s.metrics.countRequest(ctx)
			return
		}
		if !s.crossSite(ctx, d) {
			s.metrics.countRequest(ctx)
			return
		}
		if !isPublic(path) && !s.key.allows(&ctx.Request.Header) {
			writeError(ctx, d, &apiError{kind: kindAuthentication, message: "invalid or missing API key (send Authorization: Bearer <key> or x-api-key)"})
			s.metrics.countRequest(ctx)
			return
		}
		ctx.SetUserValue(imageLimitsKey, imageLimits{maxPixels: s.opts.MaxImagePixels, model: s.opts.ModelID})
		next(ctx)
		s.metrics.countRequest(ctx)
	}
}

func strconvQuote(b []byte) string {
	const max = 100
	if len(b) > max {
		b = b[:max]
	}
	return `"` + strings.ToValidUTF8(string(b), "?") + `"`
}
