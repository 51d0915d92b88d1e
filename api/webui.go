package api

import (
	"github.com/fasthttp/router"
	"github.com/valyala/fasthttp"

	"github.com/splash-inference/splash/api/webui"
)

// mountWebUI serves the browser chat page at / and its assets under
// /webui/, unless Options.NoWebUI turns it off (then / is a 404 like any
// unknown path). The page goes through guard like every route, so the
// Host allowlist protects it from DNS rebinding.
func (s *Server) mountWebUI(r *router.Router) {
	if s.opts.NoWebUI {
		return
	}
	getOrHead(r, webui.IndexPath, serveWebUI)
	getOrHead(r, webui.AssetPrefix+"{file}", serveWebUI)
}

// serveWebUI answers with one embedded file.
func serveWebUI(ctx *fasthttp.RequestCtx) {
	f, ok := webui.Lookup(string(ctx.Path()))
	if !ok {
		writeError(ctx, dialectOpenAI, &apiError{kind: kindNotFound, message: "no web UI file at " + string(ctx.Path())})
		return
	}
	h := &ctx.Response.Header
	h.SetContentType(f.ContentType)
	// Small files served from memory: always revalidate, so a new binary's
	// page is never mixed with an old cached script.
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Content-Type-Options", "nosniff")
	// Everything the page needs is on this server; no other origin may
	// supply scripts, and no other site may frame the page (clickjacking).
	h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	ctx.SetBody(f.Body)
}
