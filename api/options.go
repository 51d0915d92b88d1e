package api

import (
	"errors"
	"log"
	"time"

	"github.com/splash-inference/splash/pdfdoc"
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
	// AllowedOrigins are web origins ("http://localhost:3000") whose pages
	// may call the API: their CORS preflights are answered. Requests with
	// any other Origin than the server's own get 403.
	AllowedOrigins []string
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
	// Vision is the served model's vision tower, nil for a text-only
	// model: then every image is refused with a 400 naming the model.
	Vision *Vision
	// MaxImagePixels caps one input image's width × height: a larger image
	// is resized down to it (keeping its aspect ratio), one whose header
	// declares over four times as many is refused before decoding. A
	// text-only model's refusal says when an image is also over the cap.
	// Default DefaultMaxImagePixels.
	MaxImagePixels int
	// AllowRemoteMedia lets image and file parts name http(s) URLs, which
	// the server then fetches: within MaxMediaBytes and a deadline, from
	// public addresses only. Off, such URLs get a 400.
	AllowRemoteMedia bool
	// MaxMediaBytes caps one attached image's or document's bytes.
	// Default DefaultMaxMediaBytes.
	MaxMediaBytes int
	// MaxPDFPages caps a PDF's pages. Default DefaultMaxPDFPages.
	MaxPDFPages int
	// PDFReader reads attached PDFs. Default: the server's own, started
	// on the first PDF (its compiled code cached in the user cache
	// directory, see pdfdoc.Options.CacheDir) and closed by Shutdown;
	// tests share one.
	PDFReader *pdfdoc.Extractor
	// KeepAlive is how often an idle stream gets a ping (Anthropic "ping"
	// event, SSE comment otherwise), which also detects gone clients
	// during long prefills. Default 10s.
	KeepAlive time.Duration
	// MaxConnections caps the open connections; MaxConnectionsPerIP caps
	// those of one client address. At a cap the longest-idle connection is
	// closed to make room, and without one a new connection gets 503 (429
	// at the per-IP cap). Defaults DefaultMaxConnections, or the open-file
	// limit less fdReserve when that is lower, and
	// DefaultMaxConnectionsPerIP.
	MaxConnections      int
	MaxConnectionsPerIP int
	// ReadTimeout bounds receiving a request: from the connection's opening
	// (or a keep-alive request's first byte) to the end of its body.
	// IdleTimeout bounds a keep-alive connection's wait for its next
	// request. WriteStallTimeout bounds each write of a response, so a
	// client that stops reading is cut while a stream that flows never is.
	// Defaults DefaultReadTimeout, DefaultIdleTimeout and
	// DefaultWriteStallTimeout.
	ReadTimeout       time.Duration
	IdleTimeout       time.Duration
	WriteStallTimeout time.Duration
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
	DefaultMaxMediaBytes   = 32 << 20
	DefaultMaxPDFPages     = 100

	// Every client of a local server shares one address, so the per-IP cap
	// is a quarter of the total: ample for benchmarks far above
	// DefaultMaxRunning+DefaultMaxWaiting streams, and a LAN client alone
	// cannot take every slot.
	DefaultMaxConnections      = 4096
	DefaultMaxConnectionsPerIP = 1024
	// A request's headers and body (8 MiB at most) arrive well within 30s
	// from any client that is not stalling on purpose; keep-alive clients
	// reuse a connection within a minute (the OpenAI and Anthropic SDKs
	// drop theirs sooner); a client whose socket buffers stay full for a
	// minute has stopped reading.
	DefaultReadTimeout       = 30 * time.Second
	DefaultIdleTimeout       = 60 * time.Second
	DefaultWriteStallTimeout = 60 * time.Second
)

// fdReserve is the open files the default connection cap leaves for
// everything else (weights, logs, the listener, the runtime).
const fdReserve = 64

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
	orDefault(&o.MaxBodyBytes, DefaultMaxBodyBytes)
	orDefault(&o.MaxImagePixels, DefaultMaxImagePixels)
	orDefault(&o.MaxMediaBytes, DefaultMaxMediaBytes)
	orDefault(&o.MaxPDFPages, DefaultMaxPDFPages)
	orDefault(&o.MaxRunning, DefaultMaxRunning)
	if o.MaxWaiting < 0 {
		o.MaxWaiting = 0
	} else if o.MaxWaiting == 0 {
		o.MaxWaiting = DefaultMaxWaiting
	}
	orDefault(&o.KeepAlive, DefaultKeepAlive)
	orDefault(&o.MaxConnections, defaultMaxConnections(openFileLimit()))
	orDefault(&o.MaxConnectionsPerIP, min(DefaultMaxConnectionsPerIP, o.MaxConnections))
	orDefault(&o.ReadTimeout, DefaultReadTimeout)
	orDefault(&o.IdleTimeout, DefaultIdleTimeout)
	orDefault(&o.WriteStallTimeout, DefaultWriteStallTimeout)
	orDefault(&o.StoredResponses, DefaultStoredResponses)
	if o.Logger == nil {
		o.Logger = log.Default()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o, nil
}

// orDefault sets an unset (zero or negative) option to its default.
func orDefault[T int | time.Duration](v *T, def T) {
	if *v <= 0 {
		*v = def
	}
}

// defaultMaxConnections is DefaultMaxConnections, lowered to fit an
// open-file limit (0: unknown) with fdReserve to spare. Connections beyond
// the limit could not be accepted anyway; capping below it lets a new
// connection shed an idle one before the accept fails.
func defaultMaxConnections(fileLimit int) int {
	if fileLimit <= 0 {
		return DefaultMaxConnections
	}
	return min(DefaultMaxConnections, max(fileLimit-fdReserve, fileLimit/2, 1))
}
