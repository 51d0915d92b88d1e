package cpu

import "math"

// deltaChunkScratch is the float32s deltaChunked needs for chunks of
// length chunk.
func deltaChunkScratch(chunk, dk, dv int) int {
	return chunk + 2*chunk*chunk + chunk*(dk+dv)
}

// deltaChunked runs rows tokens in chunks of chunk tokens, the WY form of
// torch_chunk_gated_delta_rule (transformers,
// models/qwen3_next/modeling_qwen3_next.py). Within a chunk, with
// G_t = Σ_{s≤t} g_s and Γ_t = e^{G_t} (positions counted from the chunk's
// start, S the state before it):
//
//	L[t][s] = β_t (k_t·k_s) e^{G_t−G_s} for s < t,  T = (I + L)⁻¹ (forward substitution)
//	U = T (β ⊙ V),  W = T (β ⊙ Γ ⊙ K)
//	δ = U − W S                       (the δ_t of the token loop, all at once)
//	o_t = Γ_t Sᵀq_t + Σ_{s≤t} (q_t·k_s) e^{G_t−G_s} δ_s
//	S ← Γ_last S + Σ_s e^{G_last−G_s} k_s δ_sᵀ
//
// Every exponent is ≤ 0 (g ≤ 0), so nothing overflows. scratch holds
// deltaChunkScratch(chunk, dk, dv) floats.
func deltaChunked(d *deltaHead, rows, chunk int, scratch []float32) {
	for t0 := 0; t0 < rows; t0 += chunk {
		deltaOneChunk(d, t0, min(chunk, rows-t0), chunk, scratch)
	}
}

// deltaOneChunk runs the c tokens from t0; stride is the chunk length the
// scratch was laid out for.
func deltaOneChunk(d *deltaHead, t0, c, stride int, scratch []float32) {
	dk, dv := d.dk, d.dv
	G := scratch[:c]
	T := scratch[stride : stride+stride*stride]
	A := scratch[stride+stride*stride : stride+2*stride*stride]
	U := scratch[stride+2*stride*stride:][:c*dv]
	W := scratch[stride+2*stride*stride+stride*dv:][:c*dk]
	var cum float32
	for t := range c {
		g, _ := d.gate(t0 + t)
		cum += g
		G[t] = cum
	}
	// T = (I+L)⁻¹ row by row: T[t][s] = −Σ_{s≤m<t} L[t][m] T[m][s], T[t][t] = 1.
	for t := range c {
		_, beta := d.gate(t0 + t)
		kt := d.k(t0 + t)
		L := A[t*stride : t*stride+t]
		for m := range L {
			L[m] = beta * dot(kt, d.k(t0+m)) * exp32f(G[t]-G[m])
		}
		Tt := T[t*stride : t*stride+c]
		clear(Tt)
		Tt[t] = 1
		for m, l := range L {
			if l != 0 {
				axpy(Tt[:m+1], T[m*stride:m*stride+m+1], -l)
			}
		}
	}
	// U = T(β⊙V), W = T(β⊙Γ⊙K).
	clear(U)
	clear(W)
	for t := range c {
		Ut, Wt := U[t*dv:(t+1)*dv], W[t*dk:(t+1)*dk]
		for s := 0; s <= t; s++ {
			_, beta := d.gate(t0 + s)
			ts := T[t*stride+s] * beta
			axpy(Ut, d.v(t0+s), ts)
			axpy(Wt, d.k(t0+s), ts*exp32f(G[s]))
		}
	}
	// δ = U − W S, in U.
	for t := range c {
		Ut, Wt := U[t*dv:(t+1)*dv], W[t*dk:(t+1)*dk]
		for i, w := range Wt {
			axpy(Ut, d.s[i*dv:(i+1)*dv], -w)
		}
	}
	// o_t = Γ_t Sᵀq_t + Σ_{s≤t} (q_t·k_s) e^{G_t−G_s} δ_s.
	for t := range c {
		q, o := d.q(t0+t), d.o(t0+t)
		clear(o)
		for i, qi := range q {
			axpy(o, d.s[i*dv:(i+1)*dv], qi)
		}
		gt := exp32f(G[t])
		for j := range o {
			o[j] *= gt
		}
		for s := 0; s <= t; s++ {
			a := dot(q, d.k(t0+s)) * exp32f(G[t]-G[s])
			axpy(o, U[s*dv:(s+1)*dv], a)
		}
	}
	// S ← Γ_last S + Σ_s e^{G_last−G_s} k_s δ_sᵀ.
	last := G[c-1]
	decay := exp32f(last)
	for i := range dk {
		row := d.s[i*dv : (i+1)*dv]
		for j := range row {
			row[j] *= decay
		}
		for s := range c {
			axpy(row, U[s*dv:(s+1)*dv], d.k(t0 + s)[i]*exp32f(last-G[s]))
		}
	}
}

// exp32f is e^x computed in float64 and rounded.
func exp32f(x float32) float32 { return float32(math.Exp(float64(x))) }
