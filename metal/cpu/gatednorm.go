package cpu

import "math"

// GatedRMSNorm is Qwen3NextRMSNormGated (transformers,
// models/qwen3_next/modeling_qwen3_next.py), the norm a Gated DeltaNet
// layer applies to each value head's output before out_proj:
//
//	out = x / sqrt(mean(x²) + eps) · weight · silu(z)
//
// weight as stored (ones-initialised, not zero-centred like the models'
// other norms). Rows are short (a value head), so it runs on the caller.
func (b *Backend) GatedRMSNorm(out, x, z, weight []float32, dim int, eps float32) {
	weight = weight[:dim]
	for r := 0; r+dim <= len(x); r += dim {
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
