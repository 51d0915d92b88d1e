package spec

// Hybrid proposes per sequence from whichever source has been predicting
// it better: n-gram lookup (free) or the draft model. Each source keeps its
// own decayed acceptance estimate per sequence, updated only when used; the
// n-gram source is tried first when its estimate is at least the draft's
// and it finds a match, so a draft model runs only where lookup fails or
// does worse. With no draft model it is plain n-gram lookup.
type Hybrid struct {
	Ngram Ngram
	Draft *DraftModel // nil: n-gram only

	seqs    map[uint64]*hybridSeq
	toDraft []Want
	index   []int
}

type hybridSeq struct {
	ngram, draft AdaptiveK
	lastDraft    bool // the last proposal came from the draft model
}

// NewHybrid returns a Hybrid over draft (which may be nil).
func NewHybrid(ngram Ngram, draft *DraftModel) *Hybrid {
	return &Hybrid{Ngram: ngram, Draft: draft, seqs: make(map[uint64]*hybridSeq)}
}

// Propose fills the wants, batching all draft-model work into one call.
func (h *Hybrid) Propose(wants []Want) error {
	h.toDraft, h.index = h.toDraft[:0], h.index[:0]
	for i := range wants {
		w := &wants[i]
		st := h.seq(w.Seq)
		if h.Draft == nil || st.ngram.Rate() >= st.draft.Rate() {
			w.Draft = h.Ngram.Lookup(w.Tokens, w.K, w.Draft)
			if len(w.Draft) > 0 || h.Draft == nil {
				st.lastDraft = false
				continue
			}
		}
		st.lastDraft = true
		h.toDraft = append(h.toDraft, *w)
		h.index = append(h.index, i)
	}
	if len(h.toDraft) == 0 {
		return nil
	}
	if err := h.Draft.Propose(h.toDraft); err != nil {
		return err
	}
	for j, i := range h.index {
		wants[i].Draft = h.toDraft[j].Draft
	}
	clear(h.toDraft) // drop references to the callers' token slices
	return nil
}

// Observe credits the source of seq's last proposal.
func (h *Hybrid) Observe(seq uint64, proposed, accepted int) {
	st := h.seq(seq)
	if st.lastDraft {
		st.draft.Observe(proposed, accepted)
	} else {
		st.ngram.Observe(proposed, accepted)
	}
}

// Release forgets a finished sequence and frees its draft cache.
func (h *Hybrid) Release(seq uint64) {
	delete(h.seqs, seq)
	if h.Draft != nil {
		h.Draft.Release(seq)
	}
}

func (h *Hybrid) seq(id uint64) *hybridSeq {
	st, ok := h.seqs[id]
	if !ok {
		st = &hybridSeq{}
		h.seqs[id] = st
	}
	return st
}
