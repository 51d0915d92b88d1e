package engine

import (
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/splash-inference/splash/engine/sample"
	"github.com/splash-inference/splash/engine/spec"
	"github.com/splash-inference/splash/engine/stop"
	"github.com/splash-inference/splash/metal"
	"github.com/splash-inference/splash/model"
)

// fakeModel is a deterministic stand-in for the target model that really
// uses the paged KV cache: Forward stores each token id in its cache slot
// (a one-float "key"), and the logits at position p are a function of the
// last two tokens and a position-weighted checksum of every token 0..p,
// all read back through the row's block table. So a wrong block table, a
// stale shared block or a bad rollback changes the output, while the
// two-token dependence makes the output repeat enough for n-gram drafts to
// be accepted.
type fakeModel struct {
	cfg    model.Config
	logits []float32
	// skew, when not zero, makes a draft-like model: at positions whose
	// checksum is a multiple of skew, the logits are rotated by one token,
	// so it disagrees with the target there.
	skew uint64
	// cycle makes the next token always the last plus one (mod vocab),
	// still read back through the cache: text that n-gram lookup predicts.
	cycle bool
	// state makes a hybrid-like model: it declares a state layer after
	// its paged one and computes the logits from the state it carries in
	// the row's slot (the checksum, the last two tokens, the position)
	// instead of reading the prefix back. So a slot shared by two
	// sequences, a slot not reset at position 0, or a row that does not
	// start where the state stands changes the output or fails.
	state bool
}

// fakeStateFloats is the fake's state: position, checksum (two halves),
// last token and the one before, as bits.
const fakeStateFloats = 5

func (f *fakeModel) CacheSpec() model.CacheSpec {
	s := model.DenseCache(&f.cfg)
	if f.state {
		s.Layers = append(s.Layers, model.StateLayer(fakeStateFloats))
	}
	return s
}

var _ model.Model = (*fakeModel)(nil)

func newFakeModel(vocab int) *fakeModel {
	return &fakeModel{cfg: model.Config{Architecture: "fake", VocabSize: vocab, NumHiddenLayers: 1, NumKeyValueHeads: 1, HeadDim: 1}}
}

func (f *fakeModel) Config() *model.Config { return &f.cfg }

func (f *fakeModel) NewKVCache(numBlocks, blockSize int, t metal.KVType) *metal.KVCache {
	return metal.NewKVCache(t, 1, numBlocks, blockSize, 1, 1)
}

func (f *fakeModel) Forward(b *model.Batch, kv *metal.KVCache) ([]float32, error) {
	if err := kv.CopyBlocks(b.Copies); err != nil {
		return nil, fmt.Errorf("fake: %w", err)
	}
	if err := metal.CopyStates(kv.States, b.StateCopies); err != nil {
		return nil, fmt.Errorf("fake: %w", err)
	}
	out := f.logits[:0]
	k := kv.Layers[0].K
	for ri, r := range b.Rows {
		// The same contract the real model checks.
		if len(r.Tokens) == 0 || r.Logits < 0 || r.Logits > len(r.Tokens) {
			return nil, fmt.Errorf("fake: row %d has %d tokens and asks %d logits", ri, len(r.Tokens), r.Logits)
		}
		for j, tok := range r.Tokens {
			slot, err := kv.Slot(r.Blocks, r.Start+j)
			if err != nil {
				return nil, fmt.Errorf("fake: row %d: %w", ri, err)
			}
			k[slot] = uint16(tok) // the id itself (a small vocabulary), not a float16
		}
		if f.state {
			var err error
			if out, err = f.stateForward(r, kv, out); err != nil {
				return nil, fmt.Errorf("fake: row %d: %w", ri, err)
			}
			continue
		}
		for j := len(r.Tokens) - r.Logits; j < len(r.Tokens); j++ {
			prefix := make([]int32, r.Start+j+1)
			for p := range prefix {
				slot, err := kv.Slot(r.Blocks, p)
				if err != nil {
					return nil, fmt.Errorf("fake: row %d: %w", ri, err)
				}
				prefix[p] = int32(k[slot])
			}
			prev := uint64(0)
			if len(prefix) > 1 {
				prev = uint64(prefix[len(prefix)-2]) + 1
			}
			out = append(out, f.shape(checksum(prefix), uint64(prefix[len(prefix)-1]), prev)...)
		}
	}
	f.logits = out
	return out, nil
}

// shape is the logits after a prefix with the given checksum, last token
// and token before it (plus one; 0 for none), with cycle and skew applied.
func (f *fakeModel) shape(sum, last, prev uint64) []float32 {
	l := keyLogits(sum, last, prev, f.cfg.VocabSize)
	if f.cycle {
		clear(l)
		l[(int(last)+1)%f.cfg.VocabSize] = 4
	}
	if f.skew != 0 && sum%f.skew == 0 {
		l = append(l[1:], l[0])
	}
	return l
}

// stateForward runs row r of a state model: it advances the state in the
// row's slot token by token (from zero at position 0) and appends the
// logits the row asks for.
func (f *fakeModel) stateForward(r model.Row, kv *metal.KVCache, out []float32) ([]float32, error) {
	st, err := kv.States[0].Slot(r.State)
	if err != nil {
		return nil, err
	}
	if r.Start == 0 {
		clear(st)
	}
	get := func(i int) uint64 { return uint64(math.Float32bits(st[i])) }
	put := func(i int, v uint64) { st[i] = math.Float32frombits(uint32(v)) }
	if pos := int(get(0)); pos != r.Start {
		return nil, fmt.Errorf("state of slot %d at position %d, row starts at %d", r.State, pos, r.Start)
	}
	for j, tok := range r.Tokens {
		pos, sum := get(0), get(1)|get(2)<<32
		sum += (pos + 1) * uint64(tok)
		prev := uint64(0)
		if pos > 0 {
			prev = get(3) + 1
		}
		put(0, pos+1)
		put(1, sum)
		put(2, sum>>32)
		put(3, uint64(tok))
		put(4, prev)
		if j >= len(r.Tokens)-r.Logits {
			out = append(out, f.shape(sum, uint64(tok), prev)...)
		}
	}
	return out, nil
}

// fakeLogits is the fake model's next-token logits after prefix.
func fakeLogits(prefix []int32, vocab int) []float32 {
	prev := uint64(0)
	if len(prefix) > 1 {
		prev = uint64(prefix[len(prefix)-2]) + 1
	}
	return keyLogits(checksum(prefix), uint64(prefix[len(prefix)-1]), prev, vocab)
}

// keyLogits is the logits after a prefix with the given checksum, last
// token and token before it (plus one; 0 for none).
func keyLogits(sum, last, prev uint64, vocab int) []float32 {
	key := last*1_000_003 + prev*7919 + sum%3
	out := make([]float32, vocab)
	for i := range out {
		h := mixKey(key*131 + uint64(i))
		out[i] = float32(h%1000) / 250 // logits in [0, 4): a soft distribution
	}
	return out
}

func checksum(prefix []int32) uint64 {
	var sum uint64
	for i, t := range prefix {
		sum += uint64(i+1) * uint64(t)
	}
	return sum
}

func mixKey(x uint64) uint64 {
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	x *= 0xc4ceb9fe1a85ec53
	return x ^ x>>33
}

// referenceGreedy generates req's output alone, without cache, scheduler
// or speculation: what every scheduled run must reproduce.
func referenceGreedy(req Request, vocab, maxModelLen int) ([]int32, stop.Reason) {
	toks := slices.Clone(req.Prompt)
	cond := stop.Conditions{StopTokens: req.StopTokens, MaxTokens: req.MaxTokens, MaxContext: maxModelLen}
	for {
		l := fakeLogits(toks, vocab)
		best := 0
		for i, x := range l {
			if x > l[best] {
				best = i
			}
		}
		toks = append(toks, int32(best))
		if r := cond.Check(int32(best), len(toks)-len(req.Prompt), len(toks)); r != stop.None {
			return toks[len(req.Prompt):], r
		}
	}
}

// harness runs a Scheduler against the fake model and checks the block
// pool after every step.
type harness struct {
	t        testing.TB
	s        *Scheduler
	m        *fakeModel
	kv       *metal.KVCache
	dec      Decider
	params   map[uint64]sample.Params
	samplers map[uint64]*sample.Sampler
	out      map[uint64][]int32
	cached   map[uint64][]int           // CachedTokens of each Output, in order
	prompt   map[uint64][]TokenLogprobs // prompt logprobs delivered
	reason   map[uint64]stop.Reason
	steps    int
	onPlan   func(*Plan) // called with each plan before it runs
	// elapsed, when set, times each step for StepResult.Elapsed.
	elapsed  func(*Plan) time.Duration
	drafted  int // draft tokens verified
	accepted int
	// external, when set, proposes drafts outside the scheduler, as a
	// DraftActor would, and is told outcomes and finished sequences.
	external interface {
		spec.Proposer
		spec.Observer
		spec.Releaser
	}
}

const fakeVocab = 16

func newHarness(t testing.TB, cfg Config, proposer spec.Proposer) *harness {
	t.Helper()
	s, err := New(cfg, proposer)
	if err != nil {
		t.Fatal(err)
	}
	m := newFakeModel(fakeVocab)
	c := s.Config()
	m.state = c.StateSlots > 0
	return &harness{t: t, s: s, m: m, kv: model.NewCache(m, c.NumBlocks, c.BlockSize, c.CacheSlots(), metal.KVF16), dec: Decider{Vocab: fakeVocab},
		params: map[uint64]sample.Params{}, samplers: map[uint64]*sample.Sampler{},
		out: map[uint64][]int32{}, cached: map[uint64][]int{}, prompt: map[uint64][]TokenLogprobs{}, reason: map[uint64]stop.Reason{}}
}

// add queues a request sampled with p (greedy when zero).
func (h *harness) add(r Request, p sample.Params) {
	h.t.Helper()
	if p.Seed == nil {
		seed := r.ID
		p.Seed = &seed
	}
	smp, err := sample.New(p, nil)
	if err != nil {
		h.t.Fatal(err)
	}
	smp.SetPrompt(r.Prompt)
	if err := h.s.Add(r); err != nil {
		h.t.Fatal(err)
	}
	h.params[r.ID], h.samplers[r.ID] = p, smp
}

// step runs one Schedule/Forward/Decide/Update cycle; false when idle.
func (h *harness) step() bool {
	h.t.Helper()
	p := h.s.Schedule()
	if err := h.s.Check(); err != nil {
		h.t.Fatalf("step %d after Schedule: %v", h.steps, err)
	}
	if p.Empty() {
		if !h.s.Idle() {
			h.t.Fatalf("step %d: empty plan with %+v", h.steps, h.s.Stats())
		}
		return false
	}
	if h.external != nil {
		wants := p.Wants()
		if err := h.external.Propose(wants); err != nil {
			h.t.Fatal(err)
		}
		p.SetDrafts(wants)
	}
	if h.onPlan != nil {
		h.onPlan(p)
	}
	if n := p.NumTokens(); n > h.s.Config().MaxBatchTokens {
		h.t.Fatalf("step %d: plan of %d tokens exceeds the budget", h.steps, n)
	}
	logits, err := h.m.Forward(p.Batch(), h.kv)
	if err != nil {
		h.t.Fatalf("step %d: %v", h.steps, err)
	}
	res, err := h.dec.Decide(p, logits, func(id uint64) *sample.Sampler { return h.samplers[id] })
	if err != nil {
		h.t.Fatal(err)
	}
	if h.elapsed != nil {
		res.Elapsed = h.elapsed(p)
	}
	for i := range p.Rows {
		id := p.Rows[i].Seq
		h.prompt[id] = append(h.prompt[id], res.Rows[i].PromptLogprobs...)
		if p.Rows[i].Kind == DecodeRow && h.s.State(id) != Finished {
			h.drafted += len(p.Rows[i].Draft)
			h.accepted += len(res.Rows[i].Tokens) - 1
		}
	}
	outs, err := h.s.Update(p, res)
	if err != nil {
		h.t.Fatalf("step %d: %v", h.steps, err)
	}
	for _, o := range outs {
		h.out[o.ID] = append(h.out[o.ID], o.Tokens...)
		h.cached[o.ID] = append(h.cached[o.ID], o.CachedTokens)
		if h.external != nil && o.Drafted > 0 {
			h.external.Observe(o.ID, o.Drafted, o.Accepted)
		}
		if o.Finished() {
			h.reason[o.ID] = o.Reason
			if h.external != nil {
				h.external.Release(o.ID)
			}
		}
	}
	if err := h.s.Check(); err != nil {
		h.t.Fatalf("step %d after Update: %v", h.steps, err)
	}
	h.steps++
	return true
}

// run steps until idle, with a bound against livelock.
func (h *harness) run() {
	h.t.Helper()
	for h.step() {
		if h.steps > 100000 {
			h.t.Fatal("no progress after 100000 steps")
		}
	}
	h.checkLeaks()
}

// checkOutputs fails for each of reqs whose output or finish reason is
// not its solo greedy reference's.
func (h *harness) checkOutputs(reqs []Request) {
	h.t.Helper()
	for _, r := range reqs {
		want, reason := referenceGreedy(r, fakeVocab, h.s.Config().MaxModelLen)
		if !slices.Equal(h.out[r.ID], want) || h.reason[r.ID] != reason {
			h.t.Errorf("sequence %d: %v (%s), want %v (%s)", r.ID, h.out[r.ID], h.reason[r.ID], want, reason)
		}
	}
}

func (h *harness) checkLeaks() {
	h.t.Helper()
	if err := h.s.kv.CheckLeaks(); err != nil {
		h.t.Fatalf("leak: %v", err)
	}
}

// greedy is greedy decoding without logprobs (the fastest path).
func greedy() sample.Params { return sample.Params{Logprobs: -1} }
