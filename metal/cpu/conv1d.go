package cpu

// CausalConv1D is torch_causal_conv1d_update followed by SiLU
// (transformers, models/qwen3_next/modeling_qwen3_next.py), the depthwise
// convolution of a Gated DeltaNet layer over its queries, keys and values:
//
//	out[t][c] = silu(Σ_{j<kernel} weight[c][j] · xx[t+j][c])
//
// with xx the kernel-1 rows of state followed by x's rows; state keeps
// xx's last kernel-1 rows for the next call. Channels are independent, so
// they split over the pool; each is computed in the same order whatever
// the split.
func (b *Backend) CausalConv1D(out, x, state, weight []float32, rows, channels, kernel int) {
	if rows <= 0 {
		return
	}
	if len(b.linear.ones) == 0 {
		b.linear.ones = make([]float32, elemUnit)
		for i := range b.linear.ones {
			b.linear.ones[i] = 1
		}
	}
	t := &b.linear.conv
	*t = convTask{b: b, f: &b.f, ones: b.linear.ones, out: out[:rows*channels], x: x[:rows*channels], state: state[:(kernel-1)*channels],
		weight: weight[:channels*kernel], rows: rows, channels: channels, kernel: kernel}
	if rows*channels*kernel < parallelMin {
		t.run(0, units(channels), 0)
		return
	}
	b.pool.run(t, units(channels), 1)
}

// convTask is one CausalConv1D call, split by units of elemUnit channels.
type convTask struct {
	b                      *Backend
	f                      *fusedKernels
	ones                   []float32 // elemUnit ones: silu(x) is siluMul(x, 1)
	out, x, state, weight  []float32
	rows, channels, kernel int
}

func (t *convTask) run(lo, hi, w int) {
	conv1dChannels(t.f, t.b.workerScratch(w, elemUnit), t.ones, t.out, t.x, t.state, t.weight, t.rows, t.channels, t.kernel,
		lo*elemUnit, min(hi*elemUnit, t.channels))
}

// conv1dChannels convolves channels [c0, c1), row by row so that each
// row's loads and stores are contiguous, in units of at most elemUnit
// channels whose sums wait in sums (elemUnit floats of the worker's
// scratch): a row's inputs are moved into the state before its outputs
// are written, so out may alias x. SiLU is the kernel set's siluMul
// against ones (exact: a product by 1).
func conv1dChannels(f *fusedKernels, sums, ones, out, x, state, weight []float32, rows, channels, kernel, c0, c1 int) {
	keep := kernel - 1
	for u0 := c0; u0 < c1; u0 += elemUnit {
		u1 := min(u0+elemUnit, c1)
		for r := range rows {
			xr, s := x[r*channels+u0:r*channels+u1], sums[:u1-u0]
			for i := range s {
				w := weight[(u0+i)*kernel : (u0+i+1)*kernel]
				var acc float32
				for j := range keep {
					acc += w[j] * state[j*channels+u0+i]
				}
				s[i] = acc + w[keep]*xr[i]
			}
			if keep > 0 {
				for j := range keep - 1 {
					copy(state[j*channels+u0:j*channels+u1], state[(j+1)*channels+u0:(j+1)*channels+u1])
				}
				copy(state[(keep-1)*channels+u0:(keep-1)*channels+u1], xr)
			}
			f.siluMul(s, ones[:len(s)])
			copy(out[r*channels+u0:r*channels+u1], s)
		}
	}
}
