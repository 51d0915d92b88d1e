package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/peterbourgon/ff/v4"

	"github.com/splash-inference/splash/actors"
	"github.com/splash-inference/splash/api"
	"github.com/splash-inference/splash/api/actorengine"
	"github.com/splash-inference/splash/api/textmodel"
	"github.com/splash-inference/splash/engine"
	"github.com/splash-inference/splash/metal"
	"github.com/splash-inference/splash/model"
)

// serveFlags are the settings of `splash serve`.
type serveFlags struct {
	model          string
	host           string
	port           int
	apiKey         string
	allowedHosts   []string
	allowedOrigins []string
	maxConns       int
	maxConnsPerIP  int
	noWebUI        bool
	maxContext     string
	kvMemory       string
	maxMemory      string
	kvBlockSize    int
	kvCacheType    string
	maxBatchTokens int
	maxPrefillDec  int
	prefillCost    bool
	maxRunning     int
	stateSnapshots int
	maxWaiting     int
	maxBody        string
	maxImagePixels int
	remoteMedia    bool
	maxMediaBytes  string
	maxPDFPages    int
	quant          string
	toolParser     string
	cacheDir       string
	maxCacheDisk   string // prefix cache disk tier budget (diskcache.go); "" or "0": off
	spec           string
	specTokens     int
	specFixed      bool
	backend        string
	threads        int
	portable       bool
	grace          time.Duration
}

func newServeCmd(s *stdio) *ff.Command {
	var f serveFlags
	return &ff.Command{
		Name:      "serve",
		Usage:     "splash serve [--model DIR] [FLAGS]",
		ShortHelp: "serve a model over OpenAI- and Anthropic-compatible HTTP APIs",
		LongHelp:  "Every flag can also be set as SPLASH_<FLAG> in the environment, e.g. SPLASH_API_KEY or SPLASH_MAX_CONTEXT.",
		Flags:     serveFlagSet(&f),
		Exec: func(ctx context.Context, args []string) error {
			if len(args) > 0 {
				return fmt.Errorf("serve: unexpected arguments %q", args)
			}
			ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
			defer stop()
			return runServe(ctx, s, &f, nil)
		},
	}
}

// serveFlagSet binds serve's flags to f.
func serveFlagSet(f *serveFlags) *ff.FlagSet {
	fs := ff.NewFlagSet("serve")
	fs.StringVar(&f.model, 0, "model", "", "Splash package or Hugging Face checkpoint directory, or owner/repo[@revision] from the HF cache or hub (HF_HOME, HF_HUB_CACHE, HF_ENDPOINT, HF_TOKEN); default: the embedded splash-demo model")
	fs.StringVar(&f.quant, 0, "quant", "q8", "weight type a checkpoint is packed to before serving: q4 (fastest, smallest), q8 (near-lossless), bf16, f32, or none to serve its safetensors in place")
	fs.StringVar(&f.toolParser, 0, "tool-parser", "auto", "tool-call format: auto (read from the model's chat template), hermes (Qwen/Hermes <tool_call>), or none (requests offering tools get a 400)")
	fs.StringVar(&f.cacheDir, 0, "cache-dir", defaultCacheDir(), "where checkpoints packed for serving are kept")
	fs.StringVar(&f.maxCacheDisk, 0, "max-cache-disk", "0", "budget of the prefix cache's disk tier under --cache-dir/kv, e.g. 8G: KV blocks evicted from RAM are kept there and survive restarts (0: off)")
	fs.StringVar(&f.host, 0, "host", "127.0.0.1", "address to listen on")
	fs.IntVar(&f.port, 0, "port", 8000, "port to listen on (0 picks a free one)")
	fs.StringVar(&f.apiKey, 0, "api-key", "", "require this key as Authorization: Bearer or x-api-key")
	fs.StringListVar(&f.allowedHosts, 0, "allowed-host", "Host header to serve besides loopback names (repeatable)")
	fs.StringListVar(&f.allowedOrigins, 0, "allowed-origin", "web origin (scheme://host[:port]) whose pages may call the API; requests from other pages' origins get 403 (repeatable)")
	fs.IntVar(&f.maxConns, 0, "max-connections", 0, "open connections at most; at the cap a new one replaces the longest-idle one, or gets 503 (0: 4096, lowered to fit the open-file limit)")
	fs.IntVar(&f.maxConnsPerIP, 0, "max-connections-per-ip", 0, "open connections from one client address at most (429 beyond; 0: 1024)")
	fs.BoolVar(&f.noWebUI, 0, "no-webui", "do not serve the browser chat page at /")
	fs.StringVar(&f.maxContext, 0, "max-context", "", "context length per request, e.g. 32768 or 32K (default: the model's)")
	fs.StringVar(&f.maxMemory, 0, "max-memory", "", "memory budget for weights, KV cache and scratch, e.g. 28G (default: 60% of physical memory)")
	fs.StringVar(&f.kvMemory, 0, "kv-memory", "", "cap on the KV cache within the budget, e.g. 512M (default: all that is left)")
	// 32 rather than vLLM's 16: attention reads one KV head of a block at a
	// time, so larger blocks halve the hand-offs between stretches and give
	// the prefetchers stretches twice as long (BenchmarkAttention's bs=16
	// cases). The price is prefix-cache hits in steps of 32 tokens.
	fs.IntVar(&f.kvBlockSize, 0, "kv-block-size", 32, "tokens per KV cache block")
	fs.StringVar(&f.kvCacheType, 0, "kv-cache-type", metal.KVAuto, "how the KV cache stores keys and values: auto (bf16 where the CPU's bf16 attention is faster than f16's, as with AVX512_BF16, and the model's head size allows it; else f16); f16; bf16 (float32's range, queries and attention weights rounded to bfloat16 too, as vLLM and FlashAttention compute bf16 models: faster prompts and speculative verification on CPUs with AVX512_BF16, emulated bit for bit on other AVX2 and NEON CPUs at about f16's speed; head sizes that are multiples of 32, block sizes of 8); q8 (int8 with a scale per 32, as llama.cpp's q8_0: about twice the tokens in the same memory and faster decoding at long contexts, somewhat slower prompts; head sizes that are multiples of 32); or f32 (nothing rounded, the reference: twice f16's memory, never auto's choice)")
	fs.IntVar(&f.maxBatchTokens, 0, "max-batch-tokens", 512, "tokens evaluated per step (prefill chunks and decode rows)")
	fs.IntVar(&f.maxPrefillDec, 0, "max-prefill-with-decode", 128, "prompt tokens a step takes while other requests are decoding, so that their streams do not stall behind long prompts (0: up to --max-batch-tokens)")
	fs.BoolVar(&f.prefillCost, 0, "prefill-by-attention", "count prompt tokens deep in a long prompt at their attention's cost against --max-prefill-with-decode: smaller chunks there, steadier streams beside long prompts, less throughput")
	fs.IntVar(&f.maxRunning, 0, "max-running", 64, "sequences running at once")
	fs.IntVar(&f.stateSnapshots, 0, "state-snapshots", 16, "hybrid models: snapshots of a sequence's linear-layer state kept for prefix hits, one per 512 prompt tokens cached (each a running sequence's state memory; 0: no prefix hits)")
	fs.IntVar(&f.maxWaiting, 0, "max-waiting", 256, "sequences (a request with n choices is n) queued beyond --max-running before new requests get 429")
	fs.StringVar(&f.maxBody, 0, "max-body", "8M", "largest request body (413 beyond it)")
	fs.IntVar(&f.maxImagePixels, 0, "max-image-pixels", api.DefaultMaxImagePixels, "largest input image, width × height in pixels: a larger one is resized down to it, one declaring over four times as many is refused before decoding (a text-only model refuses every image)")
	fs.BoolVar(&f.remoteMedia, 0, "allow-remote-media", "fetch http(s) URLs in image and file parts (public addresses only, within --max-media-bytes and 15 s); off, they get a 400")
	fs.StringVar(&f.maxMediaBytes, 0, "max-media-bytes", "32M", "largest attached image or document, inline or fetched (400 beyond it; inline data also counts against --max-body)")
	fs.IntVar(&f.maxPDFPages, 0, "max-pdf-pages", api.DefaultMaxPDFPages, "most pages of an attached PDF (400 beyond it)")
	fs.StringVar(&f.spec, 0, "spec", "auto", "speculative decoding: auto (the package's DFlash draft; else its draft model and n-gram lookup, whichever predicts better), draft, dflash (the package's DFlash or DFlash2 block-diffusion draft), ngram or off")
	fs.IntVar(&f.specTokens, 0, "spec-tokens", 0, "most draft tokens verified per step (0: a DFlash draft's whole block after its anchor, else 4)")
	fs.BoolVar(&f.specFixed, 0, "spec-fixed", "verify --spec-tokens drafts at every step, as vLLM does, instead of adapting their number to how often they are accepted and what verifying them costs")
	fs.StringVar(&f.backend, 0, "backend", "auto", "compute backend: auto (the best that runs here) or "+strings.Join(drivers().Names(), ", "))
	fs.IntVar(&f.threads, 0, "threads", 0, "compute threads (0: every core)")
	fs.BoolVar(&f.portable, 0, "portable-kernels", "use the portable Go kernels even where assembly ones exist")
	fs.DurationVar(&f.grace, 0, "shutdown-grace", 10*time.Second, "how long in-flight streams may finish on SIGINT/SIGTERM")
	return fs
}

// validate checks every flag's value before anything loads, naming the
// flag; the model-dependent checks (context above the model's limit, the
// memory plan) come after loading.
func (f *serveFlags) validate() error {
	switch f.spec {
	case "auto", "ngram", "draft", "dflash", "off":
	default:
		return fmt.Errorf("serve: --spec %q: want auto, draft, dflash, ngram or off", f.spec)
	}
	if f.port < 0 || f.port > 65535 {
		return fmt.Errorf("serve: --port %d out of range", f.port)
	}
	switch f.toolParser {
	case "auto", toolParserHermes, toolParserNone:
	default:
		return fmt.Errorf("serve: --tool-parser %q: want auto, hermes or none", f.toolParser)
	}
	switch f.quant {
	case "q4", "q8", "bf16", "f32", "none":
	default:
		return fmt.Errorf("serve: --quant %q: want q4, q8, bf16, f32 or none", f.quant)
	}
	if _, err := metal.ParseKVType(f.kvCacheType); err != nil && f.kvCacheType != metal.KVAuto {
		return fmt.Errorf("serve: --kv-cache-type %q: want auto, f32, f16, bf16 or q8", f.kvCacheType)
	}
	positive := []struct {
		flag string
		v    int
	}{{"kv-block-size", f.kvBlockSize}, {"max-running", f.maxRunning}, {"max-batch-tokens", f.maxBatchTokens},
		{"max-image-pixels", f.maxImagePixels}, {"max-pdf-pages", f.maxPDFPages}}
	for _, p := range positive {
		if p.v <= 0 {
			return fmt.Errorf("serve: --%s %d: must be positive", p.flag, p.v)
		}
	}
	if f.maxConns < 0 || f.maxConnsPerIP < 0 {
		return fmt.Errorf("serve: --max-connections and --max-connections-per-ip must not be negative")
	}
	for _, o := range f.allowedOrigins {
		if err := api.CheckAllowedOrigin(o); err != nil {
			return fmt.Errorf("serve: --allowed-origin: %w", err)
		}
	}
	if f.specTokens < 0 || f.threads < 0 || f.stateSnapshots < 0 {
		return fmt.Errorf("serve: --spec-tokens, --threads and --state-snapshots must not be negative")
	}
	if f.maxPrefillDec < 0 {
		return fmt.Errorf("serve: --max-prefill-with-decode %d: must not be negative", f.maxPrefillDec)
	}
	if f.prefillCost && f.maxPrefillDec == 0 {
		return fmt.Errorf("serve: --prefill-by-attention counts prompt tokens against --max-prefill-with-decode, which is 0 (no cap)")
	}
	if _, err := f.diskCacheBytes(); err != nil {
		return err
	}
	sizes := []struct {
		flag, v string
		binary  bool
	}{{"max-body", f.maxBody, true}, {"max-context", f.maxContext, false}, {"max-memory", f.maxMemory, true},
		{"kv-memory", f.kvMemory, true}, {"max-media-bytes", f.maxMediaBytes, true}}
	for _, sz := range sizes {
		if sz.v == "" && sz.flag != "max-body" && sz.flag != "max-media-bytes" {
			continue
		}
		if _, err := parseSize(sz.v, sz.binary); err != nil {
			return fmt.Errorf("serve: --%s: %w", sz.flag, err)
		}
	}
	if n, _ := parseSize(f.maxMediaBytes, true); n <= 0 {
		return fmt.Errorf("serve: --max-media-bytes %s: must be positive", f.maxMediaBytes)
	}
	return nil
}

// parseSize reads sizes such as 512M, 4G, 100K or a plain number. Units are
// powers of 1024 for memory (binary) and of 1000 for token counts.
func parseSize(s string, binary bool) (int64, error) {
	s = strings.TrimSpace(strings.ToUpper(s))
	mult := int64(1)
	base := int64(1000)
	if binary {
		base = 1024
	}
	s = strings.TrimSuffix(strings.TrimSuffix(s, "B"), "I")
	if n := len(s); n > 0 {
		switch s[n-1] {
		case 'K':
			mult, s = base, s[:n-1]
		case 'M':
			mult, s = base*base, s[:n-1]
		case 'G':
			mult, s = base*base*base, s[:n-1]
		case 'T':
			mult, s = base*base*base*base, s[:n-1]
		}
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || v <= 0 {
		return 0, fmt.Errorf("%q is not a positive size", s)
	}
	return int64(v * float64(mult)), nil
}

// plan is the memory plan printed at start-up (model.PlanMemory), with
// why --kv-cache-type auto chose its type and the fields runServe reads.
type plan struct {
	model.Plan
	kvWhy                      string // why --kv-cache-type auto chose kvType ("": not auto)
	kvType                     metal.KVType
	blocks, blockSize, context int
}

// attnScratch bounds a backend's attention scratch for contexts of up to
// context positions (metal.Device.AttentionScratchBytes).
type attnScratch func(context int) int64

// planDraft is the draft a plan counts: a draft model or a DFlash draft
// (whose cache is its context's keys and values).
type planDraft interface {
	CacheSpec() model.CacheSpec
}

// makePlan is the memory plan of serving m, built as target (and draft,
// when one is built: nil or a model.Model or *model.DFlashDraft), with flags f, given the bytes of the backend's
// packed weight copies, its attention scratch, and the cache type it runs
// best (for --kv-cache-type auto: metal.Device.AutoKVType). It reads the
// flags; model.PlanMemory plans from the models' cache declarations.
func makePlan(f *serveFlags, m *loadedModel, target model.Model, draft planDraft, packed int64, scratch attnScratch, auto func(blockSize int, headDims ...int) (metal.KVType, string)) (plan, error) {
	in := model.PlanInput{Cache: target.CacheSpec(), Weights: model.WeightBytes(m.tensors), ScratchPerToken: model.ScratchPerToken(m.cfg),
		Packed: packed, BlockSize: f.kvBlockSize, Context: m.cfg.MaxPositionEmbeddings, MaxBatchTokens: f.maxBatchTokens, MaxRunning: f.maxRunning,
		Snapshots: f.stateSnapshots, Spares: f.spec != "off"} // every other --spec drafts
	var p plan
	if in.Context <= 0 {
		in.Context = 4096
	}
	if f.maxContext != "" {
		c, err := parseSize(f.maxContext, false)
		if err != nil {
			return p, fmt.Errorf("serve: --max-context: %w", err)
		}
		if m.cfg.MaxPositionEmbeddings > 0 && int(c) > m.cfg.MaxPositionEmbeddings {
			return p, fmt.Errorf("serve: --max-context %d exceeds the model's native context of %d", c, m.cfg.MaxPositionEmbeddings)
		}
		in.Context = int(c)
	}
	if draft != nil && m.draft != nil && f.spec != "ngram" && f.spec != "off" {
		in.DraftCache, in.DraftWeights = draft.CacheSpec(), model.WeightBytes(m.draft)
		if d, ok := draft.(*model.DFlashDraft); ok {
			in.DraftScratch, in.DFlash = d.ScratchBytes(f.maxRunning), true
		}
	}
	var err error
	if f.kvCacheType == metal.KVAuto {
		dims := []int{m.cfg.HeadDim}
		if in.DraftWeights > 0 {
			dims = append(dims, m.draftCfg.HeadDim)
		}
		in.KVType, p.kvWhy = auto(f.kvBlockSize, dims...)
	} else if in.KVType, err = metal.ParseKVType(f.kvCacheType); err != nil {
		return p, fmt.Errorf("serve: --kv-cache-type: %w", err)
	}
	in.AttentionScratch = scratch(in.Context)
	if f.maxMemory != "" {
		if in.Budget, err = parseSize(f.maxMemory, true); err != nil {
			return p, fmt.Errorf("serve: --max-memory: %w", err)
		}
	} else {
		phys, err := physicalMemory()
		if err != nil {
			return p, fmt.Errorf("serve: cannot read the machine's memory (%v): set --max-memory", err)
		}
		in.Budget = int64(float64(phys) * defaultMemoryShare)
	}
	if f.kvMemory != "" {
		if in.KVCap, err = parseSize(f.kvMemory, true); err != nil {
			return p, fmt.Errorf("serve: --kv-memory: %w", err)
		}
	}
	p.Plan, err = model.PlanMemory(in)
	p.kvType, p.blocks, p.blockSize, p.context = p.KVType, p.Blocks, p.BlockSize, p.Context
	if errors.Is(err, model.ErrPlanTooSmall) {
		return p, fmt.Errorf("serve: %w: raise --max-memory (or --kv-memory), or lower --max-context or --max-batch-tokens\n%s", err, p.table(f))
	} else if err != nil {
		return p, fmt.Errorf("serve: %w", err)
	}
	return p, nil
}

func (p plan) table(f *serveFlags) string {
	var sb strings.Builder
	w := tabwriter.NewWriter(&sb, 0, 0, 2, ' ', 0)
	mb := func(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }
	if p.DraftWeights > 0 {
		fmt.Fprintf(w, "weights\t%s (the draft's %s of it)\n", mb(p.Weights), mb(p.DraftWeights))
	} else {
		fmt.Fprintf(w, "weights\t%s\n", mb(p.Weights))
	}
	if p.Packed > 0 {
		fmt.Fprintf(w, "packed copies\t%s (q4 matrices in the kernels' layout)\n", mb(p.Packed))
	}
	if p.DraftKV > 0 {
		fmt.Fprintf(w, "KV per token\t%d B (%s; the draft's %d B of it)\n", p.KVPerToken, p.KVType, p.DraftKV)
	} else {
		fmt.Fprintf(w, "KV per token\t%d B (%s)\n", p.KVPerToken, p.KVType)
	}
	if p.kvWhy != "" {
		fmt.Fprintf(w, "KV cache type\t%s (%s)\n", p.KVType, p.kvWhy)
	}
	if p.StatePerSeq > 0 {
		fmt.Fprintf(w, "state per sequence\t%d B (the state layers' fixed state, whatever the length)\n", p.StatePerSeq)
		if p.SpareSlots > 0 {
			fmt.Fprintf(w, "states\t%d running sequences × 2 × %s = %s (a spare each, where verify passes save the state before their drafts; --max-running %d)\n",
				p.StateSlots, mb(p.StatePerSeq), mb(p.StateBytes()), f.maxRunning)
		} else {
			fmt.Fprintf(w, "states\t%d running sequences × %s = %s (--max-running %d)\n", p.StateSlots, mb(p.StatePerSeq), mb(p.StateBytes()), f.maxRunning)
		}
		fmt.Fprintf(w, "state snapshots\t%d × %s = %s (--state-snapshots %d; prefix hits resume from them)\n", p.Snapshots, mb(p.StatePerSeq), mb(p.SnapshotBytes()), f.stateSnapshots)
	}
	fmt.Fprintf(w, "context\t%d tokens\n", p.Context)
	fmt.Fprintf(w, "KV cache\t%d blocks × %d tokens = %s\n", p.Blocks, p.BlockSize, mb(p.KVBytes()))
	fmt.Fprintf(w, "scratch\t%s per token in a step (max %d per step)\n", mb(p.ScratchPerToken), p.MaxBatchTokens)
	fmt.Fprintf(w, "attention scratch\t%s (scores of one run of tokens per thread, at the longest context)\n", mb(p.AttentionScratch))
	if p.DraftScratch > 0 {
		fmt.Fprintf(w, "draft scratch\t%s (the DFlash draft's block pass for %d sequences)\n", mb(p.DraftScratch), f.maxRunning)
	}
	fmt.Fprintf(w, "total\t%s of a %s budget\n", mb(p.Total()), mb(p.Budget))
	w.Flush()
	return sb.String()
}

// productType is the type of the model's matrix weights (of its first
// layer's down projection), or F32 when it has none by that name.
func productType(ts model.Tensors) metal.DType {
	if t, err := ts.Tensor("model.layers.0.mlp.down_proj.weight"); err == nil {
		return t.DType
	}
	return metal.F32
}

// runServe loads the model, starts the engine and the HTTP server, prints
// the Ready line and serves until ctx ends. ready, when not nil, receives
// the listening address (tests).
func runServe(ctx context.Context, s *stdio, f *serveFlags, ready chan<- string) error {
	if err := f.validate(); err != nil {
		return err
	}
	dev, err := chooseDevice(f.backend, f.threads, f.portable)
	if err != nil {
		return err
	}
	m, err := loadServed(ctx, s, f)
	if err != nil {
		return err
	}
	defer m.close()
	ms, err := buildServed(dev, m, f)
	if err != nil {
		return err
	}
	defer ms.close()
	p, err := planServe(s, f, m, ms)
	if err != nil {
		return err
	}
	defer limitGoMemory(p.Total())()
	disk := openDiskCache(s, f, m.identity, p, ms.target.CacheSpec().HasState())
	if disk != nil {
		defer disk.Close() // after the engine, which saves its cached blocks when it stops
	}
	eng, err := actors.New(actors.Config{Model: ms.target, Vision: ms.vision, Draft: ms.draft, DFlash: ms.dflash, Spec: f.spec, NewDecoder: func() actors.TextDecoder { return m.tok.NewStreamDecoder(true) },
		KVType:    p.kvType,
		Disk:      disk,
		Scheduler: schedulerConfig(s, f, m, ms.be, p),
		Logger:    slog.New(slog.NewTextHandler(s.err, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	if err != nil {
		return err
	}
	defer eng.Close()
	srv, err := newAPIServer(s, f, m, eng, p)
	if err != nil {
		return err
	}
	return serveUntilDone(ctx, s, f, srv, eng, fmt.Sprintf("model %s, %s kernels", m.name, ms.be.Name()), ready)
}

// loadServed loads --model (a package, a checkpoint or a hub name, packed
// into the cache unless --quant none), or the embedded demo without one.
func loadServed(ctx context.Context, s *stdio, f *serveFlags) (*loadedModel, error) {
	if f.model == "" {
		return loadDemo(s.err, f.spec)
	}
	var cache *packCache
	if f.quant != "none" {
		q, _ := metal.ParseDType(f.quant)
		cache = &packCache{dir: f.cacheDir, quant: q}
	}
	return loadModelSpec(ctx, s, f.model, cache)
}

// serveModels are the built target and, unless --spec rules it out, its
// draft model or DFlash draft on a device of its own (a Backend is owned
// by one model runner).
type serveModels struct {
	be, dbe metal.Device // dbe: nil without a draft
	target  model.Model
	draft   model.Model
	dflash  *model.DFlashDraft
	vision  *model.VisionTower // the target's, on its device; nil for a text-only model
	packed  int64              // the devices' packed weight copies (metal.WeightPreparer), counted with the weights
}

func (ms *serveModels) close() {
	if ms.dbe != nil {
		ms.dbe.Close()
	}
	ms.be.Close()
}

func buildServed(dev device, m *loadedModel, f *serveFlags) (*serveModels, error) {
	be, err := dev.New()
	if err != nil {
		return nil, err
	}
	ms := &serveModels{be: be}
	if ms.target, err = model.Architectures().Build(m.cfg, m.tensors, be); err != nil {
		ms.close()
		return nil, err
	}
	if m.cfg.Vision != nil {
		if ms.vision, err = model.NewVisionTower(m.cfg.Vision, m.tensors, model.VisionPrefix, be); err != nil {
			ms.close()
			return nil, err
		}
	}
	ms.packed = be.PackedBytes()
	if m.draft == nil || f.spec == "ngram" || f.spec == "off" {
		return ms, nil
	}
	if ms.dbe, err = dev.New(); err != nil {
		ms.close()
		return nil, err
	}
	if m.dflash != nil {
		// a DFlash draft embeds and scores with the target's weights
		if ms.dflash, err = model.NewDFlashDraft(m.dflash, m.draft, ms.target, ms.dbe); err != nil {
			ms.close()
			return nil, fmt.Errorf("serve: dflash draft: %w", err)
		}
	} else if ms.draft, err = model.Architectures().Build(m.draftCfg, m.draft, ms.dbe); err != nil {
		ms.close()
		return nil, fmt.Errorf("serve: draft model: %w", err)
	}
	ms.packed += ms.dbe.PackedBytes()
	return ms, nil
}

// planServe makes the memory plan, reserves the attention scratch it
// counts and prints it; --max-running becomes the plan's (lowered to the
// states that fit, for a model with state layers).
func planServe(s *stdio, f *serveFlags, m *loadedModel, ms *serveModels) (plan, error) {
	heads, hd := m.cfg.NumAttentionHeads, m.cfg.HeadDim
	scratch := func(context int) int64 { return ms.be.AttentionScratchBytes(heads, hd, context) }
	if ms.dbe != nil {
		dh, dhd := m.draftCfg.NumAttentionHeads, m.draftCfg.HeadDim
		scratch = func(context int) int64 {
			return ms.be.AttentionScratchBytes(heads, hd, context) + ms.dbe.AttentionScratchBytes(dh, dhd, context)
		}
	}
	var draft planDraft
	switch {
	case ms.dflash != nil:
		draft = ms.dflash
	case ms.draft != nil:
		draft = ms.draft
	}
	p, err := makePlan(f, m, ms.target, draft, ms.packed, scratch, ms.be.AutoKVType)
	if err != nil {
		return p, err
	}
	// The attention scratch the plan counts, allocated once: grown chunk
	// by chunk, a long prompt left a trail of buffers behind.
	ms.be.ReserveAttention(heads, hd, p.context)
	if ms.draft != nil {
		ms.dbe.ReserveAttention(m.draftCfg.NumAttentionHeads, m.draftCfg.HeadDim, p.context)
	}
	fmt.Fprintf(s.err, "memory plan for %s:\n%s", m.name, p.table(f))
	f.maxRunning = p.MaxRunning
	if p.kvType == metal.KVBF16 && !ms.be.SIMDAttention(p.kvType) {
		fmt.Fprintf(s.err, "warning: the %s kernels have no bf16 attention loops: attention over the bf16 KV cache runs on the portable ones, many times slower than with --kv-cache-type f16\n", ms.be.Name())
	}
	return p, nil
}

// schedulerConfig is the engine's scheduling from the plan and the flags;
// with --prefill-by-attention it prints the prompt chunk sizes that follow.
func schedulerConfig(s *stdio, f *serveFlags, m *loadedModel, be metal.Device, p plan) engine.Config {
	sched := engine.Config{NumBlocks: p.blocks, BlockSize: p.blockSize, MaxBatchTokens: f.maxBatchTokens, MaxPrefillWithDecode: f.maxPrefillDec,
		MaxRunning: f.maxRunning, MaxModelLen: p.context, MaxDraft: f.specTokens, FixedDraft: f.specFixed,
		StateSnapshots: p.Snapshots, WarmAnswers: true} // a hybrid model's next turn resumes at its answer's end
	if f.prefillCost {
		sched.AttentionBreakEven = m.cfg.AttentionBreakEven(be.QuantSpeedup(productType(m.tensors)) / be.AttentionSpeedup(p.kvType))
		fmt.Fprintf(s.err, "prompt chunks while others decode: %d tokens at the start of a prompt, %d at 8192 (a token's attention costs its matrix products at a context of %d)\n",
			sched.PrefillChunkAt(0), sched.PrefillChunkAt(8192), sched.AttentionBreakEven)
	}
	return sched
}

// newAPIServer is the HTTP frontend over eng, with the model's tokenizer,
// template and constrained-decoding vocabulary.
func newAPIServer(s *stdio, f *serveFlags, m *loadedModel, eng *actors.Engine, p plan) (*api.Server, error) {
	maxBody, _ := parseSize(f.maxBody, true)
	maxMedia, _ := parseSize(f.maxMediaBytes, true)
	eos := append([]int32(nil), m.tok.EOS()...)
	for _, id := range m.cfg.EOSTokenID {
		eos = append(eos, int32(id))
	}
	frontEngine, err := actorengine.New(eng, m.tok, m.cfg.VocabSize, eos)
	if err != nil {
		return nil, fmt.Errorf("serve: %w", err)
	}
	noTools := chooseToolParser(f.toolParser, m.tpl, s.err) == toolParserNone
	return api.New(api.Options{NoToolCalls: noTools, Engine: frontEngine, Tokenizer: textmodel.Tokenizer{T: m.tok},
		Template: textmodel.Template{T: m.tpl}, ModelID: m.name, ContextLength: p.context, APIKey: f.apiKey,
		AllowedHosts: f.allowedHosts, AllowedOrigins: f.allowedOrigins, MaxConnections: f.maxConns, MaxConnectionsPerIP: f.maxConnsPerIP, NoWebUI: f.noWebUI, MaxRunning: f.maxRunning, MaxWaiting: f.maxWaiting, MaxBodyBytes: int(maxBody),
		Vision: m.vision, MaxImagePixels: f.maxImagePixels, AllowRemoteMedia: f.remoteMedia, MaxMediaBytes: int(maxMedia), MaxPDFPages: f.maxPDFPages})
}

// serveUntilDone listens, warms the engine up, prints the Ready line
// (what names the model and kernels) and serves until ctx ends, then
// shuts down within --shutdown-grace.
func serveUntilDone(ctx context.Context, s *stdio, f *serveFlags, srv *api.Server, eng *actors.Engine, what string, ready chan<- string) error {
	ln, err := net.Listen("tcp", net.JoinHostPort(f.host, strconv.Itoa(f.port)))
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()

	if err := warmUp(ctx, eng); err != nil {
		return fmt.Errorf("serve: warm-up: %w", err)
	}
	srv.SetReady(true)
	url := "http://" + ln.Addr().String()
	fmt.Fprintf(s.out, "Ready: %s (%s)\n", url, what)
	if ready != nil {
		ready <- ln.Addr().String()
	}
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	fmt.Fprintln(s.err, "shutting down: letting streams in flight finish")
	sctx, cancel := context.WithTimeout(context.Background(), f.grace)
	defer cancel()
	return srv.Shutdown(sctx)
}

// warmUp runs one short request through the whole engine, so the first
// user request does not pay for first-touch page faults of the weights.
func warmUp(ctx context.Context, eng *actors.Engine) error {
	ch, err := eng.Generate(ctx, actors.GenerateRequest{Prompt: []int32{0}, MaxTokens: 1})
	if err != nil {
		return err
	}
	for ev := range ch {
		if ev.Err != nil {
			return ev.Err
		}
	}
	return nil
}
