package model

import (
	"fmt"
	"sort"
	"strings"

	"github.com/splash-inference/splash/metal"
)

// packTensor is one tensor Pack writes.
type packTensor struct {
	name string
	t    *metal.Tensor
}

// packTensors lists the tensors Pack writes, in name order: the
// checkpoint's, except a hybrid model's multi-token-prediction head
// (mtp.*, which Splash does not run), and with fused experts
// (experts.gate_up_proj, experts.down_proj) split into one tensor per
// expert and projection, the layout loadMoE also reads: a quantized
// matrix cannot be cut into experts in place, since its scales sit apart
// from its quants.
func packTensors(cfg *Config, ts Tensors) ([]packTensor, error) {
	var out []packTensor
	l := weightLoader{w: ts}
	for _, name := range ts.Names() {
		t, err := ts.Tensor(name)
		if err != nil {
			return nil, err
		}
		y := cfg.Hybrid
		switch {
		case y == nil:
		case strings.HasPrefix(name, "mtp."):
			continue
		case strings.HasSuffix(name, ".experts.gate_up_proj"):
			p, in := strings.TrimSuffix(name, "gate_up_proj"), y.MoEIntermediateSize
			for e := range y.NumExperts {
				out = append(out,
					packTensor{fmt.Sprintf("%s%d.gate_proj.weight", p, e), l.rows(name, t, 2*e*in, (2*e+1)*in)},
					packTensor{fmt.Sprintf("%s%d.up_proj.weight", p, e), l.rows(name, t, (2*e+1)*in, (2*e+2)*in)})
			}
			continue
		case strings.HasSuffix(name, ".experts.down_proj"):
			p, h := strings.TrimSuffix(name, "down_proj"), cfg.HiddenSize
			for e := range y.NumExperts {
				out = append(out, packTensor{fmt.Sprintf("%s%d.down_proj.weight", p, e), l.rows(name, t, e*h, (e+1)*h)})
			}
			continue
		}
		out = append(out, packTensor{name, t})
	}
	if l.err != nil {
		return nil, l.err
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out, nil
}

// packedType is the dtype the named tensor gets in a package of the given
// quantization: vectors, and a hybrid model's convolution (a few floats a
// channel, dequantized at load anyway), stay f32; a mixture of experts'
// router and shared-expert gate, whose small errors move tokens between
// experts, are at least q8; other matrices take quant when their rows
// split into whole groups, else the nearest float type.
func packedType(name string, t *metal.Tensor, quant metal.DType) metal.DType {
	switch {
	case t.Rows == 1 || strings.HasSuffix(name, ".conv1d.weight"):
		return metal.F32
	case quant.Quantized() && t.Cols%metal.GroupSize != 0:
		return metal.BF16
	case quant == metal.Q4 && (strings.HasSuffix(name, ".mlp.gate.weight") || strings.HasSuffix(name, ".shared_expert_gate.weight")):
		return metal.Q8
	}
	return quant
}
