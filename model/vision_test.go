package model

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/splash-inference/splash/imageprep"
	"github.com/splash-inference/splash/metal"
	"github.com/splash-inference/splash/metal/cpu"
)

// tinyVision is a vision tower shaped like Qwen3.5's, scaled down: heads of
// 16 (2-D rotary over quarters of 4), a 4×4 position grid, 2×2 patches
// over 2 frames, 2×2 merging.
func tinyVision() *VisionConfig {
	return &VisionConfig{Depth: 2, HiddenSize: 32, HiddenAct: ActGELUTanh, IntermediateSize: 48, NumHeads: 2,
		InChannels: 3, PatchSize: 2, SpatialMergeSize: 2, TemporalPatchSize: 2, OutHiddenSize: 24,
		NumPositionEmbeddings: 16}
}

// TestVisionTowerMatchesReference: the tower's embeddings of images run
// through the processor (one already at a valid size, one that smart_resize
// and Pillow's bicubic resize, one whose grid is the position grid's) match
// the float64 reference from transformers' source.
func TestVisionTowerMatchesReference(t *testing.T) {
	const prefix = "model.visual."
	proc := imageprep.Processor{PatchSize: 2, TemporalPatchSize: 2, MergeSize: 2, MinPixels: 0, MaxPixels: 1 << 20,
		RescaleFactor: 1.0 / 255, Mean: [3]float64{0.5, 0.5, 0.5}, Std: [3]float64{0.5, 0.5, 0.5}}
	tests := []struct {
		name                string
		w, h                int
		act                 string
		wantGridH, wantGrid int
	}{
		{"valid size", 24, 16, ActGELUTanh, 8, 12},
		{"needs resize", 30, 21, ActGELUTanh, 10, 16}, // 21/4 = 5.25 → 5 blocks, 30/4 = 7.5 → 8 (half to even)
		{"grid of the position table", 8, 8, ActGELU, 4, 4},
		{"more patches than a chunk", 68, 64, ActGELUTanh, 32, 34}, // 1088 > visionChunk
	}
	be := cpu.New(2)
	defer be.Close()
	rng := rand.New(rand.NewPCG(3, 4))
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tinyVision()
			cfg.HiddenAct = tc.act
			mt, rw := randomVision(cfg, prefix, metal.F32, uint64(i))
			tower, err := NewVisionTower(cfg, mt, prefix, be)
			if err != nil {
				t.Fatal(err)
			}
			img := imageprep.NewRGB(tc.w, tc.h)
			for j := range img.Pix {
				img.Pix[j] = uint8(rng.IntN(256))
			}
			p, err := proc.Patches(img)
			if err != nil {
				t.Fatal(err)
			}
			if p.GridH != tc.wantGridH || p.GridW != tc.wantGrid {
				t.Fatalf("grid %d×%d, want %d×%d", p.GridH, p.GridW, tc.wantGridH, tc.wantGrid)
			}
			got, err := tower.Encode(p.Data, p.GridH, p.GridW)
			if err != nil {
				t.Fatal(err)
			}
			want := refVision(cfg, rw, prefix, p.Data, p.GridH, p.GridW)
			if len(got) != len(want) || len(got) != p.GridH*p.GridW/4*cfg.OutHiddenSize {
				t.Fatalf("%d values, reference %d", len(got), len(want))
			}
			var maxDiff, maxAbs float64
			for j := range got {
				maxDiff = max(maxDiff, math.Abs(float64(got[j])-want[j]))
				maxAbs = max(maxAbs, math.Abs(want[j]))
			}
			if maxDiff > 1e-4*max(1, maxAbs) {
				t.Fatalf("max |tower − reference| = %g (max |reference| %g)", maxDiff, maxAbs)
			}
		})
	}
}

func TestVisionTowerRefusesBadGrid(t *testing.T) {
	cfg := tinyVision()
	mt, _ := randomVision(cfg, "v.", metal.F32, 1)
	be := cpu.New(1)
	defer be.Close()
	tower, err := NewVisionTower(cfg, mt, "v.", be)
	if err != nil {
		t.Fatal(err)
	}
	dim := cfg.PatchDim()
	tests := []struct {
		name   string
		values int
		gh, gw int
	}{
		{"odd grid", 3 * 4 * dim, 3, 4},
		{"empty grid", 0, 0, 4},
		{"short patches", 4*4*dim - 1, 4, 4},
	}
	for _, tc := range tests {
		if _, err := tower.Encode(make([]float32, tc.values), tc.gh, tc.gw); err == nil {
			t.Errorf("%s: accepted", tc.name)
		}
	}
	delete(mt, "v.blocks.1.attn.qkv.bias")
	if _, err := NewVisionTower(cfg, mt, "v.", be); err == nil {
		t.Error("a tower missing a tensor was built")
	}
}
