package actors

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/splash-inference/splash/engine"
	"github.com/splash-inference/splash/engine/kvdisk"
	"github.com/splash-inference/splash/engine/sample"
	"github.com/splash-inference/splash/engine/spec"
	"github.com/splash-inference/splash/engine/stop"
	"github.com/splash-inference/splash/metal"
	"github.com/splash-inference/splash/model"
)

var errStopped = errors.New("actors: the request was stopped by the server")

// Config configures an Engine.
type Config struct {
	Model     model.Model
	Scheduler engine.Config // NumBlocks, BlockSize, MaxBatchTokens, MaxRunning, MaxModelLen, MaxDraft
	// Spec chooses speculative decoding: "ngram" (prompt lookup over the
	// sequence's own tokens), "draft" (the Draft model), "auto" (per
	// sequence, whichever of the two predicts better; n-gram alone without a
	// Draft model) or "off".
	Spec string
	// Proposer, when set, replaces the Spec choice with a proposer run
	// inside Schedule (benchmarks use a replay of known output).
	Proposer spec.Proposer
	// Draft is an optional small model with the target's vocabulary.
	Draft model.Model
	// DFlash is an optional block-diffusion draft bound to Model: Spec
	// "dflash" (or "auto", which prefers it) proposes with it, the target
	// capturing its features in every pass.
	DFlash *model.DFlashDraft
	// DraftBlocks sizes the draft model's own KV cache (default: as many
	// blocks as the target's).
	DraftBlocks int
	// KVType is how the target's and the draft's caches store keys and
	// values (the zero value: float16).
	KVType metal.KVType
	// NewDecoder returns a streaming detokenizer that skips special tokens.
	NewDecoder func() TextDecoder
	Seed       uint64 // seeds the generators of requests without a seed
	// VerifierFault, when set, runs before every forward pass (tests inject
	// panics with it).
	VerifierFault func(step uint64)
	// Disk, when set, is the prefix cache's disk tier (disktier.go): a
	// store of the target's cache identity (model, KVType, block size),
	// which the caller opens and closes after Close. Ignored for a model
	// with state layers, whose blocks serve no prefix hit.
	Disk *kvdisk.Store
	// Logger receives the actor system's logs (supervision events among
	// them); nil logs warnings and errors to stderr.
	Logger *slog.Logger
	// Vision is Model's vision tower (model.Source.BuildVision), nil for a
	// model that reads no images; requests with images are refused then.
	Vision *model.VisionTower
	// ImageCacheBytes bounds the embeddings of images kept for resends
	// (engine.ImageCache); DefaultImageCacheBytes when zero.
	ImageCacheBytes int64
}

// DefaultImageCacheBytes is Config.ImageCacheBytes's default: a few
// screenshots' embeddings (one of 4 megapixels is 4,096 tokens, 16 MiB at
// a hidden size of 1,024).
const DefaultImageCacheBytes = 256 << 20

// Engine is the Go API the HTTP layer uses: submit a request, receive its
// events. Safe for concurrent use.
type Engine struct {
	system  *actor.ActorSystem
	batcher *actor.PID
	cfg     Config
	nextID  atomic.Uint64
	metrics *metricsBox
}

// GenerateRequest is one sequence's request in token ids: a Request's
// choice (Request.Sequence), or a caller's own single sequence.
type GenerateRequest struct {
	Prompt         []int32
	Sampling       sample.Params // Sampling.Logprobs: < 0 none, 0 sampled token, k top-k too
	MaxTokens      int           // 0: up to the context limit
	Stop           []string      // stop strings, not included in the text
	StopTokens     []int32       // EOS and other stop ids; empty with IgnoreEOS
	PromptLogprobs bool          // logprobs of every prompt token (echo)
	// Images are the prompt's images (engine.Image: where their pad tokens
	// are, their patches, a content hash), for a model with a vision tower.
	Images []engine.Image
	// Mask, when set, constrains decoding (structured output, required tool
	// calls): see TokenMask.
	Mask TokenMask
	// SpecTrace adds each decode step's SpecStep to the events.
	SpecTrace bool
}

// SpecStep is one decode step of a sequence, as speculation saw it:
// Position is the index in the sequence of the token the step fed (the last
// committed one, a draft's anchor), Proposed the draft tokens verified after
// it (none when nothing was proposed) and Accepted how many of them the
// target kept; the step's tokens are Proposed[:Accepted] and the target's
// own after them.
type SpecStep struct {
	Position int
	Proposed []int32
	Accepted int
}

// TokenMask is the constrained-decoding hook (grammar.Constraint is one).
// The batcher calls Mask on the logits of every position it samples for
// the request, then Accept for each token the request keeps, in order.
// Masked requests do not use speculative drafts, so every sampled position
// follows the tokens already accepted. Logprobs of a masked request are
// those of the masked distribution.
type TokenMask interface {
	Mask(logits []float32)
	Accept(tok int32)
}

// Event is one step of a request's stream. The last event has Finish or Err
// set and carries Usage; the channel closes after it.
type Event struct {
	// CachedTokens, on the first event, counts the prompt tokens served
	// from the prefix cache (a streaming API reports them up front).
	CachedTokens   int
	Text           string
	Tokens         []int32
	Logprobs       []TokenLogprobs
	PromptLogprobs []TokenLogprobs
	Spec           *SpecStep // with GenerateRequest.SpecTrace: the decode step that gave Tokens
	Finish         stop.Reason
	Usage          Usage
	Err            error
}

// Usage counts a finished request's tokens.
type Usage struct {
	PromptTokens, CompletionTokens, CachedTokens int
}

// New starts the actor system: the batcher and, under it, the verifier.
func New(cfg Config) (*Engine, error) {
	if cfg.Model == nil || cfg.NewDecoder == nil {
		return nil, errors.New("actors: Config needs Model and NewDecoder")
	}
	proposer, newDraft, err := speculation(&cfg)
	if err != nil {
		return nil, err
	}
	if cfg.Draft != nil && cfg.Draft.Config().VocabSize != cfg.Model.Config().VocabSize {
		return nil, fmt.Errorf("actors: draft vocabulary %d differs from the target's %d", cfg.Draft.Config().VocabSize, cfg.Model.Config().VocabSize)
	}
	cache := cfg.Model.CacheSpec()
	if err := cache.Check(); err != nil {
		return nil, fmt.Errorf("actors: %w", err)
	}
	if cache.HasState() && cfg.Scheduler.StateSlots == 0 {
		cfg.Scheduler.StateSlots = cfg.Scheduler.MaxRunning // one per running sequence
	}
	if cache.HasState() {
		cfg.Scheduler.StateChunk, cfg.Scheduler.StateShortRows = cache.StateChunk, cache.StateShortRows
	}
	// Validate the scheduler settings once; every (re)started batcher then
	// builds a fresh scheduler from them, since a panic leaves the old one's
	// state unknown.
	probe, err := engine.New(cfg.Scheduler, proposer)
	if err != nil {
		return nil, err
	}
	sc := probe.Config()
	if err := cache.CheckKV(cfg.KVType, sc.BlockSize); err != nil {
		return nil, fmt.Errorf("actors: %w", err)
	}
	kv := model.NewCache(cfg.Model, sc.NumBlocks, sc.BlockSize, sc.CacheSlots(), cfg.KVType) // running sequences' slots and spares, then snapshots
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	system := actor.NewActorSystem(actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger { return logger }))
	e := &Engine{system: system, cfg: cfg, metrics: newMetrics(sc.NumBlocks, cache.StateBytes(), cfg.Spec)}
	var tier *diskTier
	if cfg.Disk != nil && !cache.HasState() {
		tier = &diskTier{store: cfg.Disk, kv: kv, metrics: e.metrics}
		e.metrics.disk = cfg.Disk
	}
	seed := cfg.Seed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	var images *engine.ImageCache
	if cfg.Vision != nil {
		e.metrics.vision = true
		if cfg.ImageCacheBytes == 0 {
			cfg.ImageCacheBytes = DefaultImageCacheBytes
		}
		images = engine.NewImageCache(cfg.Vision, cfg.ImageCacheBytes)
	}
	verifier := actor.PropsFromProducer(func() actor.Actor {
		return &VerifierActor{model: cfg.Model, kv: kv, images: images, metrics: e.metrics, fault: cfg.VerifierFault}
	})
	draftProps, err := draftActor(&cfg, sc.NumBlocks, sc.BlockSize, newDraft)
	if err != nil {
		return nil, err
	}
	props := actor.PropsFromProducer(func() actor.Actor {
		b := &BatcherActor{sched: mustScheduler(cfg.Scheduler, proposer), decider: engine.Decider{Vocab: cfg.Model.Config().VocabSize},
			metrics: e.metrics, entropy: rand.NewPCG(seed, 0x5eed), verifierProps: verifier, draftProps: draftProps}
		if tier != nil {
			b.disk = &diskReads{diskTier: tier, cancelled: map[uint64]bool{}}
			b.sched.KV().OnEvict(tier.spill)
		}
		if cfg.Spec == "dflash" && sc.MaxDraft > 0 {
			// a scheduler that never drafts (a model with state layers,
			// for now) needs no features
			b.features = &model.FeatureCapture{Layers: cfg.DFlash.FeatureLayers()}
		}
		return b
	}, actor.WithSupervisor(notifyParent(actor.NewOneForOneStrategy(10, time.Minute, restartAlways))))
	e.batcher, err = e.system.Root.SpawnNamed(props, "batcher")
	if err != nil {
		return nil, fmt.Errorf("actors: %w", err)
	}
	return e, nil
}

// speculation resolves cfg.Spec, writing back what "auto" chose and the
// draft length: a proposer that runs inside Schedule (n-gram: no forward
// pass), or newDraft, the constructor of the DraftActor's proposer. newDraft
// reads cfg when it runs, after New has sized the draft's cache.
func speculation(cfg *Config) (proposer spec.Proposer, newDraft func() spec.Proposer, err error) {
	switch cfg.Spec {
	case "", "auto":
		if cfg.DFlash != nil {
			cfg.Spec, newDraft = "dflash", func() spec.Proposer { return mustDFlash(*cfg) }
		} else if cfg.Draft == nil {
			cfg.Spec, proposer = "ngram", spec.Ngram{}
		} else {
			cfg.Spec = "auto"
			newDraft = func() spec.Proposer { return spec.NewHybrid(spec.Ngram{}, mustDraft(*cfg)) }
		}
	case "ngram":
		proposer = spec.Ngram{}
	case "draft":
		if cfg.Draft == nil {
			return nil, nil, errors.New("actors: --spec draft needs a draft model")
		}
		newDraft = func() spec.Proposer { return mustDraft(*cfg) }
	case "dflash":
		if cfg.DFlash == nil {
			return nil, nil, errors.New("actors: --spec dflash needs a DFlash draft")
		}
		newDraft = func() spec.Proposer { return mustDFlash(*cfg) }
	case "off":
		cfg.Scheduler.MaxDraft = 0
	default:
		return nil, nil, fmt.Errorf("actors: speculation %q is not supported (auto, ngram, draft, dflash or off)", cfg.Spec)
	}
	if cfg.Proposer != nil {
		proposer, newDraft = cfg.Proposer, nil
		cfg.Spec = "custom"
	}
	if cfg.Spec == "dflash" && cfg.Scheduler.MaxDraft == 0 {
		cfg.Scheduler.MaxDraft = cfg.DFlash.Config().BlockSize - 1 // one block's proposals
	}
	if cfg.Spec != "off" && cfg.Scheduler.MaxDraft == 0 {
		cfg.Scheduler.MaxDraft = 4
	}
	return proposer, newDraft, nil
}

// draftActor checks the draft's settings and returns the DraftActor's
// props, or nil without a draft (numBlocks and blockSize are the target's
// pool's, which the draft's cache follows unless cfg.DraftBlocks sizes it).
func draftActor(cfg *Config, numBlocks, blockSize int, newDraft func() spec.Proposer) (*actor.Props, error) {
	if newDraft == nil {
		return nil, nil
	}
	if cfg.DraftBlocks == 0 {
		cfg.DraftBlocks = numBlocks
	}
	cfg.Scheduler.BlockSize = blockSize
	if cfg.Spec == "dflash" {
		if _, err := spec.NewDFlash(cfg.DFlash, cfg.DraftBlocks, blockSize, cfg.KVType); err != nil {
			return nil, fmt.Errorf("actors: dflash draft: %w", err)
		}
	} else if _, err := spec.NewDraftModel(cfg.Draft, cfg.DraftBlocks, blockSize, cfg.KVType); err != nil {
		return nil, fmt.Errorf("actors: draft model: %w", err)
	}
	return actor.PropsFromProducer(func() actor.Actor { return &DraftActor{proposer: newDraft()} }), nil
}

// Generate starts a request and returns its event stream. Cancelling ctx
// cancels the request and frees its KV blocks.
func (e *Engine) Generate(ctx context.Context, req GenerateRequest) (<-chan Event, error) {
	if len(req.Prompt) == 0 {
		return nil, errors.New("actors: empty prompt")
	}
	// A bad id would fail the whole batched step, not just this request.
	vocab := int32(e.cfg.Model.Config().VocabSize)
	for _, id := range req.Prompt {
		if id < 0 || id >= vocab {
			return nil, fmt.Errorf("actors: prompt token %d is outside the vocabulary [0, %d)", id, vocab)
		}
	}
	for id := range req.Sampling.LogitBias {
		if id < 0 || id >= vocab {
			return nil, fmt.Errorf("actors: logit_bias token %d is outside the vocabulary [0, %d)", id, vocab)
		}
	}
	if err := req.Sampling.Validate(); err != nil {
		return nil, err
	}
	if err := e.checkImages(req); err != nil {
		return nil, err
	}
	id := e.nextID.Add(1)
	events := make(chan Event, 16)
	sub := &Submit{
		Req: engine.Request{ID: id, Prompt: req.Prompt, MaxTokens: req.MaxTokens, StopTokens: req.StopTokens,
			PromptLogprobs: req.PromptLogprobs, Images: req.Images},
		Sampling: req.Sampling, Mask: req.Mask, SpecTrace: req.SpecTrace,
	}
	finished := make(chan struct{})
	ra := &RequestActor{id: id, submit: sub, batcher: e.batcher, events: events, gone: ctx.Done(),
		finished: finished, decoder: e.cfg.NewDecoder(), stops: stop.NewChecker(req.Stop)}
	pid := e.system.Root.Spawn(actor.PropsFromProducer(func() actor.Actor { return ra }))
	go func() {
		select {
		case <-ctx.Done():
			e.system.Root.Send(pid, &cancelRequest{})
		case <-finished:
		}
	}()
	return events, nil
}

// checkImages refuses images the model cannot read, naming it when it
// has no vision tower.
func (e *Engine) checkImages(req GenerateRequest) error {
	if len(req.Images) == 0 {
		return nil
	}
	cfg := e.cfg.Model.Config()
	if e.cfg.Vision == nil {
		return fmt.Errorf("actors: %s has no vision tower: it cannot read images", cfg.Architecture)
	}
	if err := engine.CheckImages(req.Prompt, req.Images, e.cfg.Vision.Config(), cfg.HiddenSize); err != nil {
		return fmt.Errorf("actors: %w", err)
	}
	return nil
}

// WriteMetrics writes the engine's Prometheus metrics.
func (e *Engine) WriteMetrics(w io.Writer) { e.metrics.write(w) }

// Close stops every actor, waiting for a forward pass in flight to finish
// (so the model's memory can be released after); streams in flight end
// with an error.
func (e *Engine) Close() {
	if err := e.system.Root.StopFuture(e.batcher).Wait(); err != nil {
		e.system.Logger().Error("actors: stopping the batcher", "error", err)
	}
	e.system.Shutdown()
}

// CheckPool verifies the KV block pool against the live sequences; once
// every request has finished it is a leak check. idle reports whether no
// request was live.
func (e *Engine) CheckPool() (idle bool, err error) {
	res, err := e.system.Root.RequestFuture(e.batcher, &CheckPool{}, 10*time.Second).Result()
	if err != nil {
		return false, fmt.Errorf("actors: %w", err)
	}
	pc := res.(*PoolChecked)
	return pc.Idle, pc.Err
}

// mustScheduler builds a fresh scheduler from settings New's probe
// accepted, so engine.New cannot fail here.
func mustScheduler(cfg engine.Config, proposer spec.Proposer) *engine.Scheduler {
	s, err := engine.New(cfg, proposer)
	if err != nil {
		panic(err) // the settings changed since the probe: a bug
	}
	return s
}

// mustDraft builds the draft proposer; its settings were checked in New.
func mustDraft(cfg Config) *spec.DraftModel {
	d, err := spec.NewDraftModel(cfg.Draft, cfg.DraftBlocks, cfg.Scheduler.BlockSize, cfg.KVType)
	if err != nil {
		panic(err) // a (re)started DraftActor cannot work: supervision reports it
	}
	return d
}

// mustDFlash builds the DFlash proposer; its settings were checked in New.
func mustDFlash(cfg Config) *spec.DFlash {
	d, err := spec.NewDFlash(cfg.DFlash, cfg.DraftBlocks, cfg.Scheduler.BlockSize, cfg.KVType)
	if err != nil {
		panic(err) // a (re)started DraftActor cannot work: supervision reports it
	}
	return d
}
