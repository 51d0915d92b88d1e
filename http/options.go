package api

import (
	"errors"
	"log"
	"time"
)

// Options configure a Server. Engine, Tokenizer, Template, ModelID and
// ContextLength are required; the rest have defaults.
type Options struct {
	Engine    Engine
	Tokenizer Tokenizer
	Template  ChatTemplate

	// ModelID is the served package's name, as listed by /v1/models;
	// Aliases are other names a request's "model" may use.
	ModelID string
	Aliases []string
	// ContextLength bounds prompt tokens + max tokens of every request.
	ContextLength int

	// APIKey, when set, is required on every route but /health and /ready,
	// as "Authorization: Bearer <key>" or "x-api-key: <key>".
	APIKey string
	// AllowedHosts are Host header names served besides the loopback ones
	// (127.0.0.1, localhost, [::1]); a port in the header is ignored.
	// Everything else gets 403, which defeats DNS rebinding.
	AllowedHosts []string
	// NoWebUI turns off the browser chat page at / (then a 404).
	NoWebUI bool

	// MaxBodyBytes caps a request body (413 beyond it). Default 8 MiB.
	MaxBodyBytes int
	// MaxRunning and MaxWaiting bound the sequences in the server (a
	// request with n choices is n): beyond MaxRunning+MaxWaiting in flight,
	// new requests get 429 with Retry-After. Defaults 64 and 256; a negative MaxWaiting means none.
	MaxRunning int
	MaxWaiting int
	// NoToolCalls is set when the model's tool-call format has no parser
	// (its chat template ignores tools, or renders them in a format Splash
	// does not parse): a request that offers tools, unless tool_choice is
	// "none", is then a 400 rather than a silent answer without calls.
	NoToolCalls bool
	// MaxImagePixels caps one input image's width × height. The served
	// models are text-only, so images are refused either way; the cap makes
	// the refusal say when an image is also too large. Default
	// DefaultMaxImagePixels.
	MaxImagePixels int
	// KeepAlive is how often an idle stream gets a ping (Anthropic "ping"
	// event, SSE comment otherwise), which also detects gone clients
	// during long prefills. Default 10s.
	KeepAlive time.Duration
	// StoredResponses bounds the Responses API store (oldest evicted first).
	// Default 1024.
	StoredResponses int
	// Now returns the current time; tests may fix it. Default time.Now.
	Now func() time.Time
	// Logger receives connection-level errors (bodies over the cap,
	// malformed HTTP). Default: the standard log package.
	Logger Logger
}

// Logger is the printf-style logger fasthttp reports to.
type Logger interface {
	Printf(format string, args ...any)
}

// DefaultAddr is where `splash serve` listens unless told otherwise:
// loopback only.
const DefaultAddr = "127.0.0.1:8000"

// Defaults of the optional Options fields.
const (
	DefaultMaxBodyBytes    = 8 << 20
	DefaultMaxRunning      = 64
	DefaultMaxWaiting      = 256
	DefaultKeepAlive       = 10 * time.Second
	DefaultStoredResponses = 1024
)

// withDefaults checks the required fields and fills in the optional ones.
func (o Options) withDefaults() (Options, error) {
	switch {
	case o.Engine == nil:
		return o, errors.New("api: Options.Engine is required")
	case o.Tokenizer == nil:
		return o, errors.New("api: Options.Tokenizer is required")
	case o.Template == nil:
		return o, errors.New("api: Options.Template is required")
	case o.ModelID == "":
		return o, errors.New("api: Options.ModelID is required")
	case o.ContextLength <= 0:
		return o, errors.New("api: Options.ContextLength must be positive")
	}
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if o.MaxImagePixels <= 0 {
		o.MaxImagePixels = DefaultMaxImagePixels
	}
	if o.MaxRunning <= 0 {
		o.MaxRunning = DefaultMaxRunning
	}
	if o.MaxWaiting < 0 {
		o.MaxWaiting = 0
	} else if o.MaxWaiting == 0 {
		o.MaxWaiting = DefaultMaxWaiting
	}
	if o.KeepAlive <= 0 {
		o.KeepAlive = DefaultKeepAlive
	}
	if o.StoredResponses <= 0 {
		o.StoredResponses = DefaultStoredResponses
	}
	if o.Logger == nil {
		o.Logger = log.Default()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o, nil
}
