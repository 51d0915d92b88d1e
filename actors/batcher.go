package actors

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/splash-inference/splash/engine"
	"github.com/splash-inference/splash/engine/sample"
	"github.com/splash-inference/splash/engine/spec"
	"github.com/splash-inference/splash/engine/stop"
	"github.com/splash-inference/splash/model"
)

// verifyTimeout bounds one forward pass; a crash is reported at once by
// childFailed, so this only guards against a pass that never returns.
const verifyTimeout = 10 * time.Minute

// BatcherActor owns the scheduler and runs the step loop (see package doc).
type BatcherActor struct {
	sched         *engine.Scheduler
	decider       engine.Decider
	metrics       *metricsBox
	entropy       rand.Source
	verifierProps *actor.Props
	verifier      *actor.PID
	draftProps    *actor.Props // nil without draft-model speculation
	draft         *actor.PID
	// features, for DFlash speculation, captures the target's hidden
	// states in every pass; finishStep sends the committed ones to the
	// draft actor.
	features *model.FeatureCapture
	disk     *diskReads // nil without a disk tier (disktier.go)

	live     map[uint64]*liveRequest
	stepping bool   // a Verify is outstanding
	step     uint64 // the step in flight; replies for other steps are stale
	plan     *engine.Plan
	started  time.Time
}

// liveRequest is what the batcher keeps per scheduled request.
type liveRequest struct {
	reply    *actor.PID
	sampler  *sample.Sampler
	params   sample.Params // the sampler's, for a proposer that samples (spec.Want.Sampling)
	prompt   []int32
	mask     TokenMask       // nil: unconstrained
	promptLP []TokenLogprobs // prompt logprobs gathered over the prefill chunks
	first    bool            // no TokensGenerated sent yet
	trace    bool            // Submit.SpecTrace
	step     *SpecStep       // the step being reported, when traced
}

func (b *BatcherActor) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *actor.Started:
		b.live = map[uint64]*liveRequest{}
		b.verifier = ctx.Spawn(b.verifierProps)
		if b.draftProps != nil {
			b.draft = ctx.Spawn(b.draftProps)
		}
	case *actor.Stopped:
		if b.disk != nil {
			b.disk.save(b.sched.KV())
		}
	case *Submit:
		b.submit(ctx, m)
	case *Cancel:
		if b.sched.Cancel(m.ID, m.Reason) {
			delete(b.live, m.ID)
			b.release(ctx, m.ID)
		} else {
			b.cancelRead(m.ID)
		}
		b.metrics.observe(b.sched.Stats())
	case *diskRead:
		b.diskReadDone(ctx, m)
	case *stepNow:
		b.runStep(ctx)
	case *CheckPool:
		ctx.Respond(&PoolChecked{Err: b.sched.Check(), Idle: b.sched.Idle() && !b.stepping})
	case *childFailed:
		if b.stepping {
			b.abortStep(ctx, fmt.Errorf("actors: the forward pass failed: %v", m.Reason))
		}
	case *actor.Restarting:
		// This batcher panicked: its scheduler's state is unknown, so every
		// request it held ends with an error; the new instance starts empty.
		for id, lr := range b.live {
			ctx.Send(lr.reply, &Failed{Err: fmt.Errorf("actors: the batcher restarted; request %d was lost", id)})
		}
	}
}

func (b *BatcherActor) submit(ctx actor.Context, m *Submit) {
	// A masked request samples one position at a time (the mask follows
	// the accepted tokens), so it gets no drafts: none is proposed for it
	// or reserved room in the batch.
	m.Req.NoDraft = m.Req.NoDraft || m.Mask != nil
	if b.readFromDisk(ctx, m) {
		return // added once its prefix is read back
	}
	b.add(ctx, m)
}

// add schedules a submitted request.
func (b *BatcherActor) add(ctx actor.Context, m *Submit) {
	s, err := sample.New(m.Sampling, rand.NewPCG(rand.New(b.entropy).Uint64(), m.Req.ID))
	if err == nil {
		err = b.sched.Add(m.Req)
	}
	if err != nil {
		ctx.Send(m.Reply, &Failed{Err: err})
		return
	}
	s.SetPrompt(m.Req.Prompt)
	b.live[m.Req.ID] = &liveRequest{reply: m.Reply, sampler: s, prompt: m.Req.Prompt, mask: m.Mask, first: true, trace: m.SpecTrace, params: s.Params()}
	b.metrics.promptTokens.Add(int64(len(m.Req.Prompt)))
	if !b.stepping {
		ctx.Send(ctx.Self(), &stepNow{})
	}
}

// runStep schedules a step and hands its batch to the verifier.
func (b *BatcherActor) runStep(ctx actor.Context) {
	if b.stepping {
		return
	}
	b.applyReads(ctx)
	plan := b.sched.Schedule()
	b.metrics.observe(b.sched.Stats())
	if plan.Empty() {
		return // idle until the next Submit
	}
	for i := range plan.Rows {
		b.metrics.specProposed.Add(int64(len(plan.Rows[i].Draft)))
	}
	b.stepping, b.plan, b.started = true, plan, time.Now()
	b.step++
	step := b.step
	if b.draft == nil {
		b.verify(ctx, step)
		return
	}
	wants := plan.Wants()
	if len(wants) == 0 {
		b.verify(ctx, step)
		return
	}
	for i := range wants {
		if lr, ok := b.live[wants[i].Seq]; ok && lr.params.Temperature > 0 {
			wants[i].Sampling = &lr.params
		}
	}
	f := ctx.RequestFuture(b.draft, &Propose{Step: step, Wants: wants}, verifyTimeout)
	ctx.ReenterAfter(f, func(res any, err error) {
		if step != b.step || !b.stepping {
			return // aborted meanwhile
		}
		if p, ok := res.(*Proposed); ok && err == nil && p.Err == nil {
			plan.SetDrafts(wants)
			for i := range plan.Rows {
				b.metrics.specProposed.Add(int64(len(plan.Rows[i].Draft)))
			}
		}
		// A failed proposal only costs speculation: the rows stay plain decodes.
		b.verify(ctx, step)
	})
}

// verify hands the step's batch to the verifier.
func (b *BatcherActor) verify(ctx actor.Context, step uint64) {
	plan := b.plan // masked requests have no drafts: see submit
	batch := plan.Batch()
	if b.features != nil {
		batch.Features = b.features
		for i := range batch.Rows {
			batch.Rows[i].Capture = true
		}
	}
	f := ctx.RequestFuture(b.verifier, &Verify{Step: step, Batch: batch, Images: plan.EncodeImages}, verifyTimeout)
	ctx.ReenterAfter(f, func(res any, err error) {
		if step != b.step || !b.stepping {
			return // this step was aborted
		}
		v, _ := res.(*Verified)
		switch {
		case err != nil:
			b.abortStep(ctx, fmt.Errorf("actors: forward pass: %w", err))
		case v == nil:
			b.abortStep(ctx, fmt.Errorf("actors: unexpected verifier reply %T", res))
		case v.Err != nil:
			b.abortStep(ctx, v.Err)
		default:
			b.finishStep(ctx, v.Logits)
		}
	})
}

// release tells the draft actor a sequence ended.
func (b *BatcherActor) release(ctx actor.Context, id uint64) {
	if b.draft != nil {
		ctx.Send(b.draft, &Released{Seq: id})
	}
}

// finishStep samples and accepts tokens, updates the scheduler and tells
// each request what it gained.
func (b *BatcherActor) finishStep(ctx actor.Context, logits []float32) {
	plan := b.plan
	b.applyMasks(plan, logits)
	res, err := b.decider.Decide(plan, logits, b.samplerOf)
	if err != nil {
		b.abortStep(ctx, err)
		return
	}
	res.Elapsed = time.Since(b.started) // proposals and forward pass: what drafts cost
	lps := b.logprobs(plan, res)
	outs, err := b.sched.Update(plan, res)
	if err != nil {
		b.abortStep(ctx, err)
		return
	}
	b.sendFeatures(ctx, plan, res)
	b.metrics.stepSeconds.observe(time.Since(b.started).Seconds())
	b.observeDecodeRows(plan, res)
	for _, o := range outs {
		lr, ok := b.live[o.ID]
		if !ok {
			continue
		}
		msg := &TokensGenerated{Tokens: o.Tokens, Reason: o.Reason, CachedTokens: o.CachedTokens, Spec: lr.step}
		lr.step = nil
		if l, ok := lps[o.ID]; ok {
			msg.Logprobs = l[:min(len(l), len(o.Tokens))]
		}
		if lr.first {
			msg.PromptLogprobs, lr.promptLP = lr.promptLP, nil
		}
		lr.first = false
		if lr.mask != nil {
			for _, t := range o.Tokens {
				lr.mask.Accept(t)
			}
		}
		b.metrics.generationTokens.Add(int64(len(o.Tokens)))
		ctx.Send(lr.reply, msg)
		if b.draft != nil && o.Drafted > 0 {
			ctx.Send(b.draft, &Observed{Seq: o.ID, Proposed: o.Drafted, Accepted: o.Accepted})
		}
		if o.Finished() {
			delete(b.live, o.ID)
			b.release(ctx, o.ID)
		}
	}
	b.stepping, b.plan = false, nil
	b.metrics.observe(b.sched.Stats())
	ctx.Send(ctx.Self(), &stepNow{})
}

// observeDecodeRows counts the step's accepted drafts and keeps the
// traced requests' SpecSteps for their TokensGenerated.
func (b *BatcherActor) observeDecodeRows(plan *engine.Plan, res engine.StepResult) {
	for i := range res.Rows {
		r := &plan.Rows[i]
		if r.Kind != engine.DecodeRow || len(res.Rows[i].Tokens) == 0 {
			continue
		}
		accepted := len(res.Rows[i].Tokens) - 1
		if len(r.Draft) > 0 {
			b.metrics.specAccepted.Add(int64(accepted))
			b.metrics.acceptLength.observe(float64(accepted + 1))
		}
		if lr, ok := b.live[r.Seq]; ok && lr.trace {
			lr.step = &SpecStep{Position: r.Start, Proposed: slices.Clone(r.Draft), Accepted: accepted}
		}
	}
}

// abortStep ends every request of the step in flight with err; the other
// requests keep their state and the loop goes on.
func (b *BatcherActor) abortStep(ctx actor.Context, err error) {
	plan := b.plan
	res := engine.StepResult{Rows: make([]engine.RowResult, len(plan.Rows))}
	for i := range plan.Rows {
		r := &plan.Rows[i]
		if lr, ok := b.live[r.Seq]; ok {
			ctx.Send(lr.reply, &Failed{Err: err})
			delete(b.live, r.Seq)
			b.release(ctx, r.Seq)
		}
		b.sched.Cancel(r.Seq, stop.Cancelled)
		// placeholder tokens of the right count: Update ignores cancelled rows
		if r.Kind == engine.DecodeRow || r.CompletesSequence {
			res.Rows[i].Tokens = []int32{0}
		}
	}
	if _, uerr := b.sched.Update(plan, res); uerr != nil {
		ctx.Logger().Error("actors: closing an aborted step", "error", uerr)
	}
	b.stepping, b.plan = false, nil
	b.step++ // a late reply for the aborted step is stale
	b.metrics.observe(b.sched.Stats())
	ctx.Send(ctx.Self(), &stepNow{})
}

func (b *BatcherActor) samplerOf(seq uint64) *sample.Sampler {
	if lr, ok := b.live[seq]; ok {
		return lr.sampler
	}
	// Cancelled while its step ran (a request leaves live only once the
	// scheduler has ended it): the Decider leaves its row empty, which
	// Update ignores.
	return nil
}

// applyMasks constrains, in place, the logits each masked request samples
// from: the last vector of a prefill row that completes its prompt, the
// single vector of its (draft-free) decode rows.
func (b *BatcherActor) applyMasks(plan *engine.Plan, logits []float32) {
	v := b.decider.Vocab
	off := 0
	for i := range plan.Rows {
		r := &plan.Rows[i]
		n := r.NumLogits()
		if lr, ok := b.live[r.Seq]; ok && lr.mask != nil && n > 0 &&
			(r.Kind == engine.DecodeRow || r.CompletesSequence) {
			last := off + n - 1
			lr.mask.Mask(logits[last*v : (last+1)*v])
		}
		off += n
	}
}

// sendFeatures gives the draft actor the step's committed features.
func (b *BatcherActor) sendFeatures(ctx actor.Context, plan *engine.Plan, res engine.StepResult) {
	if b.features != nil && b.draft != nil {
		w := len(b.features.Out) / max(b.features.Rows(), 1)
		ctx.Send(b.draft, &FeaturesCommitted{Features: committedFeatures(b.features.Out, w, plan, res)})
	}
}

// committedFeatures copies a step's features at the positions it
// committed: a prefill row's every position, a decode row's tokens (its
// last, after those a state model recomputes following rejected drafts)
// and its accepted drafts (the target's own token after them has not been
// run yet: it is the next block's anchor), none of a warming row's
// (engine.Config.WarmAnswers). out holds w floats per position the batch
// fed.
func committedFeatures(out []float32, w int, plan *engine.Plan, res engine.StepResult) []spec.Features {
	var fs []spec.Features
	off := 0
	for i := range plan.Rows {
		r := &plan.Rows[i]
		fed, keep := len(r.Tokens), len(r.Tokens)
		if r.Warm {
			keep = 0 // the scheduler's own recomputation: no draft follows that sequence
		} else if r.Kind == engine.DecodeRow {
			fed = len(r.Tokens) + len(r.Draft)
			keep = min(len(r.Tokens)-1+len(res.Rows[i].Tokens), fed)
		}
		if keep > 0 {
			ft := spec.Features{Seq: r.Seq, Start: r.Start, Rows: append([]float32(nil), out[off*w:(off+keep)*w]...)}
			if toks := r.SeqTokens(); r.Kind == engine.PrefillRow && len(toks) >= r.Start+keep {
				// the prompt's context is shared by prefix, and a prefix hit's taken from there
				ft.Tokens = append([]int32(nil), toks[:r.Start+keep]...)
			}
			fs = append(fs, ft)
		}
		off += fed
	}
	return fs
}
