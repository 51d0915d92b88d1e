package engine

import (
	"cmp"
	"errors"
	"fmt"
	"slices"

	"github.com/splash-inference/splash/engine/kvcache"
	"github.com/splash-inference/splash/engine/spec"
	"github.com/splash-inference/splash/engine/stop"
)

// Scheduler is the batching state machine. See the package doc. It is not
// safe for concurrent use.
type Scheduler struct {
	cfg      Config
	kv       *kvcache.Manager
	proposer spec.Proposer

	seqs    map[uint64]*sequence
	waiting []*sequence   // by arrival
	warming []*sequence   // Config.WarmAnswers' sequences not yet admitted, oldest first
	warmed  uint64        // warming sequences made so far
	running []*sequence   // by arrival
	order   []*sequence   // Schedule's snapshot of running
	wants   []prefillWant // Schedule's scratch: the prompts wanting a chunk
	arrival uint64
	step    uint64
	plan    Plan
	outs    []Output
	cost    spec.StepCost  // learned from timed decode steps (StepResult.Elapsed)
	peers   spec.AdaptiveK // every sequence's verifications: a new one's prior

	preemptions int64
}

// New returns a Scheduler with an empty block pool. proposer, when not nil,
// is called inside Schedule to fill the verify rows' drafts: use it for
// cheap proposers such as spec.Ngram. A proposer that runs a model (a
// spec.DraftModel or spec.Hybrid) belongs to the caller instead, which
// fills drafts between Schedule and Batch through Plan.Wants and
// Plan.SetDrafts, so that no forward pass runs inside the scheduler. If the
// proposer is also a spec.Observer or spec.Releaser, the scheduler reports
// verification outcomes and finished sequences to it.
func New(cfg Config, proposer spec.Proposer) (*Scheduler, error) {
	c, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	kv, err := kvcache.New(kvcache.Config{NumBlocks: c.NumBlocks, BlockSize: c.BlockSize, StateSlots: c.StateSlots,
		Snapshots: c.StateSnapshots, SnapshotEvery: c.StateSnapshotEvery, Spares: c.spares() > 0})
	if err != nil {
		return nil, fmt.Errorf("engine: %w", err)
	}
	return &Scheduler{cfg: c, kv: kv, proposer: proposer, seqs: make(map[uint64]*sequence), peers: spec.AdaptiveK{Max: c.MaxDraft}}, nil
}

// Config returns the configuration with defaults filled in.
func (s *Scheduler) Config() Config { return s.cfg }

// Add queues a request. Its ID must not belong to a live sequence.
func (s *Scheduler) Add(r Request) error {
	if _, dup := s.seqs[r.ID]; dup {
		return fmt.Errorf("engine: request %d is already scheduled", r.ID)
	}
	if len(r.Prompt) == 0 {
		return fmt.Errorf("engine: request %d has an empty prompt", r.ID)
	}
	if len(r.Prompt) >= s.cfg.MaxModelLen {
		return fmt.Errorf("engine: request %d: prompt of %d tokens leaves no room in the %d-token context", r.ID, len(r.Prompt), s.cfg.MaxModelLen)
	}
	if r.MaxTokens < 0 {
		return fmt.Errorf("engine: request %d: negative max tokens %d", r.ID, r.MaxTokens)
	}
	if err := checkImages(r.Images, len(r.Prompt)); err != nil {
		return fmt.Errorf("engine: request %d: %w", r.ID, err)
	}
	maxDraft := s.cfg.MaxDraft
	if r.NoDraft {
		maxDraft = 0
	}
	q := &sequence{
		id:           r.ID,
		arrival:      s.arrival,
		tokens:       slices.Clone(r.Prompt),
		promptLen:    len(r.Prompt),
		cond:         stop.Conditions{StopTokens: slices.Clone(r.StopTokens), MaxTokens: r.MaxTokens, MaxContext: s.cfg.MaxModelLen},
		draftK:       spec.AdaptiveK{Max: maxDraft},
		wantPrompt:   r.PromptLogprobs,
		cachedPrompt: -1,
		images:       slices.Clone(r.Images),
		spans:        imageSpans(r.Images),
	}
	if len(r.Images) > 0 {
		q.keys = CacheKeys(r.Prompt, r.Images)
	}
	q.draftK.Inherit(&s.peers)
	s.arrival++
	s.seqs[r.ID] = q
	s.waiting = append(s.waiting, q)
	return nil
}

// Cancel ends a sequence in any state with the given reason (stop.Cancelled
// for a client that left, stop.Stop for a stop string found in its text)
// and frees its blocks at once. A row of it in the outstanding plan is
// ignored by Update. It reports whether the sequence was live.
func (s *Scheduler) Cancel(id uint64, reason stop.Reason) bool {
	q, ok := s.seqs[id]
	if !ok {
		return false
	}
	s.finish(q, reason)
	return true
}

// State returns a live sequence's state, or Finished for an unknown id.
func (s *Scheduler) State(id uint64) SeqState {
	if q, ok := s.seqs[id]; ok {
		return q.state
	}
	return Finished
}

// Idle reports whether no sequence is waiting or running.
func (s *Scheduler) Idle() bool { return len(s.seqs) == 0 }

// Stats is a snapshot of the scheduler and its block pool.
type Stats struct {
	Waiting, Running int
	Preemptions      int64
	KV               kvcache.Stats
}

// Stats returns a snapshot.
func (s *Scheduler) Stats() Stats {
	return Stats{Waiting: len(s.waiting), Running: len(s.running), Preemptions: s.preemptions, KV: s.kv.Stats()}
}

// Check verifies the block pool against every live sequence's table and
// the queues' consistency; with no live sequences it is a leak check.
func (s *Scheduler) Check() error {
	live := make([]*kvcache.Blocks, 0, len(s.running))
	var errs []error
	for _, q := range s.running {
		live = append(live, &q.blocks)
		if q.state != Prefilling && q.state != Decoding {
			errs = append(errs, fmt.Errorf("engine: running sequence %d is %v", q.id, q.state))
		}
	}
	for _, q := range s.waiting {
		if q.blocks.Len() != 0 || q.state != Waiting {
			errs = append(errs, fmt.Errorf("engine: waiting sequence %d is %v with %d blocks", q.id, q.state, q.blocks.Len()))
		}
	}
	for _, q := range s.warming {
		if q.blocks.Len() != 0 || q.state != Waiting || !q.warm {
			errs = append(errs, fmt.Errorf("engine: warming sequence %d is %v with %d blocks", q.id, q.state, q.blocks.Len()))
		}
	}
	if len(s.waiting)+len(s.warming)+len(s.running) != len(s.seqs) {
		errs = append(errs, fmt.Errorf("engine: %d waiting + %d warming + %d running but %d live", len(s.waiting), len(s.warming), len(s.running), len(s.seqs)))
	}
	if err := s.kv.Check(live...); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// Schedule decides the next step. The plan is empty when there is nothing
// to run. See the package doc for the policy.
func (s *Scheduler) Schedule() *Plan {
	s.step++
	p := &s.plan
	p.reset(s.step)
	s.yieldWarming()
	// Iterate over a snapshot: fit may preempt sequences out of s.running.
	s.order = append(s.order[:0], s.running...)
	budget := s.addDecodeRows(s.cfg.MaxBatchTokens)
	// Prompt chunks of running sequences, within what is left of the
	// budget and, when the step decodes, of MaxPrefillWithDecode.
	pb := s.prefillBudget(budget, len(s.plan.Rows) > 0)
	s.addPromptChunks(&pb)
	clear(s.order) // hold no sequence past its step
	s.admitWaiting(&pb)
	s.finishPlan(p)
	return p
}

// addDecodeRows adds the decode rows of the running sequences in s.order
// that need just their last token (or, for a model with state layers,
// the tokens a rejected verify left to recompute, decodeTokens), each with
// room for drafts, within budget tokens, and returns what is left of it.
// Each gets its own tokens before any gets drafts.
func (s *Scheduler) addDecodeRows(budget int) int {
	p := &s.plan
	decoding := 0
	for _, q := range s.running {
		decoding += s.decodeTokens(q)
	}
	draftBudget := max(budget-decoding, 0)
	cost := s.draftCost(decoding)
	for _, q := range s.order {
		if budget <= 0 {
			break
		}
		n := s.decodeTokens(q)
		if q.state == Waiting || q.state == Finished || n == 0 { // (preempted or, warming, dropped by an older one's fit)
			continue
		}
		k := q.draftK.Next(cost)
		if s.cfg.FixedDraft {
			k = s.cfg.MaxDraft
		}
		k = min(k, draftBudget, q.draftRoom(), s.stateDraftRoom(n))
		if k > 0 && s.kv.Allocate(&q.blocks, q.computed+n+k) != nil {
			k = 0 // speculation never preempts anyone
		}
		if !s.fit(q, q.computed+n) {
			continue
		}
		draftBudget -= k
		budget -= n + k
		s.addRow(PlanRow{Seq: q.id, Kind: DecodeRow, Start: q.computed, Tokens: q.tokens[q.computed:len(q.tokens):len(q.tokens)], MaxDraft: k}, q)
	}
	// The decode rows go to the model by block table, not by arrival, so
	// that sequences sharing a prompt prefix (the prefix cache's blocks:
	// agents with one system prompt) sit side by side, where attention
	// reads the shared positions once for a run of them (a backend's
	// shared-prefix runs take consecutive rows only). Rows are computed
	// independently, so the order changes no result.
	slices.SortStableFunc(p.Rows, func(a, b PlanRow) int { return slices.Compare(a.Blocks, b.Blocks) })
	return budget
}

// addPromptChunks adds a prompt chunk of each running sequence in s.order
// that has more than its last token to compute, within pb.
func (s *Scheduler) addPromptChunks(pb *prefillBudget) {
	// A running prompt leaves aside what the short prompts after it want
	// (younger running ones, and the first waiting one if it can be
	// admitted, past its cached prefix: those shorter than it, of at most
	// MaxBatchTokens, such as an agent's next turn), up to half of what is
	// left: otherwise one long prompt holds up the first token of every
	// request that comes while it prefills. Long prompts are still served
	// oldest first, since sharing between them only delays the first
	// one's first token; and the oldest gets at least half, so nobody
	// starves.
	wants := s.wants[:0]
	for _, q := range s.order {
		if (q.state == Prefilling || q.state == Decoding) && (q.pending() > 1 || q.warm) && q.scheduledAt != s.step {
			wants = append(wants, prefillWant{q, pb.need(q.computed, q.pending())})
		}
	}
	if len(s.waiting) > 0 && len(s.running) < s.cfg.MaxRunning && s.kv.NumFree() > 0 && s.kv.FreeSlots() > 0 {
		q := s.waiting[0]
		hit := s.kv.Lookup(s.cachedTokens(q))
		wants = append(wants, prefillWant{nil, pb.need(hit, len(q.tokens)-hit)})
	}
	s.wants = wants
	for i, w := range wants {
		if pb.spent() {
			break
		}
		q := w.q
		if q == nil || q.state == Waiting || q.state == Finished {
			continue // the waiting one, or preempted (or, warming, dropped) by an older prompt's fit
		}
		var later prefillNeed
		for _, o := range wants[i+1:] {
			if o.need.cost < w.need.cost && o.need.tokens <= s.cfg.MaxBatchTokens && (o.q == nil || o.q.state == Prefilling || o.q.state == Decoding) {
				later = later.plus(o.need)
			}
		}
		chunk := s.stateCut(q, q.computed, s.warmCap(q, pb.chunk(q.computed, q.pending(), later)), !pb.taken)
		if chunk == 0 || !s.fit(q, q.computed+chunk) {
			continue
		}
		start := q.computed
		pb.take(start, s.addChunk(q, chunk))
	}
	clear(s.wants) // hold no sequence past its step
}

// yieldWarming drops running warming sequences (Config.WarmAnswers)
// while a request waits for a running place or a state slot: they are
// nobody's request, and the answer's prompt keeps its snapshot.
func (s *Scheduler) yieldWarming() {
	for len(s.waiting) > 0 && (len(s.running) >= s.cfg.MaxRunning || s.kv.FreeSlots() == 0) {
		i := slices.IndexFunc(s.running, func(q *sequence) bool { return q.warm })
		if i < 0 {
			return
		}
		s.finish(s.running[i], stop.Cancelled)
	}
}

// admitWaiting admits waiting sequences, oldest first, each with a first
// chunk within pb; it stops at the first that does not fit. When none is
// left waiting, the warming sequences (Config.WarmAnswers) come next.
func (s *Scheduler) admitWaiting(pb *prefillBudget) {
	if s.admitFrom(&s.waiting, pb) {
		s.admitFrom(&s.warming, pb)
	}
}

// admitFrom admits the sequences of queue in order, as admitWaiting, and
// reports whether it emptied the queue.
func (s *Scheduler) admitFrom(queue *[]*sequence, pb *prefillBudget) bool {
	for len(*queue) > 0 && !pb.spent() && len(s.running) < s.cfg.MaxRunning {
		q := (*queue)[0]
		cached := s.cachedTokens(q)
		// What is left of a cap may not pay for one token at the depth of
		// its cached prefix: then it waits for the next step.
		// (Looked up again: the chunks above may have evicted cached blocks.)
		hit := s.kv.Lookup(cached)
		if q.warm && hit < q.warmFrom {
			s.finish(q, stop.Cancelled) // its prompt's snapshot is gone (finish takes it off the queue)
			continue
		}
		chunk := s.stateCut(q, hit, s.warmCap(q, pb.chunk(hit, len(q.tokens), prefillNeed{})), !pb.taken)
		if chunk == 0 {
			break
		}
		admit := s.kv.Admit
		if q.warm {
			admit = s.kv.AdmitUncounted // no request's hit
		}
		hit, err := admit(&q.blocks, cached, func(hit int) int { return min(len(q.tokens), hit+chunk) })
		if errors.Is(err, kvcache.ErrOutOfBlocks) || errors.Is(err, kvcache.ErrOutOfSlots) {
			break // it waits for a running sequence to finish or be preempted
		} else if err != nil {
			panic(err) // waiting sequences hold no blocks: a scheduler bug
		}
		q.computed = hit
		if q.cachedPrompt < 0 {
			q.cachedPrompt = min(hit, q.promptLen)
		}
		chunk = min(chunk, q.pending())
		*queue = (*queue)[1:]
		s.insertRunning(q)
		pb.take(hit, s.addChunk(q, chunk))
	}
	return len(*queue) == 0
}

// finishPlan makes the step's block copies part of the plan, gives the
// decode rows their draft slices and, with a proposer of its own, fills
// them.
func (s *Scheduler) finishPlan(p *Plan) {
	p.copies = s.kv.TakeCopies(p.copies[:0]) // after the last allocation of the step
	p.stateCopies = p.stateCopies[:0]
	if len(p.Rows) > 0 {
		p.stateCopies = s.kv.TakeStateCopies(p.stateCopies) // only a step that runs may make them
	}
	p.reserveDrafts()
	if s.proposer != nil {
		if err := s.proposer.Propose(p.Wants()); err == nil {
			p.SetDrafts(p.wants)
		}
		// A failed proposal only costs speculation: the rows stay plain decodes.
	}
}

// decodeTokens is how many tokens q's decode row feeds: 1 when it needs
// just its last token, and for a model with state layers, after a verify
// pass whose drafts were partly rejected (its state went back to the one
// saved before the pass, kvcache's Settle), the accepted tokens to
// recompute followed by the new one, in one short row (at most
// StateShortRows tokens with a StateChunk: the bits of one call a token,
// like the decode steps that first computed them). 0: q needs a prompt
// chunk instead.
func (s *Scheduler) decodeTokens(q *sequence) int {
	n := q.pending()
	switch {
	case q.warm:
		return 0 // its last token too is a prompt's
	case n == 1:
		return 1
	case n > 1 && s.cfg.StateSlots > 0 && q.computed >= q.promptLen && n <= s.shortRows():
		return n
	}
	return 0
}

// shortRows is the longest row of generated tokens a model with state
// layers computes as it would one token a call: StateShortRows (at least
// 1) when the model has a StateChunk, else any.
func (s *Scheduler) shortRows() int {
	if s.cfg.StateChunk == 0 {
		return s.cfg.MaxModelLen
	}
	return max(s.cfg.StateShortRows, 1)
}

// stateDraftRoom bounds the drafts of a decode row of n tokens of a model
// with state layers to what keeps the row short (shortRows), so that a
// verify pass gives each position the bits of decoding it alone.
func (s *Scheduler) stateDraftRoom(n int) int {
	if s.cfg.StateSlots == 0 {
		return s.cfg.MaxDraft
	}
	return max(s.shortRows()-n, 0)
}

// draftCost is what one verified draft token costs relative to a decode
// row's share of a step with rows decode rows: Config.DraftCost when set,
// else learned from the timed steps.
func (s *Scheduler) draftCost(rows int) float64 {
	if s.cfg.DraftCost > 0 {
		return s.cfg.DraftCost
	}
	return s.cost.Cost(rows)
}

// cachedTokens is what of q's tokens a prefix hit may cover
// (sequence.cachedTokens); for a model with state layers no further than
// its prompt's end, since q decoded the positions after it one at a time,
// which a snapshot there from another sequence's prompt chunks does not
// reproduce bit for bit.
func (s *Scheduler) cachedTokens(q *sequence) []int32 {
	t := q.cachedTokens()
	if s.cfg.StateSlots > 0 && len(t) > q.promptLen+1 {
		t = t[:q.promptLen+1] // a hit never covers the last token
	}
	return t
}

// stateCut cuts a chunk of n tokens of q from position start where a
// model with state layers computes the same bits however the sequence is
// chunked (Config.StateChunk): prompt chunks end at a multiple of
// StateChunk or at the prompt's end, and generated tokens being
// recomputed go StateShortRows at a time, as short calls, like the decode
// steps that first computed them. With snapshots, prompt chunks also end
// at the multiples of StateSnapshotEvery. When the budget does not reach
// the next cut, the step's first chunk runs to it anyway (the step
// overshoots its budget by less than StateChunk tokens, so a prompt always
// moves) and a later one waits.
func (s *Scheduler) stateCut(q *sequence, start, n int, first bool) int {
	c := s.cfg.StateChunk
	switch {
	case c == 0 || n <= 0:
		return n
	case start >= q.promptLen:
		return min(n, s.shortRows())
	}
	if e := s.cfg.StateSnapshotEvery; s.cfg.StateSnapshots > 0 {
		n = min(n, (start/e+1)*e-start) // each interval's end is a chunk's, and gets a snapshot
		if last := s.lastCut(q); start < last {
			n = min(n, last-start) // and so is the prompt's last chunk boundary
		}
	}
	if start+n >= q.promptLen {
		return q.promptLen - start
	}
	if end := (start + n) / c * c; end > start {
		return end - start
	}
	if !first {
		return 0
	}
	return min(q.promptLen, (start/c+1)*c) - start
}

// addChunk adds a prefill row of the next chunk tokens of q, or fewer (a
// preempted prompt-logprobs request recomputes the positions it already
// reported in a chunk of their own, without logits), and returns its size.
func (s *Scheduler) addChunk(q *sequence, chunk int) int {
	if q.wantPrompt && q.computed < q.promptDone {
		chunk = min(chunk, q.promptDone-q.computed)
	}
	end := q.computed + chunk
	r := PlanRow{Seq: q.id, Kind: PrefillRow, Start: q.computed, Tokens: q.tokens[q.computed:end:end], Warm: q.warm}
	if end == len(q.tokens) && !q.warm {
		r.CompletesSequence, r.Logits = true, 1
	}
	if q.wantPrompt && q.computed >= q.promptDone && q.computed < q.promptLen {
		r.Logits, r.PromptLogits = chunk, true // logits for every position: prompt logprobs
	}
	q.state = Prefilling
	s.addRow(r, q)
	return chunk
}

func (s *Scheduler) addRow(r PlanRow, q *sequence) {
	if r.Kind == DecodeRow {
		q.state = Decoding
	}
	r.Blocks, r.State, r.spare, r.seq = q.blocks.Table(), q.blocks.Slot(), q.blocks.Spare(), q
	q.scheduledAt = s.step
	s.plan.Rows = append(s.plan.Rows, r)
}

// fit allocates blocks so q covers n tokens, preempting the youngest
// running sequences not yet in this step's plan until it succeeds. When q
// itself is the youngest left, q is preempted and fit reports false. Since
// Config keeps a whole context within the pool, the oldest sequence always
// fits once the younger ones are gone: that is why nothing starves.
func (s *Scheduler) fit(q *sequence, n int) bool {
	for s.kv.Allocate(&q.blocks, n) != nil {
		victim := s.youngestUnscheduled() // q at worst: it is running and not yet scheduled
		s.preempt(victim)
		if victim == q {
			return false
		}
	}
	return true
}

func (s *Scheduler) youngestUnscheduled() *sequence {
	for i := len(s.running) - 1; i >= 0; i-- {
		if q := s.running[i]; q.scheduledAt != s.step {
			return q
		}
	}
	return nil
}

// preempt frees q's blocks (and state slot) and requeues it at its arrival position; its
// tokens, generated ones included, are recomputed when it is readmitted.
// A warming sequence is dropped instead: it is nobody's request.
func (s *Scheduler) preempt(q *sequence) {
	if q.warm {
		s.finish(q, stop.Cancelled)
		return
	}
	s.kv.Free(&q.blocks)
	q.computed = 0
	q.state = Waiting
	q.preemptions++
	s.preemptions++
	s.running = slices.DeleteFunc(s.running, func(x *sequence) bool { return x == q })
	at, _ := slices.BinarySearchFunc(s.waiting, q.arrival, byArrival)
	s.waiting = slices.Insert(s.waiting, at, q)
}

func (s *Scheduler) insertRunning(q *sequence) {
	at, _ := slices.BinarySearchFunc(s.running, q.arrival, byArrival)
	s.running = slices.Insert(s.running, at, q)
}

// finish ends q: commits what it computed for later prefix hits, frees its
// blocks and forgets it; with Config.WarmAnswers, a request that was not
// cancelled leaves its answer to warm.
func (s *Scheduler) finish(q *sequence, reason stop.Reason) {
	if q.state == Finished {
		return
	}
	is := func(x *sequence) bool { return x == q }
	switch {
	case q.state != Waiting:
		s.running = slices.DeleteFunc(s.running, is)
	case q.warm:
		s.warming = slices.DeleteFunc(s.warming, is)
	default:
		s.waiting = slices.DeleteFunc(s.waiting, is)
	}
	if !q.warm && reason != stop.Cancelled {
		s.queueWarm(q)
	}
	s.kv.Free(&q.blocks)
	q.state, q.reason = Finished, reason
	delete(s.seqs, q.id)
	if r, ok := s.proposer.(spec.Releaser); ok {
		r.Release(q.id)
	}
}

// warmIDs is the id space of warming sequences (Config.WarmAnswers): the
// top bit set, apart from any request's id.
const warmIDs = 1 << 63

// queueWarm queues a warming sequence for q's tokens up to their last
// chunk boundary (Config.WarmAnswers), when that lies past its prompt's
// (lastCut), where a snapshot can already be: it runs as a prompt from the
// deepest snapshot, cut like one, so the snapshot it leaves at its end
// (Update) holds the bits a prompt with those tokens computes, which a
// later turn resumes from. Only the newest MaxRunning wait; older ones
// are dropped.
func (s *Scheduler) queueWarm(q *sequence) {
	c := s.cfg.StateChunk
	if !s.cfg.WarmAnswers || s.cfg.StateSnapshots == 0 || c == 0 {
		return
	}
	end := len(q.tokens) / c * c
	if end <= s.lastCut(q) || end%s.cfg.BlockSize != 0 || end >= s.cfg.MaxModelLen {
		return
	}
	w := &sequence{id: warmIDs | s.warmed, arrival: s.arrival, tokens: slices.Clone(q.tokens[:end]), promptLen: end,
		cond: stop.Conditions{MaxContext: s.cfg.MaxModelLen}, cachedPrompt: -1, warm: true, warmFrom: s.lastCut(q)}
	if q.images != nil { // its images (all in the prompt, before end) and their keys
		w.images, w.spans, w.keys = q.images, imageSpans(q.images), slices.Clone(q.keys[:end])
	}
	s.warmed++
	s.arrival++
	s.seqs[w.id] = w
	s.warming = append(s.warming, w)
	if len(s.warming) > s.cfg.MaxRunning {
		s.finish(s.warming[0], stop.Cancelled)
	}
}

// warmCap caps a chunk of n tokens of a warming sequence to one
// StateChunk in a step that decodes: nobody waits for the warming, and
// the streams running should not wait for it either.
func (s *Scheduler) warmCap(q *sequence, n int) int {
	if q.warm && s.plan.hasDecodeRows() {
		return min(n, s.cfg.StateChunk)
	}
	return n
}

// lastCut is the last multiple of Config.StateChunk in q's prompt: the
// deepest position whose state q's prompt chunks compute as any prompt
// with those tokens does (0 without a StateChunk).
func (s *Scheduler) lastCut(q *sequence) int {
	if c := s.cfg.StateChunk; c > 0 {
		return q.promptLen / c * c
	}
	return 0
}

func byArrival(x *sequence, arrival uint64) int { return cmp.Compare(x.arrival, arrival) }
