package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/goccy/go-json"
	"github.com/peterbourgon/ff/v4"

	"github.com/splash-inference/splash/engine/sample"
	"github.com/splash-inference/splash/metal"
	"github.com/splash-inference/splash/model"
	"github.com/splash-inference/splash/tokenizer"
)

// generateFlags are the settings of one `splash generate` run.
type generateFlags struct {
	model       string
	prompt      string
	promptIDs   string
	maxTokens   int
	temperature float64
	topP        float64
	topK        int
	seed        int
	ignoreEOS   bool
	echo        bool
	logprobs    int
	asJSON      bool
	backend     string
	threads     int
	kvCacheType string
	spec        string
	specTokens  int
	specFixed   bool
	specTrace   bool
	images      []string
}

func newGenerateCmd(s *stdio) *ff.Command {
	var f generateFlags
	fs := ff.NewFlagSet("generate")
	fs.StringVar(&f.model, 0, "model", "", "Splash package or Hugging Face checkpoint directory; default: the embedded splash-demo model")
	fs.StringVar(&f.prompt, 0, "prompt", "", "prompt text (tokenized with the model's tokenizer, special tokens parsed)")
	fs.StringVar(&f.promptIDs, 0, "prompt-ids", "", "prompt as comma-separated token ids, instead of --prompt")
	fs.IntVar(&f.maxTokens, 0, "max-tokens", 64, "tokens to generate at most")
	fs.Float64Var(&f.temperature, 0, "temperature", 0, "sampling temperature; 0 is greedy")
	fs.Float64Var(&f.topP, 0, "top-p", 1, "nucleus sampling mass")
	fs.IntVar(&f.topK, 0, "top-k", 0, "sample among the k most likely tokens; 0 is off")
	fs.IntVar(&f.seed, 0, "seed", -1, "random seed for sampling; -1 picks one")
	fs.BoolVar(&f.ignoreEOS, 0, "ignore-eos", "keep generating past end-of-sequence tokens")
	fs.BoolVar(&f.echo, 0, "echo", "include the prompt in the output (with --logprobs: its tokens' logprobs too)")
	fs.IntVar(&f.logprobs, 0, "logprobs", -1, "report each token's logprob and the top K alternatives (0..20); -1 is off")
	fs.BoolVar(&f.asJSON, 0, "json", "print one JSON object with every token instead of text")
	fs.StringVar(&f.backend, 0, "backend", "auto", "compute backend, as for serve: auto or "+strings.Join(drivers().Names(), ", "))
	fs.IntVar(&f.threads, 0, "threads", 0, "compute threads; 0 uses every core")
	fs.StringVar(&f.kvCacheType, 0, "kv-cache-type", metal.KVAuto, "how the KV cache stores keys and values, as for serve: auto, f32, f16, bf16 or q8")
	fs.StringVar(&f.spec, 0, "spec", "off", "speculative decoding, as for serve: auto, draft, dflash, ngram or off; any but off (or --spec-trace) generates through the server's engine")
	fs.IntVar(&f.specTokens, 0, "spec-tokens", 0, "most draft tokens verified per step, as for serve (0: a DFlash draft's block after its anchor, else 4)")
	fs.BoolVar(&f.specFixed, 0, "spec-fixed", "verify --spec-tokens drafts at every step, as for serve, instead of adapting their number")
	fs.BoolVar(&f.specTrace, 0, "spec-trace", "with --json, add \"spec_trace\": each decode step's position (its fed token's index in the sequence), the draft tokens proposed after it and how many were accepted")
	fs.StringListVar(&f.images, 0, "image", "image file (PNG, JPEG, GIF, WebP) taking the place of the next <image> in --prompt or -1 in --prompt-ids (repeatable)")
	return &ff.Command{
		Name:      "generate",
		Usage:     "splash generate [--model DIR] (--prompt TEXT | --prompt-ids 1,2,3) [--image FILE ...] [FLAGS]",
		ShortHelp: "generate text once from the command line",
		Flags:     fs,
		Exec: func(ctx context.Context, args []string) error {
			if len(args) > 0 {
				return fmt.Errorf("generate: unexpected arguments %q", args)
			}
			return runGenerate(ctx, s, &f)
		},
	}
}

// tokenOut is one token of --json output.
type tokenOut struct {
	ID      int32           `json:"id"`
	Text    string          `json:"text"`
	Logprob *float32        `json:"logprob"`
	Top     []tokenLogprobJ `json:"top"`
}

type tokenLogprobJ struct {
	ID      int32   `json:"id"`
	Logprob float32 `json:"logprob"`
}

func runGenerate(ctx context.Context, s *stdio, f *generateFlags) error {
	switch {
	case (f.prompt == "") == (f.promptIDs == ""):
		return errors.New("generate: give exactly one of --prompt and --prompt-ids")
	case f.maxTokens < 0:
		return fmt.Errorf("generate: --max-tokens %d must be ≥ 0", f.maxTokens)
	case f.logprobs > sample.MaxLogprobs:
		return fmt.Errorf("generate: --logprobs %d exceeds %d", f.logprobs, sample.MaxLogprobs)
	case f.specTrace && !f.asJSON:
		return errors.New("generate: --spec-trace needs --json")
	case len(f.images) > 0 && (f.spec != "off" || f.specTrace):
		return errors.New("generate: --image runs with --spec off only (its engine path does not take images yet)")
	case f.specTokens < 0:
		return fmt.Errorf("generate: --spec-tokens %d must be ≥ 0", f.specTokens)
	}
	switch f.spec {
	case "auto", "ngram", "draft", "dflash", "off":
	default:
		return fmt.Errorf("generate: --spec %q: want auto, draft, dflash, ngram or off", f.spec)
	}
	src, tok, err := generateSource(s, f.model, f.spec)
	if err != nil {
		return err
	}
	defer src.Close()
	images, err := loadImages(src, f.images)
	if err != nil {
		return err
	}
	prompt, err := promptTokens(f, tok, images, src.Config.Vision)
	if err != nil {
		return err
	}
	d, err := chooseDevice(f.backend, f.threads, false)
	if err != nil {
		return err
	}
	be, err := d.New()
	if err != nil {
		return err
	}
	defer be.Close()
	m, err := src.Build(be)
	if err != nil {
		return err
	}
	cfg := m.Config()
	for _, id := range prompt {
		if id < 0 || int(id) >= cfg.VocabSize {
			return fmt.Errorf("generate: prompt token %d is outside the vocabulary [0, %d)", id, cfg.VocabSize)
		}
	}
	if limit := cfg.MaxPositionEmbeddings; limit > 0 && len(prompt)+f.maxTokens > limit {
		return fmt.Errorf("generate: prompt of %d tokens plus --max-tokens %d exceeds the model's context of %d", len(prompt), f.maxTokens, limit)
	}
	// The cache type serve would use, so that a greedy answer here is the
	// server's.
	kvType, _ := be.AutoKVType(generateBlockSize, cfg.HeadDim)
	if f.kvCacheType != metal.KVAuto {
		if kvType, err = metal.ParseKVType(f.kvCacheType); err != nil {
			return fmt.Errorf("generate: --kv-cache-type: %w", err)
		}
		if err := kvType.Check(generateBlockSize, cfg.HeadDim); err != nil {
			return fmt.Errorf("generate: --kv-cache-type %s: %w", kvType, err)
		}
	}
	spans, err := encodeImages(src, be, prompt, images)
	if err != nil {
		return err
	}
	params := sample.Params{Temperature: float32(f.temperature), TopP: float32(f.topP), TopK: f.topK, Logprobs: f.logprobs}
	if f.seed >= 0 {
		seed := uint64(f.seed)
		params.Seed = &seed
	}
	if err := params.Validate(); err != nil {
		return fmt.Errorf("generate: %w", err)
	}
	g := &generation{s: s, f: f, m: m, tok: tok, params: params, kvType: kvType, images: spans}
	if f.spec == "off" && !f.specTrace || f.maxTokens == 0 {
		return g.run(ctx, prompt)
	}

	sm, err := buildSpecDraft(f.spec, src, d, m)
	if err != nil {
		return err
	}
	defer sm.close()
	return g.runEngine(ctx, prompt, sm)
}

// generateSource opens the package or checkpoint dir with its tokenizer,
// or the embedded demo when dir is "" (its DFlash package for a --spec
// that runs one).
func generateSource(s *stdio, dir, spec string) (*model.Source, *tokenizer.Tokenizer, error) {
	if dir == "" {
		return demoSource(s.err, spec)
	}
	return openSource(dir)
}

// promptTokens tokenizes --prompt or parses --prompt-ids, with each
// image's tokens in place of its <image> or -1.
func promptTokens(f *generateFlags, tok *tokenizer.Tokenizer, images []promptImage, v *model.VisionConfig) ([]int32, error) {
	if f.prompt != "" {
		text := f.prompt
		if len(images) > 0 {
			var err error
			if text, err = expandImageText(text, images, tok, v); err != nil {
				return nil, err
			}
		}
		ids := tok.Encode(text, true)
		if len(ids) == 0 {
			return nil, errors.New("generate: the prompt encodes to no tokens")
		}
		return ids, nil
	}
	var ids []int32
	for _, part := range strings.Split(f.promptIDs, ",") {
		v, err := strconv.ParseInt(strings.TrimSpace(part), 10, 32)
		if err != nil {
			return nil, fmt.Errorf("generate: --prompt-ids: %q is not a token id", part)
		}
		ids = append(ids, int32(v))
	}
	return expandImageIDs(ids, images, v)
}

// generation is one run: the model, the tokenizer, and where output goes.
type generation struct {
	s      *stdio
	f      *generateFlags
	m      model.Model
	tok    *tokenizer.Tokenizer
	params sample.Params
	kvType metal.KVType
	images []model.ImageSpan // the prompt's, every row's: they move the positions after them
	out    []tokenOut
	trace  []specStepOut // --spec-trace
}

// generateBlockSize is the KV block size of a generation's cache.
const generateBlockSize = 16

func (g *generation) run(ctx context.Context, prompt []int32) error {
	cfg := g.m.Config()
	total := len(prompt) + g.f.maxTokens
	blocks := make([]int32, (total+generateBlockSize-1)/generateBlockSize)
	for i := range blocks {
		blocks[i] = int32(i)
	}
	kv := model.NewCache(g.m, len(blocks), generateBlockSize, 1, g.kvType) // a state model's one sequence in slot 0
	entropy := rand.NewPCG(uint64(time.Now().UnixNano()), 0x5151)
	sampler, err := sample.New(g.params, entropy)
	if err != nil {
		return fmt.Errorf("generate: %w", err)
	}
	sampler.SetPrompt(prompt)
	eos := map[int32]bool{}
	for _, id := range cfg.EOSTokenID {
		eos[int32(id)] = true
	}
	for _, id := range g.tok.EOS() {
		eos[id] = true
	}
	// Prefill. With --echo --logprobs every prompt position's logits are
	// needed (position i predicts token i+1); otherwise only the last.
	wantPrompt := g.f.echo && g.f.logprobs >= 0
	nl := 1
	if wantPrompt {
		nl = len(prompt)
	}
	var clock generateClock
	clock.startPrompt(len(prompt))
	logits, err := g.m.Forward(&model.Batch{Rows: []model.Row{{Tokens: prompt, Blocks: blocks, Logits: nl, Images: g.images}}}, kv)
	if err != nil {
		return err
	}
	clock.prompted()
	for i := range g.images {
		g.images[i].Embeds = nil // no decode row feeds an image's tokens
	}
	vocab := cfg.VocabSize
	stream := g.tok.NewStreamDecoder(false)
	if g.f.echo {
		var scorer *sample.Sampler
		if wantPrompt {
			scorer, _ = sample.New(sample.Params{Logprobs: g.f.logprobs}, entropy) // greedy: draws nothing
		}
		for i, id := range prompt {
			t := tokenOut{ID: id, Text: g.tok.Decode([]int32{id}, false), Top: []tokenLogprobJ{}}
			if wantPrompt && i > 0 {
				row := logits[(i-1)*vocab : i*vocab]
				lp := sample.Logprob(row, id)
				t.Logprob = &lp
				t.Top = topOf(scorer.Sample(row).Top)
			}
			g.emit(t, stream)
		}
		logits = logits[(nl-1)*vocab:]
	}
	pos := len(prompt)
	for n := 0; n < g.f.maxTokens; n++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		r := sampler.Sample(logits[:vocab])
		sampler.Accept(r.Token)
		t := tokenOut{ID: r.Token, Text: g.tok.Decode([]int32{r.Token}, false), Top: []tokenLogprobJ{}}
		if g.f.logprobs >= 0 {
			lp := r.Logprob
			t.Logprob = &lp
			t.Top = topOf(r.Top)
		}
		g.emit(t, stream)
		clock.token()
		if eos[r.Token] && !g.f.ignoreEOS {
			break
		}
		if n+1 == g.f.maxTokens {
			break
		}
		logits, err = g.m.Forward(&model.Batch{Rows: []model.Row{{Start: pos, Tokens: []int32{r.Token}, Blocks: blocks, Logits: 1, Images: g.images}}}, kv)
		if err != nil {
			return err
		}
		pos++
	}
	return g.finish(clock, stream)
}

// finish prints the output and the timings: on stderr, after the output,
// as llama-cli prints its own; with --json, in the object too.
func (g *generation) finish(clock generateClock, stream *tokenizer.StreamDecoder) error {
	timings := clock.timings()
	if g.f.spec != "off" {
		if timings.Speculation = summarize(g.trace); timings.Speculation != nil {
			timings.DecodeSteps = timings.Speculation.Steps
		}
	}
	var err error
	if g.f.asJSON {
		out := map[string]any{"tokens": g.out, "timings": timings}
		if g.f.specTrace {
			out["spec_trace"] = append([]specStepOut{}, g.trace...)
		}
		err = json.NewEncoder(g.s.out).Encode(out)
	} else {
		_, err = fmt.Fprintln(g.s.out, stream.Flush())
	}
	timings.write(g.s.err)
	return err
}

// emit records a token for --json, or streams its text.
func (g *generation) emit(t tokenOut, stream *tokenizer.StreamDecoder) {
	if g.f.asJSON {
		if t.Logprob != nil && math.IsInf(float64(*t.Logprob), -1) {
			lp := float32(-9999) // JSON has no -Inf; report a floor like vLLM does
			t.Logprob = &lp
		}
		g.out = append(g.out, t)
		return
	}
	fmt.Fprint(g.s.out, stream.Add(t.ID))
}

func topOf(top []sample.TokenLogprob) []tokenLogprobJ {
	out := make([]tokenLogprobJ, len(top))
	for i, t := range top {
		out[i] = tokenLogprobJ{ID: t.Token, Logprob: t.Logprob}
	}
	return out
}
