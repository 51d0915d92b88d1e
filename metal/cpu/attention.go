package cpu

import (
	"math"

	"github.com/splash-inference/splash/metal"
)

func (b *Backend) WriteKV(kv *metal.KVLayer, k, v []float32, slots []int32) {
	d := kv.Dim
	for i, s := range slots {
		copy(kv.K[int(s)*d:(int(s)+1)*d], k[i*d:(i+1)*d])
		copy(kv.V[int(s)*d:(int(s)+1)*d], v[i*d:(i+1)*d])
	}
}

// attentionTask computes (query token, KV head) pairs: for each, every
// query head of the KV head's group, with a two-pass softmax over the
// token's cached positions 0..Pos, scores kept in the worker's scratch.
//
// A cache slot holds all KV heads of a position side by side, so one KV
// head's keys are hd floats every Dim floats — at Qwen3-0.6B's sizes 512
// bytes out of each 4 KiB page, and hardware prefetchers do not cross
// pages. So a run of pairs of the same token walks the cache blocks in the
// outer loop and the run's KV heads in the inner one: each page is read as
// one contiguous stretch (all of it when one worker has all the heads).
// Each head's arithmetic, and so its result, is the same whatever run it
// is in (batch invariance).
type attentionTask struct {
	b                  *Backend
	out, q             []float32
	kv                 *metal.KVLayer
	rows               []metal.AttnRow
	heads, kvHeads, hd int
	scale              float32
}

// attnGrain is the number of KV heads a worker takes at a time: a balance
// between contiguous reads (above) and spreading one token over workers.
const attnGrain = 4

func (b *Backend) Attention(out, q []float32, kv *metal.KVLayer, rows []metal.AttnRow, heads, kvHeads, headDim int) {
	t := &b.attn
	*t = attentionTask{b: b, out: out, q: q, kv: kv, rows: rows, heads: heads, kvHeads: kvHeads, hd: headDim,
		scale: float32(1 / math.Sqrt(float64(headDim)))}
	b.pool.run(t, len(rows)*kvHeads, attnGrain)
	*t = attentionTask{}
}

func (t *attentionTask) run(lo, hi, worker int) {
	for lo < hi {
		// The run of pairs [lo, end) of one token r: KV heads kh0..kh1-1.
		r := lo / t.kvHeads
		end := min(hi, (r+1)*t.kvHeads)
		t.token(r, lo-r*t.kvHeads, end-r*t.kvHeads, worker)
		lo = end
	}
}

// token computes token r's query heads of KV heads kh0..kh1-1.
func (t *attentionTask) token(r, kh0, kh1, worker int) {
	f, hd, bs, dim := &t.b.f, t.hd, t.kv.BlockSize, t.kv.Dim
	group := t.heads / t.kvHeads
	row := t.rows[r]
	n := int(row.Pos) + 1
	h0, h1 := kh0*group, kh1*group
	all := t.b.workerScratch(worker, (h1-h0)*n)
	scores := func(h int) []float32 { return all[(h-h0)*n : (h-h0+1)*n] }
	q := func(h int) []float32 { return t.q[(r*t.heads+h)*hd : (r*t.heads+h+1)*hd] }
	out := func(h int) []float32 { return t.out[(r*t.heads+h)*hd : (r*t.heads+h+1)*hd] }

	// Keys, one cache block (consecutive slots) at a time.
	for p := 0; p < n; p += bs {
		slot0 := int(row.Blocks[p/bs]) * bs * dim
		for h := h0; h < h1; h++ {
			f.scores(scores(h)[p:min(p+bs, n)], q(h), t.kv.K[slot0+(h/group)*hd:], dim, t.scale)
		}
	}
	for h := h0; h < h1; h++ {
		s := scores(h)
		mx := float32(math.Inf(-1))
		for _, v := range s {
			mx = max(mx, v)
		}
		inv := 1 / f.expShift(s, mx)
		for p := range s {
			s[p] *= inv
		}
		clear(out(h))
	}
	// Values, likewise.
	for p := 0; p < n; p += bs {
		slot0 := int(row.Blocks[p/bs]) * bs * dim
		for h := h0; h < h1; h++ {
			f.weightedSum(out(h), t.kv.V[slot0+(h/group)*hd:], dim, scores(h)[p:min(p+bs, n)])
		}
	}
}
