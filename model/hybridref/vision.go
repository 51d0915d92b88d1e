package hybridref

import (
	"math"
	"math/rand/v2"
	"strconv"

	"github.com/splash-inference/splash/metal"
	"github.com/splash-inference/splash/model"
)

// This file holds a float64 forward pass of the Qwen3.5 vision tower,
// written from transformers' modeling_qwen3_vl.py / modeling_qwen3_5.py
// (Qwen3VLVisionModel.forward, rot_pos_emb, fast_pos_embed_interpolate,
// Qwen3VLVisionBlock, Qwen3VLVisionPatchMerger) in their own terms: the
// position embeddings interpolated over the row-major grid and then
// permuted by view/permute, the rotary table indexed by stacked
// coordinates, attention as explicit sums. It shares no code with the tower.

// TinyVision is a vision tower shaped like Qwen3.5's, scaled down: heads
// of 16 (2-D rotary over quarters of 4), a 4×4 position grid, 2×2 patches
// over 2 frames, 2×2 merging, into a text model of width outHidden.
func TinyVision(outHidden int) *model.VisionConfig {
	return &model.VisionConfig{Depth: 2, HiddenSize: 32, HiddenAct: model.ActGELUTanh, IntermediateSize: 48, NumHeads: 2,
		InChannels: 3, PatchSize: 2, SpatialMergeSize: 2, TemporalPatchSize: 2, OutHiddenSize: outHidden,
		NumPositionEmbeddings: 16}
}

// RandomVision draws a vision tower's weights under prefix (matrices as
// d, vectors f32) and returns them with their exact float64 values.
func RandomVision(c *model.VisionConfig, prefix string, d metal.DType, seed uint64) (Tensors, Weights) {
	g := &hybridWeights{rng: rand.New(rand.NewPCG(seed, 5)), d: d, mt: Tensors{}, rw: Weights{}}
	h, in := c.HiddenSize, c.IntermediateSize
	merged := h * c.SpatialMergeSize * c.SpatialMergeSize
	normal := func(std float64) func() float64 { return func() float64 { return std * g.rng.NormFloat64() } }
	near1 := func() float64 { return 1 + 0.1*g.rng.NormFloat64() }
	mat := func(name string, rows, cols int) {
		g.put(name+".weight", rows, cols, d, normal(1/math.Sqrt(float64(cols))))
		g.put(name+".bias", 1, rows, metal.F32, normal(0.1))
	}
	norm := func(name string) {
		g.put(name+".weight", 1, h, metal.F32, near1)
		g.put(name+".bias", 1, h, metal.F32, normal(0.1))
	}
	mat(prefix+"patch_embed.proj", h, c.PatchDim())
	g.put(prefix+"pos_embed.weight", c.NumPositionEmbeddings, h, d, normal(0.5))
	for i := range c.Depth {
		p := prefix + "blocks." + strconv.Itoa(i) + "."
		norm(p + "norm1")
		mat(p+"attn.qkv", 3*h, h)
		mat(p+"attn.proj", h, h)
		norm(p + "norm2")
		mat(p+"mlp.linear_fc1", in, h)
		mat(p+"mlp.linear_fc2", h, in)
	}
	norm(prefix + "merger.norm")
	mat(prefix+"merger.linear_fc1", merged, merged)
	mat(prefix+"merger.linear_fc2", c.OutHiddenSize, merged)
	return g.mt, g.rw
}

// refAffine is y = x·Wᵀ + b (nn.Linear with a bias) for rows of x.
func refAffine(x []float64, w, b []float64, in, out int) []float64 {
	n := len(x) / in
	y := make([]float64, n*out)
	for r := range n {
		for o := range out {
			s := b[o]
			for i := range in {
				s += x[r*in+i] * w[o*in+i]
			}
			y[r*out+o] = s
		}
	}
	return y
}

func refLayerNorm(x, w, b []float64, dim int) []float64 {
	y := make([]float64, len(x))
	for r := 0; r < len(x); r += dim {
		var mean, v float64
		for _, e := range x[r : r+dim] {
			mean += e
		}
		mean /= float64(dim)
		for _, e := range x[r : r+dim] {
			v += (e - mean) * (e - mean)
		}
		v /= float64(dim)
		for i := range dim {
			y[r+i] = (x[r+i]-mean)/math.Sqrt(v+1e-6)*w[i] + b[i]
		}
	}
	return y
}

// Vision is Qwen3_5VisionModel's output (the merger's) for one image:
// pixel values (gridH·gridW, PatchDim) and grid_thw (1, gridH, gridW);
// gridH·gridW/merge² rows of out_hidden_size.
func Vision(c *model.VisionConfig, w Weights, prefix string, pixels []float32, gridH, gridW int) []float64 {
	h := c.HiddenSize
	px := make([]float64, len(pixels))
	for i, v := range pixels {
		px[i] = float64(v)
	}
	// Qwen3VLVisionPatchEmbed: Conv3d with stride = kernel over each patch
	// viewed as (C, T, P, P): one dot product per output channel.
	x := refAffine(px, w[prefix+"patch_embed.proj.weight"], w[prefix+"patch_embed.proj.bias"], c.PatchDim(), h)
	refAddPosEmbed(c, w[prefix+"pos_embed.weight"], x, gridH, gridW)
	angles := refVisionAngles(c, gridH, gridW)
	for blk := range c.Depth {
		refVisionBlock(c, w, prefix+"blocks."+strconv.Itoa(blk)+".", x, angles)
	}
	// Qwen3VLVisionPatchMerger(use_postshuffle_norm=False): norm, then
	// view(-1, hidden·m²), fc1, nn.GELU() (exact), fc2.
	p := prefix + "merger."
	nx := refLayerNorm(x, w[p+"norm.weight"], w[p+"norm.bias"], h)
	merged := h * c.SpatialMergeSize * c.SpatialMergeSize
	f1 := refAffine(nx, w[p+"linear_fc1.weight"], w[p+"linear_fc1.bias"], merged, merged)
	for i := range f1 {
		f1[i] = 0.5 * f1[i] * (1 + math.Erf(f1[i]/math.Sqrt2))
	}
	return refAffine(f1, w[p+"linear_fc2.weight"], w[p+"linear_fc2.bias"], merged, c.OutHiddenSize)
}

// refAddPosEmbed adds fast_pos_embed_interpolate's position embeddings to
// the patches x, which come in merge-block order.
func refAddPosEmbed(c *model.VisionConfig, pe, x []float64, gridH, gridW int) {
	h, m := c.HiddenSize, c.SpatialMergeSize
	// For the row-major grid, bilinear weights of the four corners at
	// linspace(0, side−1, n) …
	side := int(math.Sqrt(float64(c.NumPositionEmbeddings)))
	lin := func(steps int) []float64 {
		v := make([]float64, steps)
		for i := range v {
			if steps > 1 {
				v[i] = float64(i) * float64(side-1) / float64(steps-1)
			}
		}
		return v
	}
	hIdx, wIdx := lin(gridH), lin(gridW)
	grid := make([]float64, gridH*gridW*h) // row-major (i, j)
	for i := range gridH {
		for j := range gridW {
			hf, wf := math.Floor(hIdx[i]), math.Floor(wIdx[j])
			hc, wc := math.Min(hf+1, float64(side-1)), math.Min(wf+1, float64(side-1))
			dh, dw := hIdx[i]-hf, wIdx[j]-wf
			terms := []struct {
				y, x, wt float64
			}{{hf, wf, (1 - dh) * (1 - dw)}, {hf, wc, (1 - dh) * dw}, {hc, wf, dh * (1 - dw)}, {hc, wc, dh * dw}}
			for _, t := range terms {
				e := pe[(int(t.y)*side+int(t.x))*h:]
				for d := range h {
					grid[(i*gridW+j)*h+d] += t.wt * e[d]
				}
			}
		}
	}
	// … then view(t, h/m, m, w/m, m, -1).permute(0, 1, 3, 2, 4, 5): output
	// index (a, b, c, d) over (h/m, w/m, m, m) reads input (a, c, b, d).
	out := 0
	for a := range gridH / m {
		for b := range gridW / m {
			for cc := range m {
				for d := range m {
					src := ((a*m+cc)*gridW + b*m + d) * h
					for e := range h {
						x[out*h+e] += grid[src+e]
					}
					out++
				}
			}
		}
	}
}

// refVisionAngles is rot_pos_emb: per patch (row, col) in merge-block
// order, cat(freqs, freqs) of the table outer(arange, inv_freq) of
// Qwen3VLVisionRotaryEmbedding(head_dim/2).
func refVisionAngles(c *model.VisionConfig, gridH, gridW int) [][]float64 {
	hd, m := c.HiddenSize/c.NumHeads, c.SpatialMergeSize
	dim := hd / 2
	invFreq := make([]float64, dim/2)
	for j := range invFreq {
		invFreq[j] = 1 / math.Pow(10000, float64(2*j)/float64(dim))
	}
	angles := make([][]float64, 0, gridH*gridW) // (n, hd)
	for a := range gridH / m {
		for b := range gridW / m {
			for cc := range m {
				for d := range m {
					row, col := a*m+cc, b*m+d
					f := make([]float64, 0, hd)
					for _, v := range invFreq {
						f = append(f, float64(row)*v)
					}
					for _, v := range invFreq {
						f = append(f, float64(col)*v)
					}
					angles = append(angles, append(f, f...))
				}
			}
		}
	}
	return angles
}

// refVisionBlock is one Qwen3VLVisionBlock over x in place: pre-norm
// full attention with 2-D rotary, then a pre-norm GELU MLP.
func refVisionBlock(c *model.VisionConfig, w Weights, p string, x []float64, angles [][]float64) {
	h, heads := c.HiddenSize, c.NumHeads
	hd, n := h/heads, len(angles)
	rotate := func(v []float64, ang []float64) { // q·cos + rotate_half(q)·sin
		r := make([]float64, hd)
		for i := range hd {
			var rh float64
			if i < hd/2 {
				rh = -v[i+hd/2]
			} else {
				rh = v[i-hd/2]
			}
			r[i] = v[i]*math.Cos(ang[i]) + rh*math.Sin(ang[i])
		}
		copy(v, r)
	}
	gelu := func(v float64) float64 {
		if c.HiddenAct == model.ActGELU {
			return 0.5 * v * (1 + math.Erf(v/math.Sqrt2))
		}
		return 0.5 * v * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(v+0.044715*v*v*v)))
	}
	nx := refLayerNorm(x, w[p+"norm1.weight"], w[p+"norm1.bias"], h)
	qkv := refAffine(nx, w[p+"attn.qkv.weight"], w[p+"attn.qkv.bias"], h, 3*h)
	// reshape(n, 3, heads, hd): q, k, v per head
	head := func(r, which, hh int) []float64 {
		return qkv[r*3*h+which*h+hh*hd:][:hd]
	}
	att := make([]float64, n*h)
	for hh := range heads {
		for r := range n {
			rotate(head(r, 0, hh), angles[r])
			rotate(head(r, 1, hh), angles[r])
		}
		for i := range n {
			attend(att[i*h+hh*hd:][:hd], head(i, 0, hh), n,
				func(j int) []float64 { return head(j, 1, hh) }, func(j int) []float64 { return head(j, 2, hh) })
		}
	}
	pr := refAffine(att, w[p+"attn.proj.weight"], w[p+"attn.proj.bias"], h, h)
	for i := range x {
		x[i] += pr[i]
	}
	nx = refLayerNorm(x, w[p+"norm2.weight"], w[p+"norm2.bias"], h)
	f1 := refAffine(nx, w[p+"mlp.linear_fc1.weight"], w[p+"mlp.linear_fc1.bias"], h, c.IntermediateSize)
	for i := range f1 {
		f1[i] = gelu(f1[i])
	}
	f2 := refAffine(f1, w[p+"mlp.linear_fc2.weight"], w[p+"mlp.linear_fc2.bias"], c.IntermediateSize, h)
	for i := range x {
		x[i] += f2[i]
	}
}
