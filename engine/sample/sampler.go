package sample

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/splash-inference/splash/metal/vec"
)

// TokenLogprob is a token with its natural-log probability.
type TokenLogprob struct {
	Token   int32
	Logprob float32
}

// Result is one sampled position.
type Result struct {
	Token   int32
	Logprob float32        // under the raw distribution (see package doc); 0 when Params.Logprobs < 0
	Top     []TokenLogprob // the Params.Logprobs most likely raw tokens, best first; valid until the next call
}

// Sampler samples one request's tokens. See the package doc.
type Sampler struct {
	p      Params
	pcg    rand.PCG
	rng    *rand.Rand
	output map[int32]int32    // generated token → count, for presence and frequency penalties
	prompt map[int32]struct{} // prompt tokens, for the repetition penalty only

	work []float32 // penalised logits
	w    []float32 // candidates' weights exp((l−m)/T), indexed by token
	idx  []int32   // candidate token ids
	top  []TokenLogprob
}

// New returns a Sampler for p. Without p.Seed, the generator is seeded from
// entropy (for example a server-wide rand.Source); entropy may be nil when
// p.Seed is set.
func New(p Params, entropy rand.Source) (*Sampler, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	var seed uint64
	switch {
	case p.Seed != nil:
		seed = *p.Seed
	case entropy != nil:
		seed = entropy.Uint64()
	default:
		return nil, fmt.Errorf("sample: no seed and no entropy source")
	}
	s := &Sampler{p: p, output: make(map[int32]int32)}
	s.pcg.Seed(seed, seed^0xda3e39cb94b95bdb)
	s.rng = rand.New(&s.pcg)
	return s, nil
}

// Params returns the sampler's settings.
func (s *Sampler) Params() Params { return s.p }

// Rand returns the request's generator, which speculative acceptance draws
// from so that a seeded request stays reproducible.
func (s *Sampler) Rand() *rand.Rand { return s.rng }

// SetPrompt records the prompt's tokens for the repetition penalty.
func (s *Sampler) SetPrompt(tokens []int32) {
	if s.p.repetition() == 1 {
		return
	}
	if s.prompt == nil {
		s.prompt = make(map[int32]struct{}, len(tokens))
	}
	for _, t := range tokens {
		s.prompt[t] = struct{}{}
	}
}

// Accept records a generated token for the penalties. Call it for every
// token the sequence keeps, in order, including accepted draft tokens.
func (s *Sampler) Accept(tok int32) {
	if s.p.hasPenalties() {
		s.output[tok]++
	}
}

// Sample picks the next token from one position's logits.
func (s *Sampler) Sample(logits []float32) Result {
	adj := s.penalised(logits)
	var tok int32
	if s.p.greedy() {
		tok = argmax(adj)
	} else {
		tok = s.draw(adj)
	}
	return s.result(tok, logits)
}

// Probs writes into dst (len(logits) entries) the distribution Sample draws
// from: after penalties, temperature and the min-p, top-k and top-p filters;
// one-hot on the arg max when greedy. It consumes no randomness.
func (s *Sampler) Probs(logits, dst []float32) {
	adj := s.penalised(logits)
	if s.p.greedy() {
		clear(dst)
		dst[argmax(adj)] = 1
		return
	}
	cands, total := s.candidates(adj)
	if cands == nil { // every token, each written: no clearing first
		// One multiply a token, not a division (a verify row at
		// temperature 1 over 152K tokens spends this for each position).
		inv := 1 / total
		for t, w := range s.w[:len(adj)] {
			dst[t] = float32(float64(w) * inv)
		}
		return
	}
	clear(dst)
	for _, t := range cands {
		dst[t] = float32(float64(s.w[t]) / total)
	}
}

// Logprob returns tok's natural-log probability under the raw logits.
func Logprob(logits []float32, tok int32) float32 {
	return logits[tok] - float32(logSumExp(logits))
}

// result fills in the logprobs the request asked for.
func (s *Sampler) result(tok int32, raw []float32) Result {
	r := Result{Token: tok}
	if s.p.Logprobs < 0 {
		return r
	}
	lse := logSumExp(raw)
	r.Logprob = raw[tok] - float32(lse)
	if s.p.Logprobs > 0 {
		s.top = topLogprobs(s.top[:0], raw, s.p.Logprobs, lse)
		r.Top = s.top
	}
	return r
}

// penalised returns the logits after penalties and bias: logits itself when
// there are none, else a copy in scratch.
func (s *Sampler) penalised(logits []float32) []float32 {
	if !s.p.hasPenalties() {
		return logits
	}
	s.work = append(s.work[:0], logits...)
	w := s.work
	if r := s.p.repetition(); r != 1 {
		for t := range s.prompt {
			repeat(w, t, r)
		}
		for t := range s.output {
			if _, inPrompt := s.prompt[t]; !inPrompt {
				repeat(w, t, r)
			}
		}
	}
	for t, n := range s.output {
		if inVocab(w, t) {
			w[t] -= s.p.PresencePenalty + s.p.FrequencyPenalty*float32(n)
		}
	}
	for t, b := range s.p.LogitBias {
		if inVocab(w, t) {
			w[t] += b
		}
	}
	return w
}

func inVocab(w []float32, t int32) bool { return t >= 0 && int(t) < len(w) }

func repeat(w []float32, t int32, r float32) {
	if !inVocab(w, t) {
		return
	}
	if w[t] > 0 {
		w[t] /= r
	} else {
		w[t] *= r
	}
}

// draw samples from the filtered, tempered distribution with one uniform draw.
func (s *Sampler) draw(adj []float32) int32 {
	cands, total := s.candidates(adj)
	u := s.rng.Float64() * total
	acc := 0.0
	if cands == nil { // every token
		return int32(pick(s.w[:len(adj)], u))
	}
	for _, t := range cands {
		acc += float64(s.w[t])
		if u < acc {
			return t
		}
	}
	return cands[len(cands)-1] // rounding left u just past the sum
}

// candidates applies min-p, top-k and top-p and returns the surviving ids
// and their total weight; s.w[t] holds each survivor's weight exp((l−m)/T),
// m the max logit. With no min-p or top-k, cands is nil when every token
// survives (all of s.w[:len(adj)], banned ones weighing 0).
func (s *Sampler) candidates(adj []float32) (cands []int32, total float64) {
	p := &s.p
	m := float64(adj[argmax(adj)])
	invT := 1 / float64(p.Temperature)
	if p.MinP <= 0 && p.TopK == 0 && !math.IsInf(m, -1) {
		return s.everyToken(adj, m, invT)
	}
	// min-p: p_i ≥ MinP·p_max  ⇔  (l_i − m)/T ≥ ln MinP
	floor := -math.MaxFloat64 // excludes -Inf logits (banned tokens)
	if p.MinP > 0 {
		floor = max(floor, m+float64(p.Temperature)*math.Log(float64(p.MinP)))
	}
	var idx []int32
	if p.TopK > 0 && p.TopK <= len(adj)/8 {
		// Small k: one heap pass finds the k best above the min-p floor.
		idx = topKScan(s.idx[:0], adj, p.TopK, floor)
	} else {
		idx = s.idx[:0]
		for t, l := range adj {
			if float64(l) >= floor {
				idx = append(idx, int32(t))
			}
		}
		if p.TopK > 0 && len(idx) > p.TopK {
			selectTop(idx, adj, p.TopK)
			idx = idx[:p.TopK]
		}
	}
	if len(idx) == 0 { // every logit is -Inf: fall back to the arg max
		idx = append(idx, argmax(adj))
	}
	s.idx = idx[:0]
	if len(s.w) < len(adj) {
		s.w = make([]float32, len(adj))
	}
	for _, t := range idx {
		w := expReduced(max((float64(adj[t])-m)*invT, -700))
		s.w[t] = float32(w)
		total += w
	}
	if topP := float64(p.topP()); topP < 1 {
		idx, total = nucleus(idx, adj, s.w, m, invT, topP*total)
	}
	return idx, total
}

// logSumExp returns ln Σ exp(v): the max m plus the log of Σ exp(v − m),
// the weights of vec.ExpWeights (float32, each within 3e-7 of its
// exponential, so the result within 3e-7; logprobs are reported in
// float32) summed in float64, a stack buffer's length at a time: logprobs
// need it over the whole vocabulary for every token, where float64
// exponentials cost about as much as sampling itself (BenchmarkExpWeights).
func logSumExp(v []float32) float64 {
	m := v[argmax(v)]
	if math.IsInf(float64(m), -1) {
		return float64(m)
	}
	var buf [2048]float32
	s := 0.0
	for len(v) > 0 {
		n := min(len(v), len(buf))
		s += vec.ExpWeights(buf[:n], v[:n], m, 1)
		v = v[n:]
	}
	return float64(m) + math.Log(s)
}

// topLogprobs appends the n best raw tokens with their logprobs to dst,
// best first, by one pass with a small insertion-sorted buffer (dst's own
// entries stay as they are).
func topLogprobs(dst []TokenLogprob, raw []float32, n int, lse float64) []TokenLogprob {
	base := len(dst)
	n = min(n, len(raw))
	floor := float32(math.Inf(-1)) // the n-th best so far, once there are n
	for t, l := range raw {
		if l <= floor && len(dst)-base == n {
			continue
		}
		if len(dst)-base < n {
			dst = append(dst, TokenLogprob{})
		}
		j := len(dst) - 1
		for ; j > base && dst[j-1].Logprob < l; j-- {
			dst[j] = dst[j-1]
		}
		dst[j] = TokenLogprob{Token: int32(t), Logprob: l}
		if len(dst)-base == n {
			floor = dst[base+n-1].Logprob
		}
	}
	for i := base; i < len(dst); i++ {
		dst[i].Logprob -= float32(lse)
	}
	return dst
}

// Logprobs returns tok's raw logprob and appends to dst the n most likely
// raw tokens with theirs, best first: the logprobs of a token chosen by
// someone else, such as a speculative acceptance rule.
func Logprobs(logits []float32, tok int32, n int, dst []TokenLogprob) (float32, []TokenLogprob) {
	lse := logSumExp(logits)
	if n > 0 {
		dst = topLogprobs(dst, logits, n, lse)
	}
	return logits[tok] - float32(lse), dst
}

// everyToken is candidates with no min-p or top-k filter, the default
// (OpenAI's temperature 1, nothing else): every token with a finite logit
// is a candidate. The weights of the whole vocabulary are one SIMD pass
// (vec.ExpWeights, in float32),
// and top-p looks only at the tokens within nucleusNear tempered nats of
// the max when their mass reaches it, which for any useful top-p it does:
// the nucleus, bucket by bucket from the best, is then decided before the
// first bucket those tokens might not fill.
func (s *Sampler) everyToken(adj []float32, m, invT float64) ([]int32, float64) {
	if len(s.w) < len(adj) {
		s.w = make([]float32, len(adj))
	}
	total := vec.ExpWeights(s.w[:len(adj)], adj, float32(m), float32(invT))
	topP := float64(s.p.topP())
	if topP >= 1 {
		return nil, total
	}
	// Every token of a bucket below nearBuckets is within nucleusNear·(1+ε)
	// nats; cut, rounded down, keeps them all.
	cut := math.Nextafter32(float32(m-(nucleusNear+1)/invT), float32(math.Inf(-1)))
	near, inNear := s.idx[:0], 0.0
	for t, l := range adj {
		if l >= cut && s.w[t] > 0 {
			near = append(near, int32(t))
			if nucleusBucket(l, m, invT) < nearBuckets {
				inNear += float64(s.w[t])
			}
		}
	}
	mass, idx := topP*total, near
	if inNear < mass { // a nucleus reaching into the tail: every token
		idx = idx[:0]
		for t, w := range s.w[:len(adj)] {
			if w > 0 {
				idx = append(idx, int32(t))
			}
		}
	}
	s.idx = idx[:0]
	return nucleus(idx, adj, s.w, m, invT, mass)
}

// pickBlock is how many weights pick adds up at a time.
const pickBlock = 64

// pick returns the first index t at which the running sum of w passes u,
// never one of weight 0 (a banned token); the last of positive weight if
// rounding left u at or past the whole sum. It adds each block of
// pickBlock weights in four independent sums, one add chain a quarter as
// long as the weights', and walks one by one only inside the block that
// holds u: over Qwen3's 151,936 weights a draw went through half of them
// one add at a time.
func pick(w []float32, u float64) int {
	acc, b := 0.0, 0
	for ; b+pickBlock <= len(w); b += pickBlock {
		var s0, s1, s2, s3 float64
		for i := b; i < b+pickBlock; i += 4 {
			v := w[i : i+4 : i+4]
			s0 += float64(v[0])
			s1 += float64(v[1])
			s2 += float64(v[2])
			s3 += float64(v[3])
		}
		if s := (s0 + s1) + (s2 + s3); u < acc+s {
			break
		} else {
			acc += s
		}
	}
	for t := b; t < len(w); t++ {
		if w[t] > 0 {
			acc += float64(w[t])
			if u < acc {
				return t
			}
		}
	}
	for t := len(w) - 1; t > 0; t-- {
		if w[t] > 0 {
			return t
		}
	}
	return 0
}
