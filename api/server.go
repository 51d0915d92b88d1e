package api

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fasthttp/router"
	"github.com/valyala/fasthttp"
)

// Server is the HTTP frontend: it parses each API dialect into an
// actors.Request and streams the engine's events back.
type Server struct {
	opts    Options
	hosts   hostAllowlist
	origins originPolicy
	conns   *connTable
	key     apiKey
	models  map[string]bool // ModelID and aliases a request may name
	http    *fasthttp.Server
	metrics *serverMetrics
	store   *responseStore
	created int64 // start time, reported as the model's "created"

	grammars *grammars    // compiles request schemas, cached
	media    *mediaReader // reads attached documents and images
	// imageMarker starts the text that stands for an image in a rendered
	// prompt until it is tokenized (requestMedia).
	imageMarker string

	ready    atomic.Bool  // set by SetReady once the model is loaded and warm
	inFlight atomic.Int64 // sequences (a request's n choices) admitted and not yet finished

	// listeners are those Serve was given, closed by Shutdown even when it
	// runs before fasthttp has registered them; guarded by mu, as is
	// shutDown (later Serve calls return at once).
	mu        sync.Mutex
	listeners []*limitedListener
	shutDown  bool

	// base is the parent of every generation's context; cancelBase aborts
	// them all when Shutdown runs out of time.
	base       context.Context
	cancelBase context.CancelFunc
}

// New builds a Server. It serves nothing until Serve.
func New(opts Options) (*Server, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	origins, err := newOriginPolicy(opts.AllowedOrigins)
	if err != nil {
		return nil, err
	}
	s := &Server{
		origins: origins,
		opts:    opts,
		hosts:   newHostAllowlist(opts.AllowedHosts),
		conns:   newConnTable(opts.MaxConnections, opts.MaxConnectionsPerIP, opts.WriteStallTimeout, opts.Logger.Printf),
		key:     newAPIKey(opts.APIKey),
		models:  map[string]bool{opts.ModelID: true},
		metrics: newServerMetrics(),
		store:   newResponseStore(opts.StoredResponses),
		created: opts.Now().Unix(),
	}
	for _, a := range opts.Aliases {
		s.models[a] = true
	}
	s.base, s.cancelBase = context.WithCancel(context.Background())
	s.grammars = newGrammars(s.base)
	s.media = newMediaReader(s.base, opts)
	s.imageMarker = newImageMarker()
	s.http = &fasthttp.Server{
		Handler:               s.guard(s.routes().Handler),
		ErrorHandler:          s.transportError,
		MaxRequestBodySize:    opts.MaxBodyBytes,
		NoDefaultServerHeader: true,
		Name:                  "splash",
		CloseOnShutdown:       true,
		Logger:                opts.Logger,
		// ReadTimeout also bounds a new connection's wait for its first
		// byte. There is no WriteTimeout: fasthttp applies it to a whole
		// response, streams included; connTable bounds each write instead.
		ReadTimeout: opts.ReadTimeout,
		// Bodies are JSON only (a form gets 415), so fasthttp must not
		// parse multipart forms before the handler refuses them.
		DisablePreParseMultipartForm: true,
		IdleTimeout:                  opts.IdleTimeout,
		ConnState:                    s.conns.state,
	}
	return s, nil
}

// routes registers every endpoint.
func (s *Server) routes() *router.Router {
	r := router.New()
	getOrHead(r, "/health", s.handleHealth)
	getOrHead(r, "/ready", s.handleReady)
	getOrHead(r, "/metrics", s.handleMetrics)
	getOrHead(r, "/v1/models", s.handleModels)
	r.POST("/v1/chat/completions", s.handleChat)
	r.POST("/v1/completions", s.handleCompletions)
	r.POST("/v1/responses", s.handleResponses)
	getOrHead(r, "/v1/responses/{id}", s.handleGetResponse)
	r.POST("/v1/messages", s.handleMessages)
	r.POST("/v1/messages/count_tokens", s.handleCountTokens)
	r.POST("/tokenize", s.handleTokenize)
	r.POST("/detokenize", s.handleDetokenize)
	r.POST("/apply-template", s.handleApplyTemplate)
	s.mountWebUI(r)
	r.NotFound = func(ctx *fasthttp.RequestCtx) {
		writeError(ctx, dialectOf(ctx.Path()), &apiError{kind: kindNotFound, message: fmt.Sprintf("no route for %s %s", ctx.Method(), ctx.Path())})
	}
	r.MethodNotAllowed = func(ctx *fasthttp.RequestCtx) {
		writeError(ctx, dialectOf(ctx.Path()), &apiError{kind: kindInvalidRequest, message: fmt.Sprintf("method %s not allowed on %s", ctx.Method(), ctx.Path())})
		ctx.SetStatusCode(fasthttp.StatusMethodNotAllowed)
	}
	r.PanicHandler = func(ctx *fasthttp.RequestCtx, v any) {
		writeError(ctx, dialectOf(ctx.Path()), &apiError{kind: kindServer, message: fmt.Sprintf("internal error: %v", v)})
	}
	return r
}

// getOrHead routes GET and HEAD of path to h (fasthttp drops the body of
// a HEAD answer). Clients probe a base URL with HEAD before using it —
// Claude Code sends HEAD / — and a 405 there reads as a broken server.
func getOrHead(r *router.Router, path string, h fasthttp.RequestHandler) {
	r.GET(path, h)
	r.HEAD(path, h)
}

// transportError answers requests fasthttp could not read, in the dialect
// of their path (the headers are parsed by then).
func (s *Server) transportError(ctx *fasthttp.RequestCtx, err error) {
	d := dialectOf(ctx.Path())
	if errors.Is(err, fasthttp.ErrBodyTooLarge) {
		writeError(ctx, d, &apiError{kind: kindTooLarge, message: fmt.Sprintf("request body exceeds the limit of %d bytes", s.opts.MaxBodyBytes)})
		return
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		writeError(ctx, d, &apiError{kind: kindRequestTimeout, message: fmt.Sprintf("the request did not arrive within %s", s.opts.ReadTimeout)})
		return
	}
	writeError(ctx, d, invalidf("", "malformed HTTP request: %v", err))
}

// SetReady marks the model loaded and warmed up (/ready answers 200).
func (s *Server) SetReady(ready bool) { s.ready.Store(ready) }

// Serve serves HTTP on ln until Shutdown; it returns nil after a Shutdown.
// Running out of file descriptors does not end it (see limitedListener).
func (s *Server) Serve(ln net.Listener) error {
	l := newLimitedListener(ln, s.conns)
	s.mu.Lock()
	if s.shutDown {
		s.mu.Unlock()
		return l.Close()
	}
	s.listeners = append(s.listeners, l)
	s.mu.Unlock()
	if err := s.http.Serve(l); err != nil {
		return fmt.Errorf("api: serve: %w", err)
	}
	return nil
}

// shutdownDrain is how long Shutdown waits, once the grace has run out
// and the generations are cancelled, for their streams to be ended.
const shutdownDrain = 2 * time.Second

// Shutdown stops accepting connections and waits for open requests to end.
// When ctx expires first, the generations still running are cancelled:
// each stream ends with an error event, Shutdown gives them shutdownDrain
// to be written and then closes every connection left. That is still a
// complete shutdown, so the error is nil; only a listener that failed to
// close is an error.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.shutDown = true
	for _, l := range s.listeners {
		if err := l.Close(); err != nil {
			s.mu.Unlock()
			return fmt.Errorf("api: shutdown: %w", err)
		}
	}
	s.mu.Unlock()
	err := s.http.ShutdownWithContext(ctx)
	s.cancelBase()
	if cerr := s.media.close(); cerr != nil && err == nil {
		err = cerr
	}
	if err == nil {
		return nil
	}
	if ctx.Err() == nil || !errors.Is(err, ctx.Err()) {
		return fmt.Errorf("api: shutdown: %w", err)
	}
	deadline := time.Now().Add(shutdownDrain)
	for s.conns.busy() > 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if cut := s.conns.closeEvery(); cut > 0 {
		s.opts.Logger.Printf("api: shutdown: closed %d connections still busy %s after their generations were cancelled", cut, shutdownDrain)
	}
	return nil
}
