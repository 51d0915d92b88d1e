package model_test

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/splash-inference/splash/metal"
	"github.com/splash-inference/splash/metal/cpu"
	"github.com/splash-inference/splash/model"
	"github.com/splash-inference/splash/model/hybridref"
)

// TestVisionTowerFromSafetensors: a tower saved as checkpoints hold it
// (bfloat16 matrices, the patch embedding as its 5-D Conv3d kernel
// (hidden, channels, frames, patch, patch), vectors 1-D) and read back
// through the safetensors parser gives the reference's embeddings.
func TestVisionTowerFromSafetensors(t *testing.T) {
	const prefix = "model.visual."
	cfg := tinyVision()
	mt, rw := hybridref.RandomVision(cfg, prefix, metal.BF16, 9)
	var sts []model.STTensor
	for name, w := range mt {
		shape := []int{w.Rows, w.Cols}
		switch {
		case strings.HasSuffix(name, "patch_embed.proj.weight"):
			shape = []int{w.Rows, cfg.InChannels, cfg.TemporalPatchSize, cfg.PatchSize, cfg.PatchSize}
		case w.Rows == 1:
			shape = []int{w.Cols}
		}
		sts = append(sts, model.STTensor{Name: name, DType: w.DType, Shape: shape, Data: w.Data})
	}
	path := filepath.Join(t.TempDir(), "model.safetensors")
	if err := model.WriteSafetensors(path, sts); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	set, err := model.ParseSafetensorsSet(data)
	if err != nil {
		t.Fatal(err)
	}
	be := cpu.New(1)
	defer be.Close()
	tower, err := model.NewVisionTower(cfg, set, prefix, be)
	if err != nil {
		t.Fatal(err)
	}
	const gh, gw = 6, 4
	patches := make([]float32, gh*gw*cfg.PatchDim())
	for i := range patches {
		patches[i] = float32(math.Sin(float64(i)))
	}
	got, err := tower.Encode(patches, gh, gw)
	if err != nil {
		t.Fatal(err)
	}
	want := hybridref.Vision(cfg, rw, prefix, patches, gh, gw)
	for i := range want {
		if math.Abs(float64(got[i])-want[i]) > 1e-4*max(1, math.Abs(want[i])) {
			t.Fatalf("value %d = %v, reference %v", i, got[i], want[i])
		}
	}
}
