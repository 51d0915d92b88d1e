package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/splash-inference/splash/metal"
)

// refDeltaRule is the gated delta rule in float64, written from its
// definition one token at a time: L2-normalised q and k (eps 1e-6 under the
// root), q scaled by 1/sqrt(dk), value head h reading key head
// h/(vh/kh), and for each token S ← e^g S; δ = β(v − Sᵀk); S ← S + kδᵀ;
// o = Sᵀq. qkv is not modified; state (vh×dk×dv) is updated.
func refDeltaRule(qkv, g, beta []float32, state []float64, rows int, d metal.DeltaDims) []float64 {
	kd, vd, stride := d.KeyDim, d.ValueDim, d.QKVDim()
	out := make([]float64, rows*d.ValueHeads*vd)
	unit := func(x []float32, scale float64) []float64 {
		var ss float64
		for _, v := range x {
			ss += float64(v) * float64(v)
		}
		n := make([]float64, len(x))
		for i, v := range x {
			n[i] = float64(v) / math.Sqrt(ss+1e-6) * scale
		}
		return n
	}
	for t := range rows {
		row := qkv[t*stride : (t+1)*stride]
		for h := range d.ValueHeads {
			kh := h / (d.ValueHeads / d.KeyHeads)
			q := unit(row[kh*kd:(kh+1)*kd], 1/math.Sqrt(float64(kd)))
			k := unit(row[(d.KeyHeads+kh)*kd:(d.KeyHeads+kh+1)*kd], 1)
			v := row[2*d.KeyHeads*kd+h*vd:][:vd]
			S := state[h*kd*vd : (h+1)*kd*vd]
			decay, b := math.Exp(float64(g[t*d.ValueHeads+h])), float64(beta[t*d.ValueHeads+h])
			for i := range S {
				S[i] *= decay
			}
			for j := range vd {
				var kv float64
				for i := range kd {
					kv += S[i*vd+j] * k[i]
				}
				delta := b * (float64(v[j]) - kv)
				var o float64
				for i := range kd {
					S[i*vd+j] += k[i] * delta
					o += S[i*vd+j] * q[i]
				}
				out[t*d.ValueHeads*vd+h*vd+j] = o
			}
		}
	}
	return out
}

// randGates draws per-token a and b projections and per-head A_log and
// dt_bias as a trained model has them (A = e^A_log, dt_bias near 1) and
// returns the gates DeltaGates makes of them. maxA sets how fast the
// state may decay: 16 forgets within a few tokens, 0.05 remembers long,
// between them a chunk's cumulative decay reaches the hundreds.
func randGates(be *Backend, rng *rand.Rand, rows, heads int, maxA float64) (g, beta []float32) {
	a, b := randVec(rng, rows*heads), randVec(rng, rows*heads)
	aLog, dt := make([]float32, heads), make([]float32, heads)
	for h := range heads {
		aLog[h] = float32(math.Log(maxA*rng.Float64() + 1e-3))
		dt[h] = float32(1 + 0.5*rng.NormFloat64())
	}
	g, beta = make([]float32, rows*heads), make([]float32, rows*heads)
	be.DeltaGates(g, beta, a, b, aLog, dt, rows, heads)
	return g, beta
}

// decayRates are randGates' maxA: fast, moderate and slow forgetting.
var decayRates = []float64{16, 3, 0.05}

var deltaShapes = []metal.DeltaDims{
	{KeyHeads: 1, ValueHeads: 1, KeyDim: 8, ValueDim: 8},
	{KeyHeads: 2, ValueHeads: 4, KeyDim: 16, ValueDim: 8},
	{KeyHeads: 2, ValueHeads: 6, KeyDim: 12, ValueDim: 20},
	{KeyHeads: 1, ValueHeads: 2, KeyDim: 128, ValueDim: 128},
}

// TestGatedDeltaRuleMatchesReference runs sequences through
// GatedDeltaRule in calls of various lengths (token loop below
// deltaChunkMinRows, chunked from it, chunks cut at 64 and not), the state
// carried from call to call, against refDeltaRule over the whole sequence.
func TestGatedDeltaRuleMatchesReference(t *testing.T) {
	splits := [][]int{{1}, {5}, {16}, {64}, {65}, {130}, {3, 70, 1, 1, 20}, {15, 16, 17, 1}}
	for _, threads := range []int{1, 2} {
		be := New(threads)
		for si, d := range deltaShapes {
			for _, split := range splits {
				for _, maxA := range decayRates {
					name := fmt.Sprintf("threads%d/shape%d/%v/maxA=%v", threads, si, split, maxA)
					t.Run(name, func(t *testing.T) {
						rng := rand.New(rand.NewPCG(uint64(si), uint64(len(split))))
						rows := 0
						for _, n := range split {
							rows += n
						}
						qkv := randVec(rng, rows*d.QKVDim())
						g, beta := randGates(be, rng, rows, d.ValueHeads, maxA)
						init := randVec(rng, d.StateLen())
						ref := make([]float64, len(init))
						for i, v := range init {
							ref[i] = float64(v)
						}
						want := refDeltaRule(qkv, g, beta, ref, rows, d)
						state := append([]float32(nil), init...)
						got := make([]float32, rows*d.ValueHeads*d.ValueDim)
						work := append([]float32(nil), qkv...)
						t0 := 0
						for _, n := range split {
							w := d.ValueHeads * d.ValueDim
							be.GatedDeltaRule(got[t0*w:(t0+n)*w], work[t0*d.QKVDim():(t0+n)*d.QKVDim()],
								g[t0*d.ValueHeads:], beta[t0*d.ValueHeads:], state, n, d)
							t0 += n
						}
						if e := maxRelErr(got, want); e > 2e-5 {
							t.Errorf("output: max error %.3g of the largest value", e)
						}
						if e := maxRelErr(state, ref); e > 2e-5 {
							t.Errorf("state: max error %.3g of the largest value", e)
						}
					})
				}
			}
		}
		be.Close()
	}
}

// TestDeltaChunkedMatchesRecurrent: the WY form (forced for every chunk
// length) with chunks of any length (1, shorter than, equal to and longer
// than the run) gives the token loop's outputs and state.
func TestDeltaChunkedMatchesRecurrent(t *testing.T) {
	be := New(1)
	defer be.Close()
	for si, d := range deltaShapes {
		for _, chunk := range []int{1, 3, 8, 64, 200} {
			for _, rows := range []int{1, 7, 64, 100} {
				for _, maxA := range decayRates {
					t.Run(fmt.Sprintf("shape%d/chunk%d/rows%d/maxA=%v", si, chunk, rows, maxA), func(t *testing.T) {
						rng := rand.New(rand.NewPCG(uint64(chunk), uint64(rows)))
						qkv := randVec(rng, rows*d.QKVDim())
						normalizeQK(qkv, rows, d)
						g, beta := randGates(be, rng, rows, d.ValueHeads, maxA)
						init := randVec(rng, d.StateLen())
						w := d.ValueHeads * d.ValueDim
						loopOut, chunkOut := make([]float32, rows*w), make([]float32, rows*w)
						loopState, chunkState := append([]float32(nil), init...), append([]float32(nil), init...)
						for h := range d.ValueHeads {
							lh := newDeltaHead(&be.k, loopOut, qkv, g, beta, loopState, d, h)
							deltaRecurrent(&lh, 0, rows, make([]float32, d.ValueDim))
							ch := newDeltaHead(&be.k, chunkOut, qkv, g, beta, chunkState, d, h)
							deltaChunked(&ch, rows, chunk, 1, make([]float32, max(d.ValueDim, deltaChunkScratch(chunk, d.KeyDim, d.ValueDim))), make([]float64, chunk))
						}
						if e := maxRelErr(chunkOut, widen(loopOut)); e > 1e-5 {
							t.Errorf("output: max difference %.3g of the largest value", e)
						}
						if e := maxRelErr(chunkState, widen(loopState)); e > 1e-5 {
							t.Errorf("state: max difference %.3g of the largest value", e)
						}
					})
				}
			}
		}
	}
}

func widen(x []float32) []float64 {
	w := make([]float64, len(x))
	for i, v := range x {
		w[i] = float64(v)
	}
	return w
}

// TestDeltaGates checks g = −e^{A_log}·softplus(a + dt_bias) and
// β = sigmoid(b) against their float64 definitions, across softplus's
// switch to the identity at 20 and in place (g over a, β over b).
func TestDeltaGates(t *testing.T) {
	be := New(1)
	defer be.Close()
	a := []float32{-30, -1, 0, 0.5, 19, 19.5, 21, 40}
	b := []float32{-30, -1, 0, 0.5, 3, 10, -5, 40}
	aLog := []float32{0.5, -2}
	dt := []float32{1, -0.5}
	const heads = 2
	rows := len(a) / heads
	wantG, wantB := make([]float64, len(a)), make([]float64, len(a))
	for i := range a {
		h := i % heads
		x := float64(a[i]) + float64(dt[h])
		wantG[i] = -math.Exp(float64(aLog[h])) * math.Log(1+math.Exp(x))
		wantB[i] = 1 / (1 + math.Exp(-float64(b[i])))
	}
	be.DeltaGates(a, b, a, b, aLog, dt, rows, heads)
	for i := range a {
		if math.Abs(float64(a[i])-wantG[i]) > 1e-6*math.Max(1, math.Abs(wantG[i])) {
			t.Errorf("g[%d] = %v, want %v", i, a[i], wantG[i])
		}
		if math.Abs(float64(b[i])-wantB[i]) > 1e-7 {
			t.Errorf("beta[%d] = %v, want %v", i, b[i], wantB[i])
		}
	}
}

// TestGatedRMSNorm compares x/sqrt(mean(x²)+eps)·w·silu(z) with its
// float64 definition, in place.
func TestGatedRMSNorm(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	be := New(1)
	defer be.Close()
	for _, dim := range []int{1, 8, 33, 128} {
		const rows = 3
		x, z, w := randVec(rng, rows*dim), randVec(rng, rows*dim), randVec(rng, dim)
		want := make([]float64, rows*dim)
		for r := range rows {
			var ss float64
			for _, v := range x[r*dim : (r+1)*dim] {
				ss += float64(v) * float64(v)
			}
			inv := 1 / math.Sqrt(ss/float64(dim)+1e-6)
			for i := range dim {
				zz := float64(z[r*dim+i])
				want[r*dim+i] = float64(x[r*dim+i]) * inv * float64(w[i]) * zz / (1 + math.Exp(-zz))
			}
		}
		be.GatedRMSNorm(x, x, z, w, dim, 1e-6)
		if e := maxRelErr(x, want); e > 1e-6 {
			t.Errorf("dim %d: max error %.3g of the largest value", dim, e)
		}
	}
	// A prompt chunk's rows, split over two threads: the one thread's bits.
	be2 := New(2)
	defer be2.Close()
	const rows, dim = 200, 128
	x, z, w := randVec(rng, rows*dim), randVec(rng, rows*dim), randVec(rng, dim)
	if !be2.parallel(opGatedRMSNorm, len(x)) {
		t.Fatalf("%d rows of %d do not run on the pool", rows, dim)
	}
	one, two := make([]float32, len(x)), make([]float32, len(x))
	be.GatedRMSNorm(one, x, z, w, dim, 1e-6)
	be2.GatedRMSNorm(two, x, z, w, dim, 1e-6)
	for i := range one {
		if math.Float32bits(one[i]) != math.Float32bits(two[i]) {
			t.Fatalf("[%d] = %v on two threads, %v on one", i, two[i], one[i])
		}
	}
}

// TestLinearAttentionKernelSetsAgree: every kernel set this CPU runs
// gives the portable set's bits for the convolution and the gated delta
// rule, token loop and chunked form, on one thread or two.
func TestLinearAttentionKernelSetsAgree(t *testing.T) {
	d := deltaShapes[3]
	const rows, channels, kernel = 70, 96, 4
	run := func(be *Backend) (out, state, conv []float32) {
		rng := rand.New(rand.NewPCG(21, 22))
		qkv := randVec(rng, rows*d.QKVDim())
		g, beta := randGates(be, rng, rows, d.ValueHeads, 3)
		state = randVec(rng, d.StateLen())
		out = make([]float32, rows*d.ValueHeads*d.ValueDim)
		w := d.ValueHeads * d.ValueDim
		be.GatedDeltaRule(out[:5*w], qkv[:5*d.QKVDim()], g, beta, state, 5, d)
		be.GatedDeltaRule(out[5*w:], qkv[5*d.QKVDim():], g[5*d.ValueHeads:], beta[5*d.ValueHeads:], state, rows-5, d)
		x, cw := randVec(rng, rows*channels), randVec(rng, channels*kernel)
		cs := make([]float32, (kernel-1)*channels)
		be.CausalConv1D(x, x, cs, cw, rows, channels, kernel)
		return out, state, append(x, cs...)
	}
	ref := NewWithOptions(Options{Threads: 1, Portable: true})
	wantOut, wantState, wantConv := run(ref)
	ref.Close()
	for _, set := range KernelSets() {
		for _, threads := range []int{1, 2} {
			t.Run(fmt.Sprintf("%s/threads%d", set, threads), func(t *testing.T) {
				be := NewWithOptions(Options{Threads: threads, Kernels: set})
				defer be.Close()
				out, state, conv := run(be)
				for _, c := range []struct {
					name      string
					got, want []float32
				}{{"output", out, wantOut}, {"state", state, wantState}, {"convolution", conv, wantConv}} {
					for i := range c.want {
						if math.Float32bits(c.got[i]) != math.Float32bits(c.want[i]) {
							t.Fatalf("%s[%d] = %v, portable %v", c.name, i, c.got[i], c.want[i])
						}
					}
				}
			})
		}
	}
}

// TestShortDeltaCallsAreTokenByToken: a verify pass (here 8 tokens)
// gives the output and state bits of its tokens run one call each
// (decode steps).
func TestShortDeltaCallsAreTokenByToken(t *testing.T) {
	be := New(2)
	defer be.Close()
	for si, d := range deltaShapes {
		rng := rand.New(rand.NewPCG(5, uint64(si)))
		const rows = 8
		qkv := randVec(rng, rows*d.QKVDim())
		g, beta := randGates(be, rng, rows, d.ValueHeads, 3)
		init := randVec(rng, d.StateLen())
		w := d.ValueHeads * d.ValueDim
		whole, single := make([]float32, rows*w), make([]float32, rows*w)
		ws, ss := append([]float32(nil), init...), append([]float32(nil), init...)
		be.GatedDeltaRule(whole, append([]float32(nil), qkv...), g, beta, ws, rows, d)
		for r := range rows {
			be.GatedDeltaRule(single[r*w:(r+1)*w], append([]float32(nil), qkv[r*d.QKVDim():(r+1)*d.QKVDim()]...),
				g[r*d.ValueHeads:], beta[r*d.ValueHeads:], ss, 1, d)
		}
		for i := range whole {
			if math.Float32bits(whole[i]) != math.Float32bits(single[i]) {
				t.Fatalf("shape %d: output %d = %v in one call, %v a token a call", si, i, whole[i], single[i])
			}
		}
		for i := range ws {
			if math.Float32bits(ws[i]) != math.Float32bits(ss[i]) {
				t.Fatalf("shape %d: state %d = %v in one call, %v a token a call", si, i, ws[i], ss[i])
			}
		}
	}
}

// TestDeltaSplitAtChunks: a sequence run in calls split at multiples of
// deltaChunk gives the bits of one call, decode steps after the last
// whole chunk included (its short tail runs token by token either way).
func TestDeltaSplitAtChunks(t *testing.T) {
	be := New(2)
	defer be.Close()
	d := deltaShapes[2]
	const rows = 3*deltaChunk + 9
	rng := rand.New(rand.NewPCG(8, 9))
	qkv := randVec(rng, rows*d.QKVDim())
	g, beta := randGates(be, rng, rows, d.ValueHeads, 3)
	init := randVec(rng, d.StateLen())
	run := func(split []int) ([]float32, []float32) {
		w := d.ValueHeads * d.ValueDim
		out, state, work := make([]float32, rows*w), append([]float32(nil), init...), append([]float32(nil), qkv...)
		t0 := 0
		for _, n := range split {
			be.GatedDeltaRule(out[t0*w:(t0+n)*w], work[t0*d.QKVDim():(t0+n)*d.QKVDim()], g[t0*d.ValueHeads:], beta[t0*d.ValueHeads:], state, n, d)
			t0 += n
		}
		return out, state
	}
	wantOut, wantState := run([]int{rows})
	for _, split := range [][]int{
		{deltaChunk, rows - deltaChunk},
		{2 * deltaChunk, deltaChunk, 9},
		{3 * deltaChunk, 1, 1, 1, 1, 1, 1, 1, 1, 1},
	} {
		out, state := run(split)
		for _, c := range []struct {
			name      string
			got, want []float32
		}{{"output", out, wantOut}, {"state", state, wantState}} {
			for i := range c.want {
				if math.Float32bits(c.got[i]) != math.Float32bits(c.want[i]) {
					t.Fatalf("split %v: %s[%d] = %v, one call %v", split, c.name, i, c.got[i], c.want[i])
				}
			}
		}
	}
}

// TestLogTinyFactor: expf's threshold is exactly the logarithm it stands
// for, so a chunk's factors are cut where they were.
func TestLogTinyFactor(t *testing.T) {
	if got := math.Log(tinyFactor); got != logTinyFactor {
		t.Fatalf("math.Log(%g) = %.17g, logTinyFactor %.17g", tinyFactor, got, float64(logTinyFactor))
	}
}

// TestDecodeFlushesTinyDecay: a decode token whose gate g is far below
// −87 (e^g subnormal in float32) forgets the state entirely, as the
// chunked form does below tinyFactor, instead of leaving subnormal
// remnants, whose every later product takes x86's slow path: after the
// token the state is exactly k ⊗ βv, with zeros where v is zero.
func TestDecodeFlushesTinyDecay(t *testing.T) {
	d := metal.DeltaDims{KeyHeads: 1, ValueHeads: 1, KeyDim: 8, ValueDim: 8}
	for _, g := range []float32{-100, -88, float32(logTinyFactor) - 1} {
		be := New(1)
		rng := rand.New(rand.NewPCG(5, 6))
		qkv := randVec(rng, d.QKVDim())
		v := qkv[2*d.KeyDim:]
		v[3] = 0
		state := make([]float32, d.StateLen())
		for i := range state {
			state[i] = 1
		}
		out := make([]float32, d.ValueDim)
		be.GatedDeltaRule(out, qkv, []float32{g}, []float32{0.5}, state, 1, d)
		k := qkv[d.KeyDim : 2*d.KeyDim] // normalised in place
		for i := range d.KeyDim {
			for j := range d.ValueDim {
				if want := k[i] * (0.5 * v[j]); state[i*d.ValueDim+j] != want {
					t.Fatalf("g=%v: S[%d][%d] = %g, want k⊗βv's %g", g, i, j, state[i*d.ValueDim+j], want)
				}
			}
		}
		be.Close()
	}
}
