package cpu

import (
	"math"

	"github.com/splash-inference/splash/metal"
)

// The gated delta rule of Gated DeltaNet layers (Qwen3-Next, Qwen3.5), in
// the two forms of transformers' models/qwen3_next/modeling_qwen3_next.py:
// torch_recurrent_gated_delta_rule, one token at a time, and
// torch_chunk_gated_delta_rule, the chunked (WY) form that turns a run of
// tokens into products of small matrices. Both compute, per value head,
// with the state S (KeyDim×ValueDim) carried across tokens:
//
//	S_t = e^{g_t} S_{t-1} + k_t δ_tᵀ,  δ_t = β_t (v_t − e^{g_t} S_{t-1}ᵀ k_t),  o_t = S_tᵀ q_t
//
// (q and k already L2-normalised, q scaled by 1/sqrt(KeyDim)).

const (
	// deltaChunk is the chunk length of the WY form.
	deltaChunk = metal.DeltaChunk
	// deltaChunkMinRows is the fewest tokens a chunk runs in the chunked
	// form. Shorter chunks, and so short calls (decode, a verify pass),
	// take the token loop, which does each token's arithmetic exactly as
	// a call for that token alone: a verify pass leaves the state
	// bit-identical to decoding its tokens one by one, which is worth more
	// than the chunked form's speed on short calls (BenchmarkGatedDeltaRule).
	deltaChunkMinRows = 16
	// l2NormEps is transformers' l2norm eps, added to Σx² under the root
	// (the FLA library's convention).
	l2NormEps = 1e-6
)

// A call of metal.DeltaShortRows rows must take the token loop.
const _ = uint(deltaChunkMinRows - 1 - metal.DeltaShortRows)

// DeltaGates is Qwen3NextGatedDeltaNet.forward's
// g = −exp(A_log)·softplus(a + dt_bias) and beta = sigmoid(b), per token
// and value head, computed in float64.
func (b *Backend) DeltaGates(g, beta, a, bb, aLog, dtBias []float32, rows, heads int) {
	for r := range rows {
		for h := range heads {
			i := r*heads + h
			x := float64(a[i]) + float64(dtBias[h])
			g[i] = float32(-math.Exp(float64(aLog[h])) * softplus(x))
			beta[i] = float32(1 / (1 + math.Exp(-float64(bb[i]))))
		}
	}
}

// softplus is log(1+e^x), as torch's with its default threshold: x itself
// above 20, where the two agree in float32.
func softplus(x float64) float64 {
	if x > 20 {
		return x
	}
	return math.Log1p(math.Exp(x))
}

// GatedDeltaRule normalises the queries and keys in place, then runs each
// value head on the pool, in chunks of deltaChunk tokens from the call's
// first (deltaChunked).
func (b *Backend) GatedDeltaRule(out, qkv, g, beta, state []float32, rows int, d metal.DeltaDims) {
	if rows <= 0 {
		return
	}
	normalizeQK(qkv, rows, d)
	if len(b.linear.cum) != b.pool.n {
		b.linear.cum = make([][deltaChunk]float64, b.pool.n)
	}
	t := &b.linear.delta
	*t = deltaTask{b: b, out: out, qkv: qkv, g: g, beta: beta, state: state, rows: rows, d: d}
	b.pool.run(t, d.ValueHeads, 1)
}

// normalizeQK sets q ← q/sqrt(Σq²+eps)/sqrt(KeyDim) and k ← k/sqrt(Σk²+eps)
// for every key head of every row (transformers' l2norm, then the
// query's scale).
func normalizeQK(qkv []float32, rows int, d metal.DeltaDims) {
	stride, kd := d.QKVDim(), d.KeyDim
	scale := 1 / math.Sqrt(float64(kd))
	for r := range rows {
		row := qkv[r*stride:]
		for h := range 2 * d.KeyHeads {
			x := row[h*kd : (h+1)*kd]
			inv := 1 / math.Sqrt(sumSquaresRef(x)+l2NormEps)
			if h < d.KeyHeads {
				inv *= scale
			}
			f := float32(inv)
			for i := range x {
				x[i] *= f
			}
		}
	}
}

// deltaTask is one GatedDeltaRule call, split by value heads.
type deltaTask struct {
	b                        *Backend
	out, qkv, g, beta, state []float32
	rows                     int
	d                        metal.DeltaDims
}

func (t *deltaTask) run(lo, hi, w int) {
	for h := lo; h < hi; h++ {
		dh := newDeltaHead(&t.b.k, t.out, t.qkv, t.g, t.beta, t.state, t.d, h)
		scratch := t.b.workerScratch(w, max(dh.dv, deltaChunkScratch(deltaChunk, dh.dk, dh.dv)))
		deltaChunked(&dh, t.rows, deltaChunk, deltaChunkMinRows, scratch, t.b.linear.cum[w][:])
	}
}

// deltaHead is one value head's view of a GatedDeltaRule call's slices.
type deltaHead struct {
	qkv, out, g, beta []float32
	s                 []float32 // dk×dv, row i is key component i
	stride, outStride int       // floats per row of qkv and out
	gStride           int       // floats per row of g and beta (the value heads)
	q0, k0, v0, o0, h int       // offsets of this head's q, k, v, out in a row; its index
	dk, dv            int
	// dot and axpy are the kernel set's float32 loops (floatdot.go),
	// bit-identical in every set.
	dot  func(a, b []float32) float32
	axpy func(o, v []float32, w float32)
	// axpyRows adds combinations of rows; deltaRow updates a row of s and
	// adds its share of the output.
	axpyRows func(o, m, c []float32, stride int)
	deltaRow func(row, u, o []float32, e, k, q float32)
}

func newDeltaHead(k *kernels, out, qkv, g, beta, state []float32, d metal.DeltaDims, h int) deltaHead {
	kh := h / (d.ValueHeads / d.KeyHeads)
	kd, vd := d.KeyDim, d.ValueDim
	return deltaHead{qkv: qkv, out: out, g: g, beta: beta, s: state[h*kd*vd : (h+1)*kd*vd],
		stride: d.QKVDim(), outStride: d.ValueHeads * vd, gStride: d.ValueHeads,
		q0: kh * kd, k0: (d.KeyHeads + kh) * kd, v0: 2*d.KeyHeads*kd + h*vd, o0: h * vd, h: h, dk: kd, dv: vd,
		dot: k.dotF32, axpy: k.axpy, axpyRows: k.axpyRows, deltaRow: k.deltaRow}
}

func (d *deltaHead) q(t int) []float32 { return d.qkv[t*d.stride+d.q0:][:d.dk] }
func (d *deltaHead) k(t int) []float32 { return d.qkv[t*d.stride+d.k0:][:d.dk] }
func (d *deltaHead) v(t int) []float32 { return d.qkv[t*d.stride+d.v0:][:d.dv] }
func (d *deltaHead) o(t int) []float32 { return d.out[t*d.outStride+d.o0:][:d.dv] }
func (d *deltaHead) gate(t int) (g, beta float32) {
	return d.g[t*d.gStride+d.h], d.beta[t*d.gStride+d.h]
}

// deltaRecurrent runs tokens [t0, t1) one at a time
// (torch_recurrent_gated_delta_rule), in two passes over S per token:
// u = Sᵀk with the old S, then δ = β(v − e^g u), and S ← e^g S + k δᵀ
// with o = Sᵀq accumulated from the new rows. u (dv floats) is scratch.
// The decay e^g is 0 below tinyFactor, as the chunked form's are: a g
// below about −87 makes it subnormal, and every product with it takes
// x86's slow path (BenchmarkHybrid0_8BQ4's random gates reach it); a
// factor that small changes nothing the state's other terms do not swamp
// (tinyFactor).
func deltaRecurrent(d *deltaHead, t0, t1 int, u []float32) {
	dv := d.dv
	for t := t0; t < t1; t++ {
		q, k, v, o := d.q(t), d.k(t), d.v(t), d.o(t)
		g, beta := d.gate(t)
		decay := expf(float64(g))
		clear(u)
		d.axpyRows(u, d.s, k, dv)
		for j := range u {
			u[j] = beta * (v[j] - float32(decay*u[j]))
		}
		clear(o)
		for i, ki := range k {
			d.deltaRow(d.s[i*dv:(i+1)*dv], u, o, decay, ki, q[i])
		}
	}
}

// linearTasks are the LinearAttention calls' pool tasks, kept in the
// Backend so a call allocates nothing.
type linearTasks struct {
	conv  convTask
	delta deltaTask
	cum   [][deltaChunk]float64 // per worker: a chunk's cumulative decays
	ones  []float32             // elemUnit ones (conv1d.go)
}

var _ metal.LinearAttention = (*Backend)(nil)
