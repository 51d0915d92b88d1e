package model

import (
	"fmt"
	"math"

	"github.com/splash-inference/splash/metal"
)

// VisionTower is the vision encoder of Qwen3.5 and Qwen3.5-MoE: transformers'
// Qwen3_5VisionModel (models/qwen3_5/modeling_qwen3_5.py, Qwen3-VL's vision
// model without DeepStack). One image's pixel patches go in (the processor's
// layout, package imageprep); one embedding of the language model's width
// per merged block of patches comes out:
//
//	x = patches·W_patchᵀ + b           Conv3d over (frames, patch, patch) with stride = kernel
//	x += interpolated position embeddings
//	for each block:
//	    x += proj(attention(rope2D(qkv(LayerNorm1(x)))))   full attention within the image
//	    x += fc2(act(fc1(LayerNorm2(x))))
//	out = fc2(GELU(fc1(LayerNorm(x) viewed as merge² rows at a time)))
type VisionTower struct {
	cfg     *VisionConfig
	be      metal.Backend
	patch   *metal.Tensor // (hidden, PatchDim): patch_embed.proj, the Conv3d kernel flattened
	patchB  []float32     // (hidden)
	pos     []float32     // (num_position_embeddings, hidden): pos_embed
	invFreq []float32     // (headDim/4): the rotary frequencies
	blocks  []visionBlock
	merger  visionMerger
}

// visionBlock is Qwen3VLVisionBlock.
type visionBlock struct {
	norm1W, norm1B []float32     // (hidden)
	qkv            *metal.Tensor // (3·hidden, hidden): q, k, v, each heads×headDim
	qkvB           []float32     // (3·hidden)
	proj           *metal.Tensor // (hidden, hidden)
	projB          []float32     // (hidden)
	norm2W, norm2B []float32     // (hidden)
	fc1            *metal.Tensor // (intermediate, hidden)
	fc1B           []float32     // (intermediate)
	fc2            *metal.Tensor // (hidden, intermediate)
	fc2B           []float32     // (hidden)
}

// visionMerger is Qwen3VLVisionPatchMerger without the post-shuffle norm.
type visionMerger struct {
	normW, normB []float32     // (hidden): per patch, before merging
	fc1          *metal.Tensor // (merged, merged), merged = hidden·merge²
	fc1B         []float32     // (merged)
	fc2          *metal.Tensor // (out_hidden, merged)
	fc2B         []float32     // (out_hidden)
}

// VisionPrefix starts the vision tower's tensor names in Qwen3.5
// checkpoints (and in packages made from them).
const VisionPrefix = "model.visual."

// visionNormEps is the LayerNorms' eps (hard-coded 1e-6 in transformers).
const visionNormEps = 1e-6

// NewVisionTower builds the tower from tensors named prefix+"patch_embed…"
// (prefix "model.visual." in Qwen3.5 checkpoints). The Conv3d kernel
// (hidden, channels, frames, patch, patch) is read as a (hidden, PatchDim)
// matrix.
func NewVisionTower(cfg *VisionConfig, w Tensors, prefix string, be metal.Backend) (*VisionTower, error) {
	if err := cfg.Check(); err != nil {
		return nil, err
	}
	h, in := cfg.HiddenSize, cfg.IntermediateSize
	merged := h * cfg.SpatialMergeSize * cfg.SpatialMergeSize
	t := &VisionTower{cfg: cfg, be: be, invFreq: visionInvFreq(cfg.HeadDim())}
	l := weightLoader{w: w}
	t.patch = l.matrix(prefix+"patch_embed.proj.weight", h, cfg.PatchDim())
	t.patchB = l.vector(prefix+"patch_embed.proj.bias", h)
	if p := l.matrix(prefix+"pos_embed.weight", cfg.NumPositionEmbeddings, h); p != nil {
		t.pos = p.Dequantize()
	}
	t.blocks = make([]visionBlock, cfg.Depth)
	for i := range t.blocks {
		p := fmt.Sprintf("%sblocks.%d.", prefix, i)
		b := &t.blocks[i]
		b.norm1W, b.norm1B = l.vector(p+"norm1.weight", h), l.vector(p+"norm1.bias", h)
		b.qkv, b.qkvB = l.matrix(p+"attn.qkv.weight", 3*h, h), l.vector(p+"attn.qkv.bias", 3*h)
		b.proj, b.projB = l.matrix(p+"attn.proj.weight", h, h), l.vector(p+"attn.proj.bias", h)
		b.norm2W, b.norm2B = l.vector(p+"norm2.weight", h), l.vector(p+"norm2.bias", h)
		b.fc1, b.fc1B = l.matrix(p+"mlp.linear_fc1.weight", in, h), l.vector(p+"mlp.linear_fc1.bias", in)
		b.fc2, b.fc2B = l.matrix(p+"mlp.linear_fc2.weight", h, in), l.vector(p+"mlp.linear_fc2.bias", h)
	}
	m, p := &t.merger, prefix+"merger."
	m.normW, m.normB = l.vector(p+"norm.weight", h), l.vector(p+"norm.bias", h)
	m.fc1, m.fc1B = l.matrix(p+"linear_fc1.weight", merged, merged), l.vector(p+"linear_fc1.bias", merged)
	m.fc2, m.fc2B = l.matrix(p+"linear_fc2.weight", cfg.OutHiddenSize, merged), l.vector(p+"linear_fc2.bias", cfg.OutHiddenSize)
	if l.err != nil {
		return nil, fmt.Errorf("model: vision tower: %w", l.err)
	}
	if wp, ok := be.(metal.WeightPreparer); ok {
		wp.PrepareWeights(t.patch)
		for _, b := range t.blocks {
			for _, w := range []*metal.Tensor{b.qkv, b.proj, b.fc1, b.fc2} {
				wp.PrepareWeights(w)
			}
		}
		wp.PrepareWeights(m.fc1)
		wp.PrepareWeights(m.fc2)
	}
	return t, nil
}

// visionInvFreq is Qwen3VLVisionRotaryEmbedding(headDim/2)'s inv_freq:
// 1/10000^(2j/(headDim/2)) for j < headDim/4, in float32.
func visionInvFreq(headDim int) []float32 {
	dim := headDim / 2
	f := make([]float32, dim/2)
	for j := range f {
		f[j] = float32(1 / math.Pow(10000, float64(float32(2*j)/float32(dim))))
	}
	return f
}

// Config returns the tower's configuration.
func (t *VisionTower) Config() *VisionConfig { return t.cfg }

// Encode runs the tower over one still image's patches: gridH×gridW
// patches of PatchDim values in the processor's order (merge blocks
// row-major, then the patches of a block row-major; imageprep.Patches with
// grid_t 1). It returns gridH·gridW/merge² rows of OutHiddenSize values, one
// per image token, in the same block order. Like the backend it runs on,
// a tower takes one Encode at a time.
func (t *VisionTower) Encode(patches []float32, gridH, gridW int) ([]float32, error) {
	c := t.cfg
	ms := c.SpatialMergeSize
	if gridH <= 0 || gridW <= 0 || gridH%ms != 0 || gridW%ms != 0 {
		return nil, fmt.Errorf("model: vision grid %d×%d: each side must be a positive multiple of spatial_merge_size %d", gridH, gridW, ms)
	}
	n, h := gridH*gridW, c.HiddenSize
	if len(patches) != n*c.PatchDim() {
		return nil, fmt.Errorf("model: vision patches have %d values, a %d×%d grid of %d-value patches needs %d", len(patches), gridH, gridW, c.PatchDim(), n*c.PatchDim())
	}
	x := make([]float32, n*h)
	t.be.MatMul(x, patches, n, t.patch)
	addBias(x, t.patchB)
	rows, cols := patchCoords(gridH, gridW, ms)
	t.addPositions(x, rows, cols, gridH, gridW)

	s := newVisionScratch(n, c)
	for i := range t.blocks {
		t.block(&t.blocks[i], x, rows, cols, s)
	}
	return t.merge(x, n), nil
}

// patchCoords returns the image row and column of each patch in the
// processor's merge-block order (transformers' rot_pos_emb coordinates).
func patchCoords(gridH, gridW, ms int) (rows, cols []int) {
	rows, cols = make([]int, 0, gridH*gridW), make([]int, 0, gridH*gridW)
	for bh := range gridH / ms {
		for bw := range gridW / ms {
			for mh := range ms {
				for mw := range ms {
					rows = append(rows, bh*ms+mh)
					cols = append(cols, bw*ms+mw)
				}
			}
		}
	}
	return rows, cols
}

// linspace32 is torch.linspace(0, end, steps) in float32: the first half
// counted up from 0 and the second half down from end by the float32 step.
func linspace32(end float32, steps int) []float32 {
	v := make([]float32, steps)
	if steps == 1 {
		return v
	}
	step := end / float32(steps-1)
	for i := range v {
		if i < steps/2 {
			v[i] = step * float32(i)
		} else {
			v[i] = end - step*float32(steps-1-i)
		}
	}
	return v
}

// addPositions adds the learned position embeddings bilinearly
// interpolated from their side×side grid to gridH×gridW (transformers'
// fast_pos_embed_interpolate: grid coordinates linspace(0, side−1, n),
// corners floor and floor+1 clipped to the grid, weights in float32).
func (t *VisionTower) addPositions(x []float32, rows, cols []int, gridH, gridW int) {
	side := t.cfg.gridSide()
	h := t.cfg.HiddenSize
	hs, ws := linspace32(float32(side-1), gridH), linspace32(float32(side-1), gridW)
	for p := range rows {
		fy, fx := hs[rows[p]], ws[cols[p]]
		y0, x0 := int(fy), int(fx)
		y1, x1 := min(y0+1, side-1), min(x0+1, side-1)
		dy, dx := fy-float32(y0), fx-float32(x0)
		corners := [4]struct {
			idx int
			w   float32
		}{{y0*side + x0, (1 - dy) * (1 - dx)}, {y0*side + x1, (1 - dy) * dx}, {y1*side + x0, dy * (1 - dx)}, {y1*side + x1, dy * dx}}
		row := x[p*h : (p+1)*h]
		for i := range row {
			var e float32
			for _, c := range corners {
				e += t.pos[c.idx*h+i] * c.w
			}
			row[i] += e
		}
	}
}

// visionChunk is how many patches a block's QKV projection and MLP take at
// a time, so their widest activations take visionChunk rows whatever the
// image's size (Backend.MatMul is batch-invariant: chunks change no bits).
const visionChunk = 1024

// visionScratch holds one Encode's activations: whole-image rows of the
// hidden width, chunk rows of the wider ones.
type visionScratch struct {
	norm, q, k, v, attn, proj []float32 // n×hidden
	qkv                       []float32 // chunk×3·hidden
	mlp                       []float32 // chunk×intermediate
}

func newVisionScratch(n int, c *VisionConfig) *visionScratch {
	h, chunk := c.HiddenSize, min(n, visionChunk)
	return &visionScratch{norm: make([]float32, n*h), q: make([]float32, n*h), k: make([]float32, n*h),
		v: make([]float32, n*h), attn: make([]float32, n*h), proj: make([]float32, n*h),
		qkv: make([]float32, chunk*3*h), mlp: make([]float32, chunk*c.IntermediateSize)}
}

// block is one Qwen3VLVisionBlock over x (n×hidden) in place.
func (t *VisionTower) block(b *visionBlock, x []float32, rows, cols []int, s *visionScratch) {
	c, be := t.cfg, t.be
	n, h := len(rows), c.HiddenSize
	copy(s.norm, x)
	layerNorm(s.norm, b.norm1W, b.norm1B, h, visionNormEps)
	for r0 := 0; r0 < n; r0 += visionChunk {
		rn := min(visionChunk, n-r0)
		be.MatMul(s.qkv, s.norm[r0*h:], rn, b.qkv)
		addBias(s.qkv[:rn*3*h], b.qkvB)
		for r := range rn {
			row, at := s.qkv[r*3*h:], (r0+r)*h
			copy(s.q[at:at+h], row)
			copy(s.k[at:at+h], row[h:])
			copy(s.v[at:at+h], row[2*h:])
		}
	}
	rope2D(s.q, rows, cols, c.NumHeads, c.HeadDim(), t.invFreq)
	rope2D(s.k, rows, cols, c.NumHeads, c.HeadDim(), t.invFreq)
	fullAttention(be, s.attn, s.q, s.k, s.v, n, c.NumHeads, c.HeadDim())
	be.MatMul(s.proj, s.attn, n, b.proj)
	addBias(s.proj, b.projB)
	be.Add(x, s.proj)

	copy(s.norm, x)
	layerNorm(s.norm, b.norm2W, b.norm2B, h, visionNormEps)
	for r0 := 0; r0 < n; r0 += visionChunk {
		rn := min(visionChunk, n-r0)
		mlp, out := s.mlp[:rn*c.IntermediateSize], s.proj[r0*h:(r0+rn)*h]
		be.MatMul(mlp, s.norm[r0*h:], rn, b.fc1)
		addBias(mlp, b.fc1B)
		if c.HiddenAct == ActGELU {
			geluErf(mlp)
		} else {
			geluTanh(mlp)
		}
		be.MatMul(out, mlp, rn, b.fc2)
		addBias(out, b.fc2B)
	}
	be.Add(x, s.proj)
}

// merge is the patch merger: each patch LayerNormed, the merge² patches of
// a block (consecutive rows) concatenated, then fc1, exact GELU, fc2.
func (t *VisionTower) merge(x []float32, n int) []float32 {
	c, m := t.cfg, &t.merger
	layerNorm(x, m.normW, m.normB, c.HiddenSize, visionNormEps)
	tokens := n / (c.SpatialMergeSize * c.SpatialMergeSize)
	merged := m.fc1.Rows
	hid := make([]float32, tokens*merged)
	t.be.MatMul(hid, x, tokens, m.fc1)
	addBias(hid, m.fc1B)
	geluErf(hid)
	out := make([]float32, tokens*c.OutHiddenSize)
	t.be.MatMul(out, hid, tokens, m.fc2)
	addBias(out, m.fc2B)
	return out
}
