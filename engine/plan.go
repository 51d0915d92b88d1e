package engine

import (
	"slices"

	"github.com/splash-inference/splash/engine/spec"
	"github.com/splash-inference/splash/metal"
	"github.com/splash-inference/splash/model"
)

// RowKind tells prompt chunks from decode and verify rows.
type RowKind uint8

const (
	// PrefillRow computes a run of known tokens (a prompt chunk, or a
	// preempted sequence's recomputation).
	PrefillRow RowKind = iota
	// DecodeRow feeds the last generated token, followed by Draft tokens
	// to verify when there are any.
	DecodeRow
)

// PlanRow is one row of a step; it maps 1:1 onto a model.Row.
type PlanRow struct {
	Seq    uint64
	Kind   RowKind
	Start  int     // position of Tokens[0]
	Tokens []int32 // the known tokens fed: a chunk, or a decode row's last token (after the tokens a state model recomputes, decodeTokens)
	// Logits of a prefill row: 0 for a chunk that does not reach the end of
	// the sequence's tokens, 1 for one that does, len(Tokens) for prompt
	// logprobs. A decode row always wants 1+len(Draft).
	Logits   int
	MaxDraft int     // room reserved for draft tokens (budget and blocks)
	Draft    []int32 // proposals to verify, at most MaxDraft
	// DraftProbs, when the proposer drew Draft from distributions
	// (spec.Want.Probs), holds them, one per Draft token; nil for
	// deterministic proposals.
	DraftProbs [][]float32
	Blocks     []int32 // the sequence's block table
	State      int32   // the sequence's state slot (model.Row.State); -1 for a model without state layers
	spare      int32   // the sequence's spare state slot (kvcache's Blocks.Spare); -1: none
	// CompletesSequence is set on a prefill row that reaches the end of the
	// sequence's tokens: its last logits give the next token.
	CompletesSequence bool
	// PromptLogits is set when the row has logits at every position for
	// the request's prompt logprobs.
	PromptLogits bool
	// Warm is set on the prompt chunks of the scheduler's own sequences
	// that recompute a finished answer's state (Config.WarmAnswers): no
	// request's, their ids are none the caller gave.
	Warm bool

	seq *sequence
}

// SeqTokens is the row's sequence's whole token list (prompt and
// accepted output), read-only; nil for a row the scheduler did not plan.
func (r *PlanRow) SeqTokens() []int32 {
	if r.seq == nil {
		return nil
	}
	return r.seq.tokens
}

// saved is the position whose state the row's batch saves in the
// sequence's spare slot before it runs (Batch: a verify row of a model
// with state layers saves the state at its start), or -1.
func (r *PlanRow) saved() int {
	if r.Kind == DecodeRow && len(r.Draft) > 0 && r.spare >= 0 {
		return r.Start
	}
	return -1
}

// NumLogits is how many logit vectors the row gets back from the model.
func (r *PlanRow) NumLogits() int {
	if r.Kind == DecodeRow {
		return 1 + len(r.Draft)
	}
	return r.Logits
}

// Plan is one step's work: rows in order, decode rows first. It belongs to
// the Scheduler and is valid until the next Schedule.
type Plan struct {
	Rows []PlanRow

	step   uint64
	wants  []spec.Want
	drafts []int32 // backing store for every row's Draft
	inputs []int32 // backing store for decode rows' model tokens
	copies []metal.BlockCopy
	// stateCopies are the state snapshots kept and restored (kvcache's
	// TakeStateCopies) that the batch makes first; batchCopies are them
	// followed by the verify rows' saves (PlanRow.saved).
	stateCopies, batchCopies []metal.StateCopy
	batch                    model.Batch
}

// Empty reports whether the plan has no rows (nothing to run).
func (p *Plan) Empty() bool { return len(p.Rows) == 0 }

// NumTokens is the number of tokens the batch feeds, drafts included.
func (p *Plan) NumTokens() int {
	n := 0
	for i := range p.Rows {
		n += len(p.Rows[i].Tokens) + len(p.Rows[i].Draft)
	}
	return n
}

// hasDecodeRows reports whether any row is a decode or verify row.
func (p *Plan) hasDecodeRows() bool {
	return slices.ContainsFunc(p.Rows, func(r PlanRow) bool { return r.Kind == DecodeRow })
}

// onlyDecodeRows reports whether every row is a decode or verify row.
func (p *Plan) onlyDecodeRows() bool {
	for i := range p.Rows {
		if p.Rows[i].Kind != DecodeRow {
			return false
		}
	}
	return len(p.Rows) > 0
}

// Wants returns one proposal request per row with room for drafts, for a
// spec.Proposer; pass them back to SetDrafts once filled. Tokens are the
// sequence's whole token list, read-only.
func (p *Plan) Wants() []spec.Want {
	p.wants = p.wants[:0]
	for i := range p.Rows {
		r := &p.Rows[i]
		if r.MaxDraft > 0 {
			p.wants = append(p.wants, spec.Want{Seq: r.Seq, Tokens: r.seq.tokens, K: r.MaxDraft, Draft: r.Draft[:0]})
		}
	}
	return p.wants
}

// SetDrafts stores filled wants' drafts in their rows, at most MaxDraft each.
func (p *Plan) SetDrafts(wants []spec.Want) {
	j := 0
	for i := range p.Rows {
		r := &p.Rows[i]
		if j < len(wants) && r.MaxDraft > 0 && wants[j].Seq == r.Seq {
			w := &wants[j]
			r.Draft = append(r.Draft[:0], w.Draft[:min(len(w.Draft), r.MaxDraft)]...)
			r.DraftProbs = nil
			if len(w.Probs) >= len(r.Draft) && len(r.Draft) > 0 {
				r.DraftProbs = w.Probs[:len(r.Draft)]
			}
			j++
		}
	}
}

// Batch returns the model batch for the plan. It is rebuilt on every call,
// so call it after the drafts are set; the returned batch is valid until the
// next Schedule. Its Copies (the prefix cache's partial-block hits of the
// sequences admitted in this step) and StateCopies (state snapshots kept
// and restored, then each verify row's state saved in its spare slot, for
// a model with state layers) must be made once, before the rows run, as
// model.Model.Forward does: run each batch once.
func (p *Plan) Batch() *model.Batch {
	need := 0
	for i := range p.Rows {
		if p.Rows[i].Kind == DecodeRow {
			need += 1 + len(p.Rows[i].Draft)
		}
	}
	if cap(p.inputs) < need {
		p.inputs = make([]int32, 0, need)
	}
	in := p.inputs[:0]
	rows := p.batch.Rows[:0]
	p.batchCopies = append(p.batchCopies[:0], p.stateCopies...)
	for i := range p.Rows {
		r := &p.Rows[i]
		mr := model.Row{Start: r.Start, Tokens: r.Tokens, Blocks: r.Blocks, State: r.State, Logits: r.NumLogits()}
		if r.seq != nil {
			mr.Images = r.seq.spans
		}
		if r.Kind == DecodeRow {
			start := len(in)
			in = append(in, r.Tokens...)
			in = append(in, r.Draft...)
			mr.Tokens = in[start:len(in):len(in)]
		}
		if r.saved() >= 0 {
			p.batchCopies = append(p.batchCopies, metal.StateCopy{Src: r.State, Dst: r.spare})
		}
		rows = append(rows, mr)
	}
	p.batch.Rows, p.batch.Copies, p.batch.StateCopies = rows, p.copies, p.batchCopies
	return &p.batch
}

// reset empties the plan for a new step, keeping its buffers.
func (p *Plan) reset(step uint64) {
	clear(p.Rows) // drop sequence pointers
	p.Rows, p.step = p.Rows[:0], step
}

// reserveDrafts gives each decode row its slice of the draft store once the
// rows are final (the store cannot move after that).
func (p *Plan) reserveDrafts() {
	need := 0
	for i := range p.Rows {
		need += p.Rows[i].MaxDraft
	}
	if cap(p.drafts) < need {
		p.drafts = make([]int32, need)
	}
	off := 0
	for i := range p.Rows {
		r := &p.Rows[i]
		r.Draft = p.drafts[off : off : off+r.MaxDraft]
		off += r.MaxDraft
	}
}
