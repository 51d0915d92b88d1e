package model

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/splash-inference/splash/metal"
)

// DFlashContext is new context for one sequence: the target's captured
// features (FeatureCapture.Out rows) at positions Start, Start+1, ….
type DFlashContext struct {
	Start    int
	Features []float32 // k·FeatureWidth() floats for k positions
	Blocks   []int32   // the sequence's block table, covering those positions
}

// DFlashBlock asks a proposal for one sequence: the draft evaluates
// [Anchor, MASK × (BlockSize−1)] at positions Start … Start+BlockSize−1.
// Anchor is the last committed token (the target's latest output), at
// position Start; the context must hold every position before Start.
type DFlashBlock struct {
	Start  int
	Anchor int32
	Blocks []int32 // covering positions 0 … Start+BlockSize−1
	// N is how many proposals are wanted (the first N masked positions
	// go through the lm_head, the block's cost beyond its layers); 0 or
	// more than BlockSize−1 means all.
	N int
	// Temperature and Rand, for a DFlash2 draft, make the candidate walk
	// sample: each step draws among its candidates from the softmax of
	// their scores divided by Temperature (see Walk). Zero or nil: the
	// greedy walk. A DFlash draft ignores them (its tokens are its logits'
	// arg max; its caller samples from Logits).
	Temperature float32
	Rand        *rand.Rand
}

// proposals is how many tokens b asks of a block of size B.
func (b *DFlashBlock) proposals(B int) int {
	if b.N <= 0 || b.N > B-1 {
		return B - 1
	}
	return b.N
}

// dflashRun is the scratch of the draft's passes, grown to the largest
// batch seen and reused.
type dflashRun struct {
	pos, slots, tokens []int32
	attnRows           []metal.AttnRow
	x, h, conv, coef   []float32
	q, k, v, att       []float32
	gate, up           []float32
	y, logits          []float32
	nLogits            int   // of the last Propose
	nw                 []int // proposals of each row of the last Propose
	// DFlash2's selector
	hp, vals, pred, succ []float32
	scores               []float32
	cand                 []int32
	walkIDs              []int32   // each wanted position's candidates (Walk)
	walkProbs            []float32 // and the probabilities the walk chose among them with
	products             [3]metal.Product
}

// AddContext fuses each row's features (fc, then hidden_norm) and writes
// every draft layer's keys (k_proj, k_norm, RoPE at the row's positions)
// and values (v_proj) for them into kv, the draft's cache. Positions
// already there are overwritten, so after a rejected proposal the caller
// adds the accepted positions' context and the stale block entries beyond
// them are replaced by the next block or context.
func (d *DFlashDraft) AddContext(rows []DFlashContext, kv *metal.KVCache) error {
	if err := d.checkKV(kv); err != nil {
		return err
	}
	lc, be, r := &d.cfg.Layers, d.be, &d.run
	fw, h := d.FeatureWidth(), lc.HiddenSize
	r.pos, r.slots = r.pos[:0], r.slots[:0]
	for ri, row := range rows {
		if len(row.Features) == 0 || len(row.Features)%fw != 0 {
			return fmt.Errorf("model: dflash context row %d has %d features, not a positive multiple of %d", ri, len(row.Features), fw)
		}
		if row.Start < 0 {
			return fmt.Errorf("model: dflash context row %d starts at negative position %d", ri, row.Start)
		}
		for j := range len(row.Features) / fw {
			slot, err := kv.Slot(row.Blocks, row.Start+j)
			if err != nil {
				return fmt.Errorf("model: dflash context row %d: %w", ri, err)
			}
			r.pos = append(r.pos, int32(row.Start+j))
			r.slots = append(r.slots, slot)
		}
	}
	n := len(r.pos)
	if n == 0 {
		return nil
	}
	grow(&r.x, n*h)
	grow(&r.k, n*lc.KVDim())
	grow(&r.v, n*lc.KVDim())
	x, k, v := r.x[:n*h], r.k[:n*lc.KVDim()], r.v[:n*lc.KVDim()]
	off := 0
	for _, row := range rows {
		m := len(row.Features) / fw
		be.MatMul(x[off*h:(off+m)*h], row.Features, m, d.fc)
		off += m
	}
	eps := float32(lc.RMSNormEps)
	be.RMSNorm(x, x, d.hidNorm, h, eps)
	for i := range d.layers {
		ly := &d.layers[i]
		d.products(x, n, metal.Product{Out: k, W: ly.wk}, metal.Product{Out: v, W: ly.wv})
		be.RMSNorm(k, k, ly.kNorm, lc.HeadDim, eps)
		be.RoPE(k, r.pos, lc.NumKeyValueHeads, lc.HeadDim, d.invFreq)
		be.WriteKV(&kv.Layers[i], k, v, r.slots)
	}
	return nil
}

// Propose runs one block pass over every row and writes each row's
// proposed tokens to out, BlockSize−1 places per row in row order, the
// first DFlashBlock.N of them filled and the rest −1. DFlash proposes the
// greedy token of each masked position (logits through the target's
// lm_head); DFlash2 takes each position's top selector_top_k tokens and
// walks them greedily by the candidate selector's pairwise scores.
// The block's keys and values are written into kv at its positions (they
// are the attention's keys); context added later overwrites them.
func (d *DFlashDraft) Propose(rows []DFlashBlock, kv *metal.KVCache, out []int32) error {
	if err := d.checkKV(kv); err != nil {
		return err
	}
	B := d.cfg.BlockSize
	if len(out) != len(rows)*(B-1) {
		return fmt.Errorf("model: dflash proposals need %d tokens of room, got %d", len(rows)*(B-1), len(out))
	}
	if err := d.prepareBlocks(rows, kv); err != nil {
		return err
	}
	n := len(rows) * B
	if n == 0 {
		return nil
	}
	d.blockLayers(n, kv)
	logits := d.blockLogits(len(rows))
	for i := range out {
		out[i] = -1
	}
	if d.sel != nil {
		d.selectPaths(rows, logits, out)
		return nil
	}
	V, j := d.cfg.Layers.VocabSize, 0
	for i, n := range d.run.nw {
		for l := range n {
			out[i*(B-1)+l] = argmax(logits[j*V : (j+1)*V])
			j++
		}
	}
	return nil
}

// Walk returns a DFlash2 draft's last Propose's candidate walk: for each
// wanted position (rows in order, each row's N), SelectorTopK candidate
// tokens and the probabilities the walk chose its token among them with:
// the softmax of their scores over the row's Temperature, or one-hot on
// the best for a greedy row. The token proposed there was drawn from
// them, given the token before it, which makes them the draft's
// distribution for rejection sampling. Reused by the next Propose; nil
// for a DFlash draft.
func (d *DFlashDraft) Walk() (ids []int32, probs []float32) {
	if d.sel == nil {
		return nil, nil
	}
	n := d.run.nLogits / d.cfg.Layers.VocabSize * d.cfg.SelectorTopK
	return d.run.walkIDs[:n], d.run.walkProbs[:n]
}

// Logits returns the last Propose's logits (through the target's
// lm_head): each row's N vectors of VocabSize, rows in order. They are
// reused by the next Propose.
func (d *DFlashDraft) Logits() []float32 { return d.run.logits[:d.run.nLogits] }

func (d *DFlashDraft) checkKV(kv *metal.KVCache) error {
	lc := &d.cfg.Layers
	if kv == nil || len(kv.Layers) != lc.NumHiddenLayers ||
		kv.Layers[0].KVHeads != lc.NumKeyValueHeads || kv.Layers[0].HeadDim != lc.HeadDim {
		return fmt.Errorf("model: KV cache does not match the dflash draft's layers and KV heads")
	}
	return nil
}

// prepareBlocks validates the rows and lays out their tokens, positions,
// slots and attention rows: a non-causal draft's queries all see up to the
// block's last position, a causal one's up to their own.
func (d *DFlashDraft) prepareBlocks(rows []DFlashBlock, kv *metal.KVCache) error {
	B, lc, r := d.cfg.BlockSize, &d.cfg.Layers, &d.run
	r.tokens, r.pos, r.slots, r.attnRows, r.nw = r.tokens[:0], r.pos[:0], r.slots[:0], r.attnRows[:0], r.nw[:0]
	nw := 0
	for ri, row := range rows {
		r.nw = append(r.nw, row.proposals(B))
		nw += r.nw[ri]
		if row.Anchor < 0 || int(row.Anchor) >= lc.VocabSize {
			return fmt.Errorf("model: dflash block %d: anchor token %d out of vocabulary [0, %d)", ri, row.Anchor, lc.VocabSize)
		}
		if row.Start < 0 {
			return fmt.Errorf("model: dflash block %d starts at negative position %d", ri, row.Start)
		}
		last := int32(row.Start + B - 1)
		for j := range B {
			slot, err := kv.Slot(row.Blocks, row.Start+j)
			if err != nil {
				return fmt.Errorf("model: dflash block %d: %w", ri, err)
			}
			tok, see := int32(d.cfg.MaskTokenID), last
			if j == 0 {
				tok = row.Anchor
			}
			if d.cfg.Causal {
				see = int32(row.Start + j)
			}
			r.tokens = append(r.tokens, tok)
			r.pos = append(r.pos, int32(row.Start+j))
			r.slots = append(r.slots, slot)
			r.attnRows = append(r.attnRows, metal.AttnRow{Pos: see, Blocks: row.Blocks})
		}
	}
	n := len(r.tokens)
	grow(&r.x, n*lc.HiddenSize)
	grow(&r.h, n*lc.HiddenSize)
	grow(&r.conv, n*lc.HiddenSize)
	grow(&r.q, n*lc.QDim())
	grow(&r.att, n*lc.QDim())
	grow(&r.k, n*lc.KVDim())
	grow(&r.v, n*lc.KVDim())
	grow(&r.gate, n*lc.IntermediateSize)
	grow(&r.up, n*lc.IntermediateSize)
	grow(&r.y, nw*lc.HiddenSize)
	grow(&r.logits, nw*lc.VocabSize)
	if d.cfg.Kind == DFlash2 {
		grow(&r.coef, n*2*d.cfg.ConvTaps*(lc.HiddenSize/d.cfg.ConvGroupSize))
		grow(&r.hp, nw*d.cfg.SelectorRank)
	}
	return nil
}

// blockLayers runs the n block tokens laid out by prepareBlocks through
// the draft's layers, leaving the residual stream in run.x.
func (d *DFlashDraft) blockLayers(n int, kv *metal.KVCache) {
	lc, be, r := &d.cfg.Layers, d.be, &d.run
	h, qd, kvd, inter := lc.HiddenSize, lc.QDim(), lc.KVDim(), lc.IntermediateSize
	eps := float32(lc.RMSNormEps)
	x, hh, cv := r.x[:n*h], r.h[:n*h], r.conv[:n*h]
	q, k, v, att := r.q[:n*qd], r.k[:n*kvd], r.v[:n*kvd], r.att[:n*qd]
	gate, up := r.gate[:n*inter], r.up[:n*inter]

	be.Embed(x, d.target.embed, r.tokens)
	if s := float32(d.cfg.InputEmbeddingScale); d.cfg.Kind == DFlash2 && s != 1 {
		for i := range x {
			x[i] *= s
		}
	}
	for i := range d.layers {
		ly := &d.layers[i]
		// attention block: x += post(Wo · attn(q, [context; block] keys and values)), each input pre-convolved in DFlash2
		be.RMSNorm(hh, x, ly.attnNorm, h, eps)
		in := d.convIn(ly.attnConv, hh, cv, n)
		d.products(in, n, metal.Product{Out: q, W: ly.wq}, metal.Product{Out: k, W: ly.wk}, metal.Product{Out: v, W: ly.wv})
		be.RMSNorm(q, q, ly.qNorm, lc.HeadDim, eps)
		be.RMSNorm(k, k, ly.kNorm, lc.HeadDim, eps)
		be.RoPE(q, r.pos, lc.NumAttentionHeads, lc.HeadDim, d.invFreq)
		be.RoPE(k, r.pos, lc.NumKeyValueHeads, lc.HeadDim, d.invFreq)
		be.WriteKV(&kv.Layers[i], k, v, r.slots)
		be.Attention(att, q, &kv.Layers[i], r.attnRows, lc.NumAttentionHeads, lc.NumKeyValueHeads, lc.HeadDim)
		be.MatMul(hh, att, n, ly.wo)
		be.Add(x, d.convOut(ly.attnConv, hh, cv, n))
		// MLP block: x += post(Wdown · (silu(Wgate h) ⊙ Wup h))
		be.RMSNorm(hh, x, ly.mlpNorm, h, eps)
		in = d.convIn(ly.mlpConv, hh, cv, n)
		d.products(in, n, metal.Product{Out: gate, W: ly.gate}, metal.Product{Out: up, W: ly.up})
		be.SiLUMul(gate, up)
		be.MatMul(hh, gate, n, ly.down)
		be.Add(x, d.convOut(ly.mlpConv, hh, cv, n))
	}
}

// blockLogits normalises the wanted masked positions of the rows' blocks
// (each row's first N after its anchor) and returns their logits through
// the target's head.
func (d *DFlashDraft) blockLogits(rows int) []float32 {
	B, lc, r := d.cfg.BlockSize, &d.cfg.Layers, &d.run
	h := lc.HiddenSize
	nw := 0
	for i, n := range r.nw[:rows] {
		copy(r.y[nw*h:(nw+n)*h], r.x[(i*B+1)*h:(i*B+1+n)*h])
		nw += n
	}
	y := r.y[:nw*h]
	d.be.RMSNorm(y, y, d.norm, h, float32(lc.RMSNormEps))
	logits := r.logits[:nw*lc.VocabSize]
	d.be.MatMul(logits, y, nw, d.target.lmHead)
	r.nLogits = len(logits)
	return logits
}

// products computes several products of one input, sharing the work where
// the backend can.
func (d *DFlashDraft) products(x []float32, rows int, ps ...metal.Product) {
	if sm, ok := d.be.(metal.SharedInputMatMul); ok {
		n := copy(d.run.products[:], ps) // ps itself would escape through the interface
		sm.MatMuls(x, rows, d.run.products[:n])
		return
	}
	for _, p := range ps {
		d.be.MatMul(p.Out, x, rows, p.W)
	}
}

// convIn is DFlashGroupedConv.prepare: it computes each token's kernel
// offsets from x (kept in run.coef for convOut) and returns x convolved
// with the input-side kernels (in out). Without a convolution (DFlash) it
// returns x.
func (d *DFlashDraft) convIn(c *dflashConv, x, out []float32, n int) []float32 {
	if c == nil {
		return x
	}
	coef := d.run.coef[:n*2*d.cfg.ConvTaps*(d.cfg.Layers.HiddenSize/d.cfg.ConvGroupSize)]
	d.be.MatMul(coef, x, n, c.proj)
	d.groupedConv(out, x, coef, c.base, 0, n)
	return out
}

// convOut is DFlashGroupedConv.finish: x convolved with the output-side
// kernels and the offsets convIn computed (in out). Without a convolution
// it returns x.
func (d *DFlashDraft) convOut(c *dflashConv, x, out []float32, n int) []float32 {
	if c == nil {
		return x
	}
	coef := d.run.coef[:n*2*d.cfg.ConvTaps*(d.cfg.Layers.HiddenSize/d.cfg.ConvGroupSize)]
	d.groupedConv(out, x, coef, c.base, 1, n)
	return out
}

// groupedConv is DFlash2's causal convolution along each block (vLLM
// qwen3_dflash2.py _grouped_conv): for token t at index p in its block,
//
//	out[t][c] = Σ_{s ≤ min(p, taps−1)} (base[side][s][c] + coef[t][side][s][c/gs]) · x[t−s][c]
//
// where gs is conv_group_size and coef[t] is (2, taps, groups). out must
// not alias x.
func (d *DFlashDraft) groupedConv(out, x, coef, base []float32, side, n int) {
	B, taps, gs := d.cfg.BlockSize, d.cfg.ConvTaps, d.cfg.ConvGroupSize
	h := d.cfg.Layers.HiddenSize
	groups := h / gs
	for t := range n {
		p := t % B
		o := out[t*h : (t+1)*h]
		ct := coef[t*2*taps*groups+side*taps*groups:]
		for s := range min(p+1, taps) {
			xs := x[(t-s)*h : (t-s+1)*h]
			bs := base[(side*taps+s)*h : (side*taps+s+1)*h]
			for g := range groups {
				dc := ct[s*groups+g]
				for j := g * gs; j < (g+1)*gs; j++ {
					if s == 0 {
						o[j] = (bs[j] + dc) * xs[j]
					} else {
						o[j] += (bs[j] + dc) * xs[j]
					}
				}
			}
		}
	}
}

// selectPaths is DFlash2's greedy walk (vLLM dflash2/speculator.py
// _selector_walk_kernel at temperature 0, scores from qwen3_dflash2.py
// _score_edges): at each masked position l the candidates are the top-k
// tokens of its logits, with unary scores logit·output_multiplier
// (soft-capped by tanh when final_logit_softcapping is set); candidate c
// after predecessor token p scores
//
//	unary[c] + Σ_r pred[p][r] · hp[l][r] · succ[c][r]
//
// with hp[l] = hidden_projection(normed hidden state at l). The walk starts
// from the anchor and takes the best candidate (the first on ties) each
// step, which becomes the next step's predecessor; a row with a
// temperature T draws it instead from softmax(score/T) over the
// candidates (Walk).
func (d *DFlashDraft) selectPaths(rows []DFlashBlock, logits []float32, out []int32) {
	cfg, r, be := d.cfg, &d.run, d.be
	B, K, R, V := cfg.BlockSize, cfg.SelectorTopK, cfg.SelectorRank, cfg.Layers.VocabSize
	nw := len(logits) / V
	hp := r.hp[:nw*R]
	be.MatMul(hp, r.y[:nw*cfg.Layers.HiddenSize], nw, d.sel.proj)
	grow(&r.vals, K)
	grow(&r.pred, R)
	grow(&r.succ, K*R)
	if cap(r.cand) < K {
		r.cand = make([]int32, K)
	}
	cand, vals, pred, succ := r.cand[:K], r.vals[:K], r.pred[:R], r.succ[:K*R]
	if cap(r.walkIDs) < nw*K {
		r.walkIDs, r.walkProbs = make([]int32, nw*K), make([]float32, nw*K)
	}
	grow(&r.scores, K)
	scores := r.scores[:K]
	i := 0 // the wanted position's index among the logits
	for ri, row := range rows {
		prev := row.Anchor
		for l := range r.nw[ri] {
			topK(logits[i*V:(i+1)*V], cand, vals)
			be.Embed(pred, d.sel.pred, []int32{prev})
			be.Embed(succ, d.sel.succ, cand)
			hl := hp[i*R : (i+1)*R]
			best, bestScore := 0, float32(math.Inf(-1))
			for c := range K {
				u := vals[c] * float32(cfg.OutputMultiplier)
				if sc := float32(cfg.LogitSoftcap); sc > 0 {
					u = float32(math.Tanh(float64(u/sc))) * sc
				}
				s := float32(0)
				for j := range R {
					s += pred[j] * hl[j] * succ[c*R+j]
				}
				if scores[c] = u + s; scores[c] > bestScore {
					best, bestScore = c, scores[c]
				}
			}
			ids, probs := r.walkIDs[i*K:(i+1)*K], r.walkProbs[i*K:(i+1)*K]
			copy(ids, cand)
			best = walkStep(scores, best, row.Temperature, row.Rand, probs)
			prev = cand[best]
			out[ri*(B-1)+l] = prev
			i++
		}
	}
}

// walkStep fills probs with the walk's distribution over candidates of
// scores (best the highest): one-hot on best when greedy (t ≤ 0 or no
// rng), else softmax(scores/t), from which it draws. It returns the
// candidate taken.
func walkStep(scores []float32, best int, t float32, rng *rand.Rand, probs []float32) int {
	clear(probs)
	if t <= 0 || rng == nil {
		probs[best] = 1
		return best
	}
	total := 0.0
	for c, s := range scores {
		w := math.Exp(float64(s-scores[best]) / float64(t))
		probs[c] = float32(w)
		total += w
	}
	u, acc, pick := rng.Float64()*total, 0.0, best
	for c := range probs {
		acc += float64(probs[c])
		if u < acc {
			pick = c
			break
		}
	}
	for c := range probs {
		probs[c] = float32(float64(probs[c]) / total)
	}
	return pick
}

// argmax returns the index of the largest value, the first on ties.
func argmax(x []float32) int32 {
	best := 0
	for i, v := range x {
		if v > x[best] {
			best = i
		}
	}
	return int32(best)
}

// topK fills ids and vals with the len(ids) largest values of x in
// descending order, the lower index first on ties.
func topK(x []float32, ids []int32, vals []float32) {
	k := 0
	for i, v := range x {
		if k == len(ids) && v <= vals[k-1] {
			continue
		}
		j := min(k, len(ids)-1)
		for j > 0 && vals[j-1] < v {
			vals[j], ids[j] = vals[j-1], ids[j-1]
			j--
		}
		vals[j], ids[j] = v, int32(i)
		if k < len(ids) {
			k++
		}
	}
}
