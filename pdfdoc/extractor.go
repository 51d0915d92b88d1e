package pdfdoc

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/klippa-app/go-pdfium"
	"github.com/klippa-app/go-pdfium/webassembly"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
)

// Limits bound the work one document may cost.
type Limits struct {
	MaxBytes     int           // larger files are refused before parsing
	MaxPages     int           // documents with more pages are refused
	MaxTextBytes int           // extracted text above this is refused
	Timeout      time.Duration // per document, on top of the caller's context
	// RenderPixels, if positive, has LowText pages rendered to images of at
	// most this many pixels (Page.Image), for a model that reads images.
	RenderPixels int
}

// DefaultLimits are the limits a zero Limits field falls back to.
func DefaultLimits() Limits {
	return Limits{MaxBytes: 32 << 20, MaxPages: 100, MaxTextBytes: 8 << 20, Timeout: 30 * time.Second}
}

func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	if l.MaxBytes > 0 {
		d.MaxBytes = l.MaxBytes
	}
	if l.MaxPages > 0 {
		d.MaxPages = l.MaxPages
	}
	if l.MaxTextBytes > 0 {
		d.MaxTextBytes = l.MaxTextBytes
	}
	if l.Timeout > 0 {
		d.Timeout = l.Timeout
	}
	d.RenderPixels = l.RenderPixels
	return d
}

// Options configure an Extractor.
type Options struct {
	Limits
	// Instances is how many documents are read at once (each in its own
	// WebAssembly instance); further callers wait for one. Default 2.
	Instances int
	// MemoryBytes caps each instance's memory. Default 512 MiB.
	MemoryBytes int
	// CacheBytes bounds the documents kept after reading (text and page
	// images), so a document sent again is not read again. Default 32 MiB;
	// negative: keep none.
	CacheBytes int
	// CacheDir holds PDFium's compiled machine code, so only the first
	// start on a machine pays for compiling the module. Default: splash/wasm
	// under the user cache directory; "off" compiles in memory every start.
	CacheDir string
}

// Extractor reads PDFs with PDFium compiled to WebAssembly and run by
// wazero: no cgo, and the parser runs sandboxed, with no file system and
// bounded memory. It starts on first use and is safe for concurrent use.
type Extractor struct {
	opts Options

	start sync.Once
	pool  pdfium.Pool // set by start
	err   error       // why start failed, if it did

	closing  sync.Once
	closeErr error

	docs *docCache // nil when off
}

// New returns an Extractor; nothing is compiled until the first Extract.
func New(opts Options) *Extractor {
	opts.Limits = opts.Limits.withDefaults()
	if opts.Instances <= 0 {
		opts.Instances = 2
	}
	if opts.MemoryBytes <= 0 {
		opts.MemoryBytes = 512 << 20
	}
	if opts.CacheBytes == 0 {
		opts.CacheBytes = 32 << 20
	}
	e := &Extractor{opts: opts}
	if opts.CacheBytes > 0 {
		e.docs = newDocCache(opts.CacheBytes)
	}
	return e
}

// Limits returns the extractor's limits, defaults filled in.
func (e *Extractor) Limits() Limits { return e.opts.Limits }

// Start compiles and starts PDFium now rather than on the first document;
// a server may call it in the background at start-up.
func (e *Extractor) Start() error {
	e.start.Do(func() { e.pool, e.err = e.open() })
	return e.err
}

// Close releases the instances; the Extractor must not be used after.
func (e *Extractor) Close() error {
	e.start.Do(func() { e.err = errors.New("pdfdoc: extractor closed") })
	e.closing.Do(func() {
		if e.pool != nil {
			e.closeErr = e.pool.Close()
		}
	})
	return e.closeErr
}

func (e *Extractor) open() (pdfium.Pool, error) {
	const wasmPage = 64 << 10
	rc := wazero.NewRuntimeConfig().
		// The PDFium build lowers setjmp/longjmp to exception handling.
		WithCoreFeatures(api.CoreFeaturesV2 | experimental.CoreFeaturesExceptionHandling).
		WithMemoryLimitPages(uint32(e.opts.MemoryBytes / wasmPage)).
		// Lets a deadline stop a document mid-call (see Extract).
		WithCloseOnContextDone(true)
	if cache := e.compilationCache(); cache != nil {
		rc = rc.WithCompilationCache(cache)
	}
	pool, err := webassembly.Init(webassembly.Config{
		MaxIdle:       e.opts.Instances,
		MaxTotal:      e.opts.Instances,
		ReuseWorkers:  true,
		FSConfig:      wazero.NewFSConfig(), // nothing mounted: documents come as bytes
		RuntimeConfig: rc,
		Stdout:        io.Discard,
		Stderr:        io.Discard,
	})
	if err != nil {
		return nil, fmt.Errorf("pdfdoc: starting PDFium: %w", err)
	}
	return pool, nil
}

// compilationCache is the on-disk cache of compiled code, or nil (compile
// in memory) when it is off or its directory cannot be made: a cold start
// is slow, not broken.
func (e *Extractor) compilationCache() wazero.CompilationCache {
	dir := e.opts.CacheDir
	if dir == "off" {
		return nil
	}
	if dir == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			return nil
		}
		dir = filepath.Join(base, "splash", "wasm")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil
	}
	cache, err := wazero.NewCompilationCacheWithDir(dir)
	if err != nil {
		return nil
	}
	return cache
}
