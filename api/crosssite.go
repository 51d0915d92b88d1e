package api

import (
	"bytes"
	"fmt"
	"net/url"
	"strings"

	"github.com/valyala/fasthttp"
)

// Cross-site protection. A web page in the user's browser can send "simple"
// requests to any address without asking first: a POST whose Content-Type
// is text/plain or a form, carrying a JSON body all the same. So every
// POST must say application/json, which a page can only send cross-site
// after a CORS preflight; a request from a page of another origin (its
// Origin header names a site other than this server) is refused unless
// that origin was allowed; and preflights are answered for allowed
// origins only. The Host allowlist stops DNS rebinding, the other half.

// corsAllowHeaders are the request headers an allowed origin may send,
// besides those its preflight asks for: the SDKs' credentials, version and
// body type.
const corsAllowHeaders = "authorization, x-api-key, anthropic-version, anthropic-beta, content-type"

// originPolicy holds the origins allowed besides the server's own, as
// lower-case "scheme://host[:port]".
type originPolicy map[string]bool

// newOriginPolicy checks and normalizes allowed origins.
func newOriginPolicy(origins []string) (originPolicy, error) {
	p := originPolicy{}
	for _, o := range origins {
		norm, err := parseOrigin(o)
		if err != nil {
			return nil, fmt.Errorf("api: %w", err)
		}
		p[norm] = true
	}
	return p, nil
}

// CheckAllowedOrigin reports whether origin can be an allowed origin
// (Options.AllowedOrigins): scheme://host[:port], as browsers send it.
func CheckAllowedOrigin(origin string) error {
	_, err := parseOrigin(origin)
	return err
}

// parseOrigin normalizes an origin to lower-case scheme://host[:port].
func parseOrigin(o string) (string, error) {
	u, err := url.Parse(strings.TrimSuffix(strings.TrimSpace(o), "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Path != "" || u.RawQuery != "" || u.User != nil {
		return "", fmt.Errorf("allowed origin %q: want scheme://host[:port], e.g. http://localhost:3000", o)
	}
	return strings.ToLower(u.Scheme + "://" + u.Host), nil
}

// listed reports whether origin is an allowed one.
func (p originPolicy) listed(origin []byte) bool {
	return p[strings.ToLower(string(origin))]
}

// allows reports whether a request's Origin may call the server: no
// Origin (not a browser, or a same-origin GET), the server's own origin
// (the same host and port as the Host header, as the chat page's calls
// are), or an allowed one.
func (p originPolicy) allows(origin, host []byte) bool {
	if len(origin) == 0 {
		return true
	}
	if p.listed(origin) {
		return true
	}
	_, authority, ok := bytes.Cut(origin, []byte("://"))
	return ok && len(host) > 0 && bytes.EqualFold(authority, host)
}

// crossSite applies the rules above before auth and routing. It answers
// the request itself (and returns false) when it refuses it or when it is
// a preflight.
func (s *Server) crossSite(ctx *fasthttp.RequestCtx, d dialect) bool {
	origin := ctx.Request.Header.Peek("Origin")
	if !s.origins.allows(origin, ctx.Host()) {
		writeError(ctx, d, &apiError{kind: kindPermission, message: "requests from origin " + strconvQuote(origin) +
			" are not allowed; add it with --allowed-origin"})
		return false
	}
	listed := len(origin) > 0 && s.origins.listed(origin)
	if listed {
		h := &ctx.Response.Header
		h.Set("Access-Control-Allow-Origin", string(origin))
		h.Add("Vary", "Origin")
		h.Set("Access-Control-Expose-Headers", "retry-after")
	}
	if ctx.IsOptions() && len(ctx.Request.Header.Peek("Access-Control-Request-Method")) > 0 {
		if listed {
			preflight(ctx)
		} else {
			// a same-origin page never sends a preflight
			writeError(ctx, d, &apiError{kind: kindPermission, message: "cross-origin requests need --allowed-origin"})
		}
		return false
	}
	if ctx.IsPost() && !isJSON(ctx.Request.Header.ContentType()) {
		writeError(ctx, d, &apiError{kind: kindUnsupportedMedia, message: "Content-Type " + strconvQuote(ctx.Request.Header.ContentType()) +
			" is not supported: send the body as JSON with Content-Type: application/json"})
		return false
	}
	return true
}

// preflight answers a CORS preflight of an allowed origin: any method the
// API serves, the SDK headers and those the preflight asks for.
func preflight(ctx *fasthttp.RequestCtx) {
	h := &ctx.Response.Header
	h.Set("Access-Control-Allow-Methods", "GET, HEAD, POST, OPTIONS")
	allow := corsAllowHeaders
	if asked := ctx.Request.Header.Peek("Access-Control-Request-Headers"); len(asked) > 0 && isTokenList(asked) {
		allow += ", " + strings.ToLower(string(asked))
	}
	h.Set("Access-Control-Allow-Headers", allow)
	h.Set("Access-Control-Max-Age", "600")
	ctx.SetStatusCode(fasthttp.StatusNoContent)
}

// isJSON reports whether a Content-Type is application/json, with any
// parameters (charset=utf-8).
func isJSON(contentType []byte) bool {
	mt, _, _ := bytes.Cut(contentType, []byte(";"))
	return bytes.EqualFold(bytes.TrimSpace(mt), []byte("application/json"))
}

// isTokenList reports whether b is a comma-separated list of header names,
// so that echoing it back cannot inject anything.
func isTokenList(b []byte) bool {
	for _, c := range b {
		ok := c == ',' || c == ' ' || c == '-' || c == '_' || c == '.' ||
			(c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
		if !ok {
			return false
		}
	}
	return true
}
