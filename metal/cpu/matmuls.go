package cpu

import "github.com/splash-inference/splash/metal"

// maxShared bounds the products of one MatMuls call run as one (a layer's
// q, k and v projections are three; a one-row step's experts' gate and up
// projections two per expert, up to 16 experts).
const maxShared = 32

// sharedTask runs the tiles of several packed q4 products of one input as
// one parallel call: indices [ends[i-1], ends[i]) are the tiles of
// parts[i]. The workers go from one matrix's tiles into the next without
// meeting at a barrier in between, so neither waits at the end of each
// small matrix for the other, and the weights stream without a pause.
type sharedTask struct {
	parts [maxShared]matmulTask
	ends  [maxShared]int
	n     int
}

func (t *sharedTask) run(lo, hi, worker int) {
	start := 0
	for i := 0; i < t.n && lo < hi; i++ {
		if lo < t.ends[i] {
			end := min(hi, t.ends[i])
			t.parts[i].runTiles(lo-start, end-start, worker)
			lo = end
		}
		start = t.ends[i]
	}
}

// MatMuls implements metal.SharedInputMatMul: when every product is a
// packed q4 matrix of whole tiles (a prepared model's projections), the
// activations are quantized once and all the tiles run in one call;
// otherwise each product is a MatMul. The tiles compute exactly as MatMul's,
// so the outputs are bit-identical either way.
func (b *Backend) MatMuls(x []float32, rows int, ps []metal.Product) {
	if !b.canShare(ps) {
		for _, p := range ps {
			b.MatMul(p.Out, x, rows, p.W)
		}
		return
	}
	cols := ps[0].W.Cols
	x = x[:rows*cols]
	b.quantizeActs(x, rows, cols, false, true, actsShift(metal.Q4))
	b.acts.q4x = b.acts.q4x[:0]
	t := &b.shared
	t.n = len(ps)
	end := 0
	for i, p := range ps {
		pk := b.packed.get(p.W)
		t.parts[i] = matmulTask{b: b, out: p.Out[:rows*p.W.Rows], x: x, rows: rows, w: p.W, in: cols, dim: p.W.Rows,
			tiled: true, height: pk.height, packed: pk}
		end += p.W.Rows / pk.height
		t.ends[i] = end
	}
	b.pool.run(t, end, 1)
	*t = sharedTask{}
}

// canShare reports whether MatMuls can run ps as one call.
func (b *Backend) canShare(ps []metal.Product) bool {
	if len(ps) < 2 || len(ps) > maxShared || b.k.q4Packed == nil {
		return false
	}
	for _, p := range ps {
		if p.W.DType != metal.Q4 || p.W.Cols != ps[0].W.Cols {
			return false
		}
		pk := b.packed.get(p.W)
		if pk == nil || p.W.Rows%pk.height != 0 {
			return false
		}
	}
	return true
}
