package cpu

import "math"

// deltaChunkScratch is the float32s deltaChunked needs for chunks of
// length chunk (and it needs chunk float64s more).
func deltaChunkScratch(chunk, dk, dv int) int {
	return 2*chunk*chunk + chunk*(dk+dv) + 2*chunk
}

// deltaChunked runs rows tokens in chunks of chunk tokens counted from
// the first; a chunk of fewer than minRows tokens (a short call's only
// one, a long call's last) runs token by token (deltaRecurrent), the
// others in the WY form of torch_chunk_gated_delta_rule (transformers,
// models/qwen3_next/modeling_qwen3_next.py). So each chunk's bits depend
// only on the state before it and its own tokens: a sequence split into
// calls at multiples of chunk gives the bits of one call, and a short
// call those of its tokens one call each. Within a chunk, with
// G_t = Σ_{s≤t} g_s and Γ_t = e^{G_t} (positions counted from the chunk's
// start, S the state before it):
//
//	L[t][s] = β_t (k_t·k_s) e^{G_t−G_s} for s < t,  T = (I + L)⁻¹ (forward substitution)
//	U = T (β ⊙ V),  W = T (β ⊙ Γ ⊙ K)
//	δ = U − W S                       (the δ_t of the token loop, all at once)
//	o_t = Γ_t Sᵀq_t + Σ_{s≤t} (q_t·k_s) e^{G_t−G_s} δ_s
//	S ← Γ_last S + Σ_s e^{G_last−G_s} k_s δ_sᵀ
//
// Every exponent is ≤ 0 (g ≤ 0), so nothing overflows. The cumulative
// decays G are summed and subtracted in float64: over a chunk they reach
// hundreds, and e^{G_t−G_s} from float32 sums was off by about
// |G|·2⁻²⁴ relative, which made a 70-token prompt chunk's logits several
// times further from the float64 reference than the token loop's
// (transformers' torch_chunk_gated_delta_rule sums them in float32).
// scratch holds deltaChunkScratch(chunk, dk, dv) floats (at least dv), G
// chunk.
func deltaChunked(d *deltaHead, rows, chunk, minRows int, scratch []float32, G []float64) {
	for t0 := 0; t0 < rows; t0 += chunk {
		c := min(chunk, rows-t0)
		if c < minRows {
			deltaRecurrent(d, t0, t0+c, scratch[:d.dv])
			continue
		}
		deltaOneChunk(d, t0, c, chunk, scratch, G[:c])
	}
}

// deltaOneChunk runs the c tokens from t0; stride is the chunk length the
// scratch was laid out for, G has c entries.
func deltaOneChunk(d *deltaHead, t0, c, stride int, scratch []float32, G []float64) {
	dk, dv := d.dk, d.dv
	T := scratch[:stride*stride]
	A := scratch[stride*stride : 2*stride*stride]
	U := scratch[2*stride*stride:][:c*dv]
	W := scratch[2*stride*stride+stride*dv:][:c*dk]
	var cum float64
	for t := range c {
		g, _ := d.gate(t0 + t)
		cum += float64(g)
		G[t] = cum
	}
	// T = (I+L)⁻¹ row by row: T[t][s] = −Σ_{s≤m<t} L[t][m] T[m][s], T[t][t] = 1.
	for t := range c {
		_, beta := d.gate(t0 + t)
		kt := d.k(t0 + t)
		L := A[t*stride : t*stride+t]
		for m := range L {
			L[m] = beta * d.dot(kt, d.k(t0+m)) * expf(G[t]-G[m])
		}
		Tt := T[t*stride : t*stride+c]
		clear(Tt)
		Tt[t] = 1
		for m, l := range L {
			if l != 0 {
				d.axpy(Tt[:m+1], T[m*stride:m*stride+m+1], -l)
			}
		}
		flushTiny(Tt)
	}
	// decays holds the chunk's e^{G_t}, later e^{G_last−G_t}, and coefs
	// the coefficients of one sum at a time. Each sum adds its terms in
	// order (axpyRows), as a loop of axpy calls would; terms of factor 0
	// are added too, which changes nothing but the sign of a zero.
	decays := scratch[2*stride*stride+stride*(dk+dv):][:c]
	coefs := scratch[2*stride*stride+stride*(dk+dv)+stride:][:stride]
	for s := range c {
		decays[s] = expf(G[s])
	}
	// U = T(β⊙V), W = T(β⊙Γ⊙K).
	clear(U)
	clear(W)
	vs, ks := d.qkv[t0*d.stride+d.v0:], d.qkv[t0*d.stride+d.k0:]
	for t := range c {
		coef := coefs[:t+1]
		for s := range coef {
			_, beta := d.gate(t0 + s)
			coef[s] = T[t*stride+s] * beta
		}
		d.axpyRows(U[t*dv:(t+1)*dv], vs, coef, d.stride)
		for s := range coef {
			coef[s] *= decays[s]
		}
		d.axpyRows(W[t*dk:(t+1)*dk], ks, coef, d.stride)
	}
	flushTiny(W)
	// δ = U − W S, in U.
	for i := range W {
		W[i] = -W[i]
	}
	for t := range c {
		d.axpyRows(U[t*dv:(t+1)*dv], d.s, W[t*dk:(t+1)*dk], dv)
	}
	// o_t = Γ_t Sᵀq_t + Σ_{s≤t} (q_t·k_s) e^{G_t−G_s} δ_s.
	for t := range c {
		q, o := d.q(t0+t), d.o(t0+t)
		clear(o)
		d.axpyRows(o, d.s, q, dv)
		gt := decays[t]
		for j := range o {
			o[j] *= gt
		}
		coef := coefs[:t+1]
		for s := range coef {
			coef[s] = d.dot(q, d.k(t0+s)) * expf(G[t]-G[s])
		}
		d.axpyRows(o, U, coef, dv)
	}
	// S ← Γ_last S + Σ_s e^{G_last−G_s} k_s δ_sᵀ.
	last := G[c-1]
	decay := expf(last)
	for s := range c {
		decays[s] = expf(last - G[s])
	}
	coef := coefs[:c]
	for i := range dk {
		row := d.s[i*dv : (i+1)*dv]
		for j := range row {
			row[j] *= decay
		}
		for s := range coef {
			coef[s] = ks[s*d.stride+i] * decays[s]
		}
		d.axpyRows(row, U, coef, dv)
	}
}

// Below tinyFactor, the chunk's dimensionless factors (decays, T and W,
// all weighing sums that hold a term of factor 1: the token itself, or
// the chunk's last) are taken as 0. A factor that small is 1e-10 of
// float32's resolution, so dropping it changes nothing; kept, decays
// multiplied along T's chains become subnormal, which x86 multiplies
// about a hundred times slower (BenchmarkGatedDeltaRule).
const tinyFactor = 1e-17

// logTinyFactor is math.Log(tinyFactor) (TestLogTinyFactor), a constant
// because expf runs for every pair of a chunk's tokens and the logarithm
// cost more than the exponential.
const logTinyFactor = -39.143946580898778

// expf is e^x rounded to float32, or 0 below tinyFactor.
func expf(x float64) float32 {
	if x < logTinyFactor {
		return 0
	}
	return float32(math.Exp(x))
}

// flushTiny zeroes the elements of x smaller in magnitude than tinyFactor.
func flushTiny(x []float32) {
	for i, v := range x {
		if v > -tinyFactor && v < tinyFactor {
			x[i] = 0
		}
	}
}
