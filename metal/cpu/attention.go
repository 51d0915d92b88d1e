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

// attentionTask computes one (query token, head) pair per index: a two-pass
// softmax over the token's cached positions 0..Pos, scores kept in the
// worker's scratch.
type attentionTask struct {
	b                  *Backend
	out, q             []float32
	kv                 *metal.KVLayer
	rows               []metal.AttnRow
	heads, kvHeads, hd int
	scale              float32
}

func (b *Backend) Attention(out, q []float32, kv *metal.KVLayer, rows []metal.AttnRow, heads, kvHeads, headDim int) {
	t := &b.attn
	*t = attentionTask{b: b, out: out, q: q, kv: kv, rows: rows, heads: heads, kvHeads: kvHeads, hd: headDim,
		scale: float32(1 / math.Sqrt(float64(headDim)))}
	b.pool.run(t, len(rows)*heads, 1)
	*t = attentionTask{}
}

func (t *attentionTask) run(lo, hi, worker int) {
	hd, group, bs, dim := t.hd, t.heads/t.kvHeads, t.kv.BlockSize, t.kv.Dim
	for i := lo; i < hi; i++ {
		r, h := i/t.heads, i%t.heads
		row := t.rows[r]
		n := int(row.Pos) + 1
		off := (h / group) * hd // this head's KV head within a slot
		qv := t.q[(r*t.heads+h)*hd : (r*t.heads+h+1)*hd]
		scores := t.b.workerScratch(worker, n)
		mx := float32(math.Inf(-1))
		for p := 0; p < n; p++ {
			slot := int(row.Blocks[p/bs])*bs + p%bs
			s := t.b.k.dotF32(qv, t.kv.K[slot*dim+off:slot*dim+off+hd]) * t.scale
			scores[p] = s
			mx = max(mx, s)
		}
		var sum float32
		for p := range scores {
			e := float32(math.Exp(float64(scores[p] - mx)))
			scores[p] = e
			sum += e
		}
		o := t.out[(r*t.heads+h)*hd : (r*t.heads+h+1)*hd]
		clear(o)
		inv := 1 / sum
		for p, w := range scores {
			slot := int(row.Blocks[p/bs])*bs + p%bs
			v := t.kv.V[slot*dim+off : slot*dim+off+hd]
			t.b.k.axpy(o, v, w*inv)
		}
	}
}
