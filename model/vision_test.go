package model_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/splash-inference/splash/imageprep"
	"github.com/splash-inference/splash/metal"
	"github.com/splash-inference/splash/metal/cpu"
	"github.com/splash-inference/splash/model"
	"github.com/splash-inference/splash/model/hybridref"
)

// tinyVision is hybridref.TinyVision into a text model 24 wide.
func tinyVision() *model.VisionConfig { return hybridref.TinyVision(24) }

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
		{"valid size", 24, 16, model.ActGELUTanh, 8, 12},
		{"needs resize", 30, 21, model.ActGELUTanh, 10, 16}, // 21/4 = 5.25 → 5 blocks, 30/4 = 7.5 → 8 (half to even)
		{"grid of the position table", 8, 8, model.ActGELU, 4, 4},
		{"more patches than a chunk", 68, 64, model.ActGELUTanh, 32, 34}, // more than the tower takes at a time (visionChunk)
	}
	be := cpu.New(2)
	defer be.Close()
	rng := rand.New(rand.NewPCG(3, 4))
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tinyVision()
			cfg.HiddenAct = tc.act
			mt, rw := hybridref.RandomVision(cfg, prefix, metal.F32, uint64(i))
			tower, err := model.NewVisionTower(cfg, mt, prefix, be)
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
			want := hybridref.Vision(cfg, rw, prefix, p.Data, p.GridH, p.GridW)
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
	mt, _ := hybridref.RandomVision(cfg, "v.", metal.F32, 1)
	be := cpu.New(1)
	defer be.Close()
	tower, err := model.NewVisionTower(cfg, mt, "v.", be)
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
	if _, err := model.NewVisionTower(cfg, mt, "v.", be); err == nil {
		t.Error("a tower missing a tensor was built")
	}
}
