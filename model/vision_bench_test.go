package model

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/splash-inference/splash/metal"
	"github.com/splash-inference/splash/metal/cpu"
)

// qwen35VisionTower0_8B is Qwen3.5-0.8B's vision_config.
func qwen35VisionTower0_8B() *VisionConfig {
	return &VisionConfig{Depth: 12, HiddenSize: 768, HiddenAct: ActGELUTanh, IntermediateSize: 3072, NumHeads: 12,
		InChannels: 3, PatchSize: 16, SpatialMergeSize: 2, TemporalPatchSize: 2, OutHiddenSize: 1024,
		NumPositionEmbeddings: 2304}
}

// benchVisionWeights builds a tower of random bf16 weights (the
// checkpoints' type); unlike hybridref.RandomVision it keeps no float64 copy.
func benchVisionWeights(b *testing.B, c *VisionConfig, prefix string, be metal.Backend) *VisionTower {
	b.Helper()
	rng := rand.New(rand.NewPCG(1, 1))
	h, in := c.HiddenSize, c.IntermediateSize
	merged := h * c.SpatialMergeSize * c.SpatialMergeSize
	mt := memTensors{}
	put := func(name string, rows, cols int, std float32) {
		v := make([]float32, rows*cols)
		for i := range v {
			v[i] = std * float32(rng.NormFloat64())
		}
		t, err := metal.Quantize(metal.BF16, v, rows, cols)
		if err != nil {
			b.Fatal(err)
		}
		mt[name] = t
	}
	lin := func(name string, rows, cols int) {
		put(name+".weight", rows, cols, 0.02)
		put(name+".bias", 1, rows, 0.02)
	}
	norm := func(name string) {
		put(name+".weight", 1, h, 1)
		put(name+".bias", 1, h, 0.02)
	}
	lin(prefix+"patch_embed.proj", h, c.PatchDim())
	put(prefix+"pos_embed.weight", c.NumPositionEmbeddings, h, 0.02)
	for i := range c.Depth {
		p := fmt.Sprintf("%sblocks.%d.", prefix, i)
		norm(p + "norm1")
		norm(p + "norm2")
		lin(p+"attn.qkv", 3*h, h)
		lin(p+"attn.proj", h, h)
		lin(p+"mlp.linear_fc1", in, h)
		lin(p+"mlp.linear_fc2", h, in)
	}
	norm(prefix + "merger.norm")
	lin(prefix+"merger.linear_fc1", merged, merged)
	lin(prefix+"merger.linear_fc2", c.OutHiddenSize, merged)
	tower, err := NewVisionTower(c, mt, prefix, be)
	if err != nil {
		b.Fatal(err)
	}
	return tower
}

// BenchmarkVisionEncode0_8B encodes one square image with Qwen3.5-0.8B's
// tower (random bf16 weights) on 2 threads and reports ms per megapixel
// of the resized image. The time grows faster than the pixels: attention
// is quadratic in the patches.
func BenchmarkVisionEncode0_8B(b *testing.B) {
	c := qwen35VisionTower0_8B()
	be := cpu.New(2)
	defer be.Close()
	tower := benchVisionWeights(b, c, "model.visual.", be)
	for _, side := range []int{128, 256} {
		b.Run(fmt.Sprintf("%dx%d", side, side), func(b *testing.B) {
			g := side / c.PatchSize
			patches := make([]float32, g*g*c.PatchDim())
			for i := range patches {
				patches[i] = float32(i%255)/127 - 1
			}
			b.ResetTimer()
			start := time.Now()
			for range b.N {
				if _, err := tower.Encode(patches, g, g); err != nil {
					b.Fatal(err)
				}
			}
			mp := float64(side*side) / 1e6
			b.ReportMetric(float64(time.Since(start).Milliseconds())/float64(b.N)/mp, "ms/MP")
		})
	}
}
