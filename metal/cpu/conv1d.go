package cpu

import "math"

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
	t := &b.linear.conv
	*t = convTask{out: out[:rows*channels], x: x[:rows*channels], state: state[:(kernel-1)*channels],
		weight: weight[:channels*kernel], rows: rows, channels: channels, kernel: kernel}
	if rows*channels*kernel < parallelMin {
		t.run(0, units(channels), 0)
		return
	}
	b.pool.run(t, units(channels), 1)
}

// convTask is one CausalConv1D call, split by units of elemUnit channels.
type convTask struct {
	out, x, state, weight  []float32
	rows, channels, kernel int
}

func (t *convTask) run(lo, hi, _ int) {
	conv1dChannels(t.out, t.x, t.state, t.weight, t.rows, t.channels, t.kernel,
		lo*elemUnit, min(hi*elemUnit, t.channels))
}

// conv1dChannels convolves channels [c0, c1). A channel's window (the
// last kernel inputs) is kept in registers-sized scratch on the stack for
// the usual widths (kernel ≤ 8), so out may alias x: each input is read
// before its output is written.
func conv1dChannels(out, x, state, weight []float32, rows, channels, kernel, c0, c1 int) {
	const maxKernel = 8
	var buf [maxKernel]float32
	var win []float32
	if kernel <= maxKernel {
		win = buf[:kernel]
	} else {
		win = make([]float32, kernel)
	}
	keep := kernel - 1
	for c := c0; c < c1; c++ {
		w := weight[c*kernel : (c+1)*kernel]
		for j := range keep {
			win[j] = state[j*channels+c]
		}
		for r := range rows {
			win[keep] = x[r*channels+c]
			var s float32
			for j, wj := range w {
				s += wj * win[j]
			}
			out[r*channels+c] = silu32(s)
			copy(win, win[1:])
		}
		for j := range keep {
			state[j*channels+c] = win[j]
		}
	}
}

// silu32 is x·sigmoid(x) = x/(1+e^-x).
func silu32(x float32) float32 {
	return float32(float64(x) / (1 + math.Exp(-float64(x))))
}
