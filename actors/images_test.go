package actors

import (
	"context"
	"io"
	"log/slog"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/splash-inference/splash/engine"
	"github.com/splash-inference/splash/engine/sample"
	"github.com/splash-inference/splash/metal"
	"github.com/splash-inference/splash/metal/cpu"
	"github.com/splash-inference/splash/model"
	"github.com/splash-inference/splash/model/hybridref"
)

// tinyVLEngine starts an engine over a random hybrid model (hybridref's
// configs) and its tower when cfg has one, with state snapshots every 64
// positions, and returns it with the model and tower.
func tinyVLEngine(t testing.TB, cfg *model.Config) (*Engine, model.Model, *model.VisionTower) {
	t.Helper()
	be := cpu.New(2)
	t.Cleanup(be.Close)
	w, _ := hybridref.Random(cfg, metal.F32, 5)
	m, err := model.NewHybridModel(cfg, w, be)
	if err != nil {
		t.Fatal(err)
	}
	var tower *model.VisionTower
	if cfg.Vision != nil {
		vw, _ := hybridref.RandomVision(cfg.Vision, model.VisionPrefix, metal.F32, 6)
		if tower, err = model.NewVisionTower(cfg.Vision, vw, model.VisionPrefix, be); err != nil {
			t.Fatal(err)
		}
	}
	e, err := New(Config{Model: m, Vision: tower, Spec: "off", KVType: metal.KVF32, NewDecoder: func() TextDecoder { return idDecoder{} },
		Scheduler: engine.Config{NumBlocks: 256, BlockSize: 16, MaxBatchTokens: 128, MaxRunning: 4, StateSnapshots: 8, StateSnapshotEvery: 64},
		Logger:    slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	return e, m, tower
}

// imageRequest is a prompt of text, one image of a gridH×gridW token grid
// (random patches from seed) and more text, 100 tokens in all.
func imageRequest(v *model.VisionConfig, gridH, gridW int, seed uint64) ([]int32, engine.Image) {
	rng := rand.New(rand.NewPCG(seed, 9))
	m := v.SpatialMergeSize
	patches := make([]float32, gridH*gridW*m*m*v.PatchDim())
	for i := range patches {
		patches[i] = float32(rng.NormFloat64())
	}
	prompt := []int32{5, 6, 7, int32(v.VisionStartTokenID)}
	im := engine.Image{Start: len(prompt), GridT: 1, GridH: gridH, GridW: gridW, Patches: patches,
		Hash: engine.HashPatches(patches, 1, gridH*m, gridW*m)}
	prompt = append(prompt, slices.Repeat([]int32{int32(v.ImageTokenID)}, gridH*gridW)...)
	prompt = append(prompt, int32(v.VisionEndTokenID))
	for len(prompt) < 100 {
		prompt = append(prompt, int32(len(prompt)*7%80))
	}
	return prompt, im
}

// TestImageRequests: requests with images through the engine answer with
// the tokens and logprobs of the model run alone on the tower's
// embeddings; a resent image hits the prefix cache at the snapshot past
// it (64), another image of the same size in the same prompt does not
// (it starts before 64) and answers on its own, the tower having run
// twice (the metrics say so); a model without a tower refuses images,
// naming itself.
func TestImageRequests(t *testing.T) {
	cfg := hybridref.TinyVL(true)
	e, m, tower := tinyVLEngine(t, cfg)
	const n = 8
	prompt, first := imageRequest(cfg.Vision, 4, 6, 1)
	_, other := imageRequest(cfg.Vision, 4, 6, 2)
	for i, tc := range []struct {
		image  engine.Image
		cached int
	}{{first, 0}, {first, 64}, {other, 0}} {
		got := generateImages(t, e, prompt, []engine.Image{tc.image}, n)
		want, wantLP := greedyImageAlone(t, m, tower, prompt, tc.image, n)
		if !slices.Equal(got.tokens, want) || !slices.Equal(got.logprobs, wantLP) {
			t.Fatalf("request %d: %v %v, alone %v %v", i, got.tokens, got.logprobs, want, wantLP)
		}
		if got.usage.CachedTokens != tc.cached {
			t.Errorf("request %d: %d cached tokens, want %d", i, got.usage.CachedTokens, tc.cached)
		}
	}
	waitIdle(t, e)
	var metrics strings.Builder
	e.WriteMetrics(&metrics)
	for _, want := range []string{"splash_images_encoded_total 2\n", "splash_image_cache_hits_total 0\n"} { // the resend hit past the image
		if !strings.Contains(metrics.String(), want) {
			t.Errorf("metrics lack %q:\n%s", want, metrics.String())
		}
	}
	if got := (&Request{Prompt: prompt, Images: []engine.Image{first}, N: 2}).Sequence(1, nil); len(got.Images) != 1 || got.Images[0].Hash != first.Hash {
		t.Errorf("a choice's sequence has images %v", got.Images)
	}

	text, _, _ := tinyVLEngine(t, hybridref.Tiny("qwen3_5", false))
	if _, err := text.Generate(context.Background(), GenerateRequest{Prompt: prompt, Images: []engine.Image{first}, MaxTokens: 1}); err == nil ||
		!strings.Contains(err.Error(), "has no vision tower") {
		t.Fatalf("a text model took an image: %v", err)
	}
	bad := first
	bad.Start++
	if _, err := e.Generate(context.Background(), GenerateRequest{Prompt: prompt, Images: []engine.Image{bad}, MaxTokens: 1}); err == nil {
		t.Fatal("an image off its pad tokens was accepted")
	}
}

// greedyImageAlone is the model's greedy answer to prompt with one image,
// run alone: the prompt in one call, then a token at a time.
func greedyImageAlone(t testing.TB, m model.Model, tower *model.VisionTower, prompt []int32, im engine.Image, n int) ([]int32, []float32) {
	t.Helper()
	mm := tower.Config().SpatialMergeSize
	embeds, err := tower.Encode(im.Patches, im.GridH*mm, im.GridW*mm)
	if err != nil {
		t.Fatal(err)
	}
	spans := []model.ImageSpan{{Start: im.Start, GridT: 1, GridH: im.GridH, GridW: im.GridW, Embeds: embeds}}
	kv := model.NewCache(m, 16, 16, 1, metal.KVF32)
	blocks := make([]int32, 16)
	for i := range blocks {
		blocks[i] = int32(i)
	}
	row := model.Row{Tokens: prompt, Blocks: blocks, Logits: 1, Images: spans}
	var out []int32
	var lps []float32
	for len(out) < n {
		logits, err := m.Forward(&model.Batch{Rows: []model.Row{row}}, kv)
		if err != nil {
			t.Fatal(err)
		}
		best := int32(0)
		for i, v := range logits {
			if v > logits[best] {
				best = int32(i)
			}
		}
		out, lps = append(out, best), append(lps, sample.Logprob(logits, best))
		row = model.Row{Start: len(prompt) + len(out) - 1, Tokens: []int32{best}, Blocks: blocks, Logits: 1, Images: spans}
	}
	return out, lps
}

// generateImages runs one request with images to its end.
func generateImages(t testing.TB, e *Engine, prompt []int32, images []engine.Image, n int) result {
	t.Helper()
	ch, err := e.Generate(context.Background(), GenerateRequest{Prompt: prompt, Images: images, MaxTokens: n, Sampling: sample.Params{Logprobs: 0}})
	if err != nil {
		t.Fatal(err)
	}
	r := collect(ch)
	if r.err != nil {
		t.Fatal(r.err)
	}
	return r
}
