package cpu

import "math"

// GatedRMSNorm is Qwen3NextRMSNormGated (transformers,
// models/qwen3_next/modeling_qwen3_next.py), the norm a Gated DeltaNet
// layer applies to each value head's output before out_proj:
//
//	out = x / sqrt(mean(x²) + eps) · weight · silu(z)
//
// weight as stored (ones-initialised, not zero-centred like the models'
// other norms). A prompt chunk's rows are split over the pool like
// RMSNorm's (elementwise_parallel.go); a decode step's few run on the
// caller.
func (b *Backend) GatedRMSNorm(out, x, z, weight []float32, dim int, eps float32) {
	b.runElementwise(elementwiseTask{op: opGatedRMSNorm, out: out, x: x, gate: z, weight: weight[:dim], dim: dim, eps: eps}, len(x)/dim, dim)
}

// gatedRMSNormRows is GatedRMSNorm on rows [lo, hi).
func gatedRMSNormRows(out, x, z, weight []float32, dim int, eps float32, lo, hi int) {
	for r := lo * dim; r < hi*dim; r += dim {
		row, gate, o := x[r:r+dim], z[r:r+dim], out[r:r+dim]
		inv := float32(1 / math.Sqrt(sumSquaresRef(row)/float64(dim)+float64(eps)))
		for i := range row {
			o[i] = row[i] * inv * weight[i] * silu32(gate[i])
		}
	}
}

// silu32 is x·sigmoid(x) = x/(1+e^-x), with exp32 (fused_exp.go) as
// siluMul has it.
func silu32(x float32) float32 {
	return float32(x / (1 + exp32(-x)))
}
