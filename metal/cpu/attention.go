package cpu

import (
	"math"

	"github.com/splash-inference/splash/metal"
)

// WriteKV stores keys and values as float16, rounded to nearest even.
func (b *Backend) WriteKV(kv *metal.KVLayer, k, v []float32, slots []int32) {
	d := kv.Dim
	for i, s := range slots {
		b.f.toF16(kv.K[int(s)*d:(int(s)+1)*d], k[i*d:(i+1)*d])
		b.f.toF16(kv.V[int(s)*d:(int(s)+1)*d], v[i*d:(i+1)*d])
	}
}

// attentionTask computes (run, KV head) pairs, where a run is up to
// attnRunTokens consecutive query tokens of one sequence (a verify row's
// k+1 tokens, a prefill chunk): for each pair, every query head of the KV
// head's group for every token of the run, with a two-pass softmax over
// each token's cached positions 0..Pos, scores kept in the worker's
// scratch. The tokens of a run share their keys and values, so each cache
// block is read from memory once for all of them, not once per token.
//
// A cache slot holds all KV heads of a position side by side, so one KV
// head's keys are hd floats every Dim floats — at Qwen3-0.6B's sizes 512
// bytes out of each 4 KiB page, and hardware prefetchers do not cross
// pages. So a run walks the cache blocks in the outer loop and its tokens
// and KV heads in the inner ones: each page is read as one contiguous
// stretch (all of it when one worker has all the heads).
// Each (token, head)'s arithmetic, and so its result, is the same whatever
// run it is in (batch invariance): its scores are independent dot
// products, and its value sum adds the positions in order either way.
type attentionTask struct {
	b                  *Backend
	out, q             []float32
	kv                 *metal.KVLayer
	rows               []metal.AttnRow
	runs               []int32 // first row of each run, then len(rows)
	heads, kvHeads, hd int
	scale              float32
}

const (
	// attnGrain is the number of KV heads a worker takes at a time: a
	// balance between contiguous reads (above) and spreading one token
	// over workers.
	attnGrain = 4
	// attnRunTokens bounds a run, so its scores stay in the worker's cache.
	attnRunTokens = 8
)

func (b *Backend) Attention(out, q []float32, kv *metal.KVLayer, rows []metal.AttnRow, heads, kvHeads, headDim int) {
	runs := b.attnRuns[:0]
	for r := range rows {
		if r == 0 || r-int(runs[len(runs)-1]) == attnRunTokens || !sameTable(rows[r].Blocks, rows[r-1].Blocks) {
			runs = append(runs, int32(r))
		}
	}
	runs = append(runs, int32(len(rows)))
	b.attnRuns = runs
	t := &b.attn
	*t = attentionTask{b: b, out: out, q: q, kv: kv, rows: rows, runs: runs, heads: heads, kvHeads: kvHeads, hd: headDim,
		scale: float32(1 / math.Sqrt(float64(headDim)))}
	b.pool.run(t, (len(runs)-1)*kvHeads, attnGrain)
	*t = attentionTask{}
}

// sameTable reports whether two rows read the same block table (the rows
// of one sequence in a batch share its slice).
func sameTable(a, b []int32) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

func (t *attentionTask) run(lo, hi, worker int) {
	for lo < hi {
		// The pairs [lo, end) of one run: KV heads kh0..kh1-1.
		run := lo / t.kvHeads
		end := min(hi, (run+1)*t.kvHeads)
		t.tokens(run, lo-run*t.kvHeads, end-run*t.kvHeads, worker)
		lo = end
	}
}

// tokens computes the query heads of KV heads kh0..kh1-1 for the tokens
// of run run.
func (t *attentionTask) tokens(run, kh0, kh1, worker int) {
	f, hd, bs, dim := &t.b.f, t.hd, t.kv.BlockSize, t.kv.Dim
	group := t.heads / t.kvHeads
	r0, r1 := int(t.runs[run]), int(t.runs[run+1])
	h0, h1 := kh0*group, kh1*group
	nmax := 0
	for r := r0; r < r1; r++ {
		nmax = max(nmax, int(t.rows[r].Pos)+1)
	}
	all := t.b.workerScratch(worker, (r1-r0)*(h1-h0)*nmax)
	size := func(r int) int { return int(t.rows[r].Pos) + 1 }
	scores := func(r, h int) []float32 {
		off := ((r-r0)*(h1-h0) + h - h0) * nmax
		return all[off : off+size(r)]
	}
	q := func(r, h int) []float32 { return t.q[(r*t.heads+h)*hd : (r*t.heads+h+1)*hd] }
	out := func(r, h int) []float32 { return t.out[(r*t.heads+h)*hd : (r*t.heads+h+1)*hd] }
	blocks := t.rows[r0].Blocks

	// Keys, one cache block (consecutive slots) at a time.
	for p := 0; p < nmax; p += bs {
		slot0 := int(blocks[p/bs]) * bs * dim
		for r := r0; r < r1; r++ {
			if n := size(r); p < n {
				for h := h0; h < h1; h++ {
					f.scores(scores(r, h)[p:min(p+bs, n)], q(r, h), t.kv.K[slot0+(h/group)*hd:], dim, t.scale)
				}
			}
		}
	}
	for r := r0; r < r1; r++ {
		for h := h0; h < h1; h++ {
			s := scores(r, h)
			mx := float32(math.Inf(-1))
			for _, v := range s {
				mx = max(mx, v)
			}
			inv := 1 / f.expShift(s, mx)
			for p := range s {
				s[p] *= inv
			}
			clear(out(r, h))
		}
	}
	// Values, likewise.
	for p := 0; p < nmax; p += bs {
		slot0 := int(blocks[p/bs]) * bs * dim
		for r := r0; r < r1; r++ {
			if n := size(r); p < n {
				for h := h0; h < h1; h++ {
					f.weightedSum(out(r, h), t.kv.V[slot0+(h/group)*hd:], dim, scores(r, h)[p:min(p+bs, n)])
				}
			}
		}
	}
}
