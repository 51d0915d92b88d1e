package model_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/splash-inference/splash/imageprep"
	"github.com/splash-inference/splash/metal"
	"github.com/splash-inference/splash/metal/cpu"
	"github.com/splash-inference/splash/model"
	"github.com/splash-inference/splash/model/hybridref"
	"github.com/splash-inference/splash/model/testmodel"
)

// tinyProcessor prepares images for hybridref.TinyVision's 2×2 patches.
func tinyProcessor() imageprep.Processor {
	return imageprep.Processor{PatchSize: 2, TemporalPatchSize: 2, MergeSize: 2, MinPixels: 0, MaxPixels: 1 << 20,
		RescaleFactor: 1.0 / 255, Mean: [3]float64{0.5, 0.5, 0.5}, Std: [3]float64{0.5, 0.5, 0.5}}
}

// randomPatches draws a w×h image and runs it through p.
func randomPatches(t *testing.T, p imageprep.Processor, w, h int, seed uint64) imageprep.Patches {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 1))
	img := imageprep.NewRGB(w, h)
	for j := range img.Pix {
		img.Pix[j] = uint8(rng.IntN(256))
	}
	ps, err := p.Patches(img)
	if err != nil {
		t.Fatal(err)
	}
	return ps
}

// TestHybridImagesMatchReference runs prompts holding images (one 12×8
// already at a valid size, one 15×11 that smart_resize and the bicubic
// resize bring to 16×12) through the tower and the language model, in
// prompt chunks that cut through the images and token by token, and
// compares every position's log-probabilities with the float64 reference
// (the reference tower's embeddings, get_rope_index's positions, M-RoPE
// interleaved and in runs).
func TestHybridImagesMatchReference(t *testing.T) {
	be := cpu.New(2)
	defer be.Close()
	proc := tinyProcessor()
	for _, interleaved := range []bool{true, false} {
		cfg := hybridref.TinyVL(interleaved)
		v := cfg.Vision
		mt, rw := hybridref.Random(cfg, metal.F32, 3)
		vt, vw := hybridref.RandomVision(v, model.VisionPrefix, metal.F32, 4)
		tower, err := model.NewVisionTower(v, vt, model.VisionPrefix, be)
		if err != nil {
			t.Fatal(err)
		}
		var tokens []int32
		var spans []model.ImageSpan
		var refImages []hybridref.Image
		text := model.RandomTokens(16, v.ImageTokenID, 7) // below the image tokens
		tokens = append(tokens, text[:5]...)
		for i, size := range [][2]int{{12, 8}, {15, 11}} {
			ps := randomPatches(t, proc, size[0], size[1], uint64(i))
			emb, err := tower.Encode(ps.Data, ps.GridH, ps.GridW)
			if err != nil {
				t.Fatal(err)
			}
			span := model.ImageSpan{GridT: 1, GridH: ps.GridH / 2, GridW: ps.GridW / 2, Embeds: emb}
			tokens = append(tokens, int32(v.VisionStartTokenID))
			span.Start = len(tokens)
			for range span.Tokens() {
				tokens = append(tokens, int32(v.ImageTokenID))
			}
			tokens = append(tokens, int32(v.VisionEndTokenID))
			tokens = append(tokens, text[5+4*i:9+4*i]...)
			spans = append(spans, span)
			refImages = append(refImages, hybridref.Image{GridT: 1, GridH: ps.GridH, GridW: ps.GridW,
				Embeds: hybridref.Vision(v, vw, model.VisionPrefix, ps.Data, ps.GridH, ps.GridW)})
		}
		if spans[1].GridH != 3 || spans[1].GridW != 4 {
			t.Fatalf("the resized image has %d×%d tokens, want 3×4", spans[1].GridH, spans[1].GridW)
		}
		want := hybridref.ForwardImages(cfg, rw, tokens, refImages, metal.KVF32)
		total := len(tokens)
		chunked := [][2]int{{0, 8}, {8, 9}, {9, 20}, {20, total}} // through the first image, then the second
		var oneByOne [][2]int
		for p := range total {
			oneByOne = append(oneByOne, [2]int{p, p + 1})
		}
		for pi, plan := range [][][2]int{{{0, total}}, chunked, oneByOne} {
			t.Run(fmt.Sprintf("interleaved=%v/plan%d", interleaved, pi), func(t *testing.T) {
				m, err := model.NewHybridModel(cfg, mt, be)
				if err != nil {
					t.Fatal(err)
				}
				kv := m.NewKVCache(16, 4, metal.KVF32)
				blocks := model.ShuffledBlocks(12, 16, 5)
				st := m.NewState()
				for _, s := range plan {
					start, end := s[0], s[1]
					n := end - start
					logits, err := m.ForwardState(model.Row{Start: start, Tokens: tokens[start:end], Blocks: blocks, Logits: n, Images: spans}, st, kv)
					if err != nil {
						t.Fatal(err)
					}
					for j := range n {
						pos := start + j
						if e := logprobErr(logits[j*cfg.VocabSize:(j+1)*cfg.VocabSize], want[pos]); e > 1e-4 {
							t.Errorf("position %d: logprobs differ from the reference's by %.3g > 1e-4", pos, e)
						}
					}
				}
			})
		}
	}
}

// logprobErr is the largest difference between the log-softmax of got
// and of want.
func logprobErr(got []float32, want []float64) float64 {
	norm := func(n int, at func(int) float64) []float64 {
		mx := math.Inf(-1)
		for i := range n {
			mx = max(mx, at(i))
		}
		var s float64
		for i := range n {
			s += math.Exp(at(i) - mx)
		}
		out := make([]float64, n)
		for i := range out {
			out[i] = at(i) - mx - math.Log(s)
		}
		return out
	}
	g := norm(len(got), func(i int) float64 { return float64(got[i]) })
	w := norm(len(want), func(i int) float64 { return want[i] })
	var e float64
	for i := range g {
		e = max(e, math.Abs(g[i]-w[i]))
	}
	return e
}

// TestHybridImagesRefused: rows whose images the model cannot take are
// refused with an error saying why, before anything runs.
func TestHybridImagesRefused(t *testing.T) {
	be := cpu.New(1)
	defer be.Close()
	cfg := hybridref.TinyVL(true)
	hidden, pad := cfg.HiddenSize, int32(cfg.Vision.ImageTokenID)
	mt, _ := hybridref.Random(cfg, metal.F32, 1)
	tokens := []int32{1, 2, pad, pad, pad, pad, 3}
	good := model.ImageSpan{Start: 2, GridT: 1, GridH: 2, GridW: 2, Embeds: make([]float32, 4*hidden)}
	for _, tc := range []struct {
		name   string
		cfg    func() *model.Config
		tokens []int32
		spans  []model.ImageSpan
		want   string
	}{
		{"no tower", func() *model.Config { return hybridref.Tiny("qwen3_5", false) }, tokens, []model.ImageSpan{good}, "no vision tower"},
		{"short embeddings", nil, tokens, []model.ImageSpan{{Start: 2, GridT: 1, GridH: 2, GridW: 2, Embeds: make([]float32, 3*hidden)}}, "embedding values"},
		{"not pad", nil, []int32{1, 2, pad, 5, pad, pad, 3}, []model.ImageSpan{good}, "not the image pad token"},
		{"empty grid", nil, tokens, []model.ImageSpan{{Start: 2, GridT: 1, GridH: 0, GridW: 2}}, "grid"},
		{"overlapping", nil, tokens, []model.ImageSpan{good, {Start: 3, GridT: 1, GridH: 1, GridW: 1, Embeds: make([]float32, hidden)}}, "before the previous image's end"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := cfg
			if tc.cfg != nil {
				c = tc.cfg()
			}
			m, err := model.NewHybridModel(c, mt, be)
			if err != nil {
				t.Fatal(err)
			}
			kv := m.NewKVCache(4, 4, metal.KVF32)
			_, err = m.ForwardState(model.Row{Tokens: tc.tokens, Blocks: []int32{0, 1}, Logits: 1, Images: tc.spans}, m.NewState(), kv)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one saying %q", err, tc.want)
			}
		})
	}
}

// TestPackKeepsVisionTower: a Qwen3.5 checkpoint with a vision tower
// opens with its vision_config and M-RoPE layout, and a package packed
// from it (f32) keeps both in its manifest and its tower's weights, whose
// embeddings are the checkpoint's bit for bit.
func TestPackKeepsVisionTower(t *testing.T) {
	be := cpu.New(2)
	defer be.Close()
	cfg := hybridref.TinyVL(true)
	src := t.TempDir()
	if _, err := hybridref.WriteCheckpoint(src, cfg, cfg.Architecture, metal.F32, 5); err != nil {
		t.Fatal(err)
	}
	if err := testmodel.CopyTokenizer(src, "qwen3"); err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(t.TempDir(), "pkg")
	if _, err := model.Pack(src, dst, model.PackOptions{Quant: metal.F32}); err != nil {
		t.Fatal(err)
	}
	ps := randomPatches(t, tinyProcessor(), 12, 8, 1)
	var embeds [][]float32
	for _, dir := range []string{src, dst} {
		s, err := model.Open(dir, model.OpenOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if !reflect.DeepEqual(s.Config.Vision, cfg.Vision) || !slices.Equal(s.Config.Hybrid.MRopeSection, cfg.Hybrid.MRopeSection) ||
			!s.Config.Hybrid.MRopeInterleaved {
			t.Fatalf("%s: vision %+v, M-RoPE %v interleaved %v; want %+v, %v interleaved", s.Kind, s.Config.Vision,
				s.Config.Hybrid.MRopeSection, s.Config.Hybrid.MRopeInterleaved, cfg.Vision, cfg.Hybrid.MRopeSection)
		}
		tower, err := s.BuildVision(be)
		if err != nil {
			t.Fatal(err)
		}
		e, err := tower.Encode(ps.Data, ps.GridH, ps.GridW)
		if err != nil {
			t.Fatal(err)
		}
		embeds = append(embeds, e)
	}
	if !slices.Equal(embeds[0], embeds[1]) {
		t.Error("the package's tower encodes unlike the checkpoint's")
	}
}

// TestImageProcessor: a model's image processor is its
// preprocessor_config.json, or Qwen3-VL's defaults with its tower's sizes;
// one whose patches the tower cannot read, and a model without a tower,
// are refused.
func TestImageProcessor(t *testing.T) {
	cfg := hybridref.TinyVL(true)
	for _, tc := range []struct {
		name, file string // file: preprocessor_config.json, none when empty
		vision     bool
		patch      int // the processor's patch size; 0: refused
		maxPixels  int
	}{
		{"defaults", "", true, 2, 16777216},
		{"file", `{"patch_size": 2, "temporal_patch_size": 2, "merge_size": 2, "max_pixels": 4096}`, true, 2, 4096},
		{"file for another tower", `{"patch_size": 14}`, true, 0, 0},
		{"no tower", "", false, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if tc.file != "" {
				if err := os.WriteFile(filepath.Join(dir, "preprocessor_config.json"), []byte(tc.file), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			c := *cfg
			if !tc.vision {
				c.Vision = nil
			}
			p, err := (&model.Source{Dir: dir, Name: "m", Config: &c}).ImageProcessor()
			switch {
			case tc.patch == 0 && err == nil:
				t.Fatalf("processor %+v accepted", p)
			case tc.patch != 0 && (err != nil || p.PatchSize != tc.patch || p.MergeSize != 2 || p.MaxPixels != tc.maxPixels):
				t.Fatalf("processor %+v, %v", p, err)
			}
		})
	}
}
