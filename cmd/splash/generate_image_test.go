package main

import (
	"image"
	"image/color"
	"image/png"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/splash-inference/splash/imageprep"
	"github.com/splash-inference/splash/metal"
	"github.com/splash-inference/splash/model"
	"github.com/splash-inference/splash/model/hybridref"
	"github.com/splash-inference/splash/model/testmodel"
)

// writePNG writes a w×h PNG of random pixels into dir.
func writePNG(t *testing.T, dir string, w, h int, seed uint64) string {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 2))
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.Set(x, y, color.NRGBA{uint8(rng.IntN(256)), uint8(rng.IntN(256)), uint8(rng.IntN(256)), 255})
		}
	}
	path := filepath.Join(dir, "img"+strconv.Itoa(int(seed))+".png")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := png.Encode(f, img); err != nil {
		t.Fatal(err)
	}
	return path
}

// tinyVLPreprocessor is a preprocessor_config.json for hybridref.TinyVL's
// tower: 2×2 patches over 2 frames, 2×2 merging, no lower size bound.
const tinyVLPreprocessor = `{"patch_size": 2, "temporal_patch_size": 2, "merge_size": 2,
  "size": {"shortest_edge": 16, "longest_edge": 1048576}, "image_mean": [0.5, 0.5, 0.5], "image_std": [0.5, 0.5, 0.5]}`

// writeTinyVL writes a random TinyVL checkpoint with its processor's
// config and the Qwen3 tokenizer, and returns its weights.
func writeTinyVL(t *testing.T, dir string) hybridref.Weights {
	t.Helper()
	return writeVLCheckpoint(t, dir, hybridref.TinyVL(true))
}

// writeVLCheckpoint writes a random checkpoint of cfg, a TinyVL-shaped
// model, with TinyVL's processor config and the Qwen3 tokenizer.
func writeVLCheckpoint(t *testing.T, dir string, cfg *model.Config) hybridref.Weights {
	t.Helper()
	w, err := hybridref.WriteCheckpoint(dir, cfg, cfg.Architecture, metal.F32, 13)
	if err != nil {
		t.Fatal(err)
	}
	if err := testmodel.CopyTokenizer(dir, "qwen3"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "preprocessor_config.json"), []byte(tinyVLPreprocessor), 0o644); err != nil {
		t.Fatal(err)
	}
	return w
}

// TestGenerateImageMatchesReference: `splash generate --image` with two
// images, one already at a valid size (12×8) and one that smart_resize
// and Pillow's bicubic bring to 16×12, echoes every prompt position, the
// images' tokens included, with the float64 reference's logprobs (the
// reference tower's embeddings, get_rope_index's M-RoPE positions) for
// the prompt and the text generated after the images.
func TestGenerateImageMatchesReference(t *testing.T) {
	dir := t.TempDir()
	w := writeTinyVL(t, dir)
	cfg := hybridref.TinyVL(true)
	v := cfg.Vision
	paths := []string{writePNG(t, dir, 12, 8, 1), writePNG(t, dir, 15, 11, 2)}
	const generated = 6
	out, err := runCmd(t, "generate", "--model", dir, "--prompt-ids", "1,2,3,-1,4,5,-1,6,7", "--image", paths[0], "--image", paths[1],
		"--max-tokens", strconv.Itoa(generated), "--echo", "--logprobs", "3", "--json", "--ignore-eos", "--kv-cache-type", "f32")
	if err != nil {
		t.Fatal(err)
	}
	res := parseGenerateJSON(t, out)
	proc := imageprep.Processor{PatchSize: 2, TemporalPatchSize: 2, MergeSize: 2, MinPixels: 16, MaxPixels: 1 << 20,
		RescaleFactor: 1.0 / 255, Mean: [3]float64{0.5, 0.5, 0.5}, Std: [3]float64{0.5, 0.5, 0.5}}
	var images []hybridref.Image
	want := []int32{1, 2, 3}
	for i, path := range paths {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		img, err := imageprep.Decode(data, imageprep.DefaultLimits())
		if err != nil {
			t.Fatal(err)
		}
		p, err := proc.Patches(img)
		if err != nil {
			t.Fatal(err)
		}
		images = append(images, hybridref.Image{GridT: 1, GridH: p.GridH, GridW: p.GridW,
			Embeds: hybridref.Vision(v, w, model.VisionPrefix, p.Data, p.GridH, p.GridW)})
		want = append(want, int32(v.VisionStartTokenID))
		want = append(want, slices.Repeat([]int32{int32(v.ImageTokenID)}, p.GridH*p.GridW/4)...)
		want = append(want, int32(v.VisionEndTokenID))
		want = append(want, [][]int32{{4, 5}, {6, 7}}[i]...)
	}
	if images[1].GridH != 6 || images[1].GridW != 8 {
		t.Fatalf("the 15×11 image has a %d×%d patch grid, want 6×8", images[1].GridH, images[1].GridW)
	}
	ids := make([]int32, len(res.Tokens))
	for i, tok := range res.Tokens {
		ids[i] = tok.ID
	}
	if len(ids) != len(want)+generated || !slices.Equal(ids[:len(want)], want) {
		t.Fatalf("echoed %v, want the prompt %v and %d tokens", ids, want, generated)
	}
	checkReferenceLogprobs(t, res, hybridref.ForwardImages(cfg, w, ids[:len(ids)-1], images, metal.KVF32), len(want), 3)
}

// TestGenerateImagePromptText: each <image> of --prompt becomes the
// image's vision start, pads and vision end as the tokenizer reads them,
// the same ids as -1 in --prompt-ids.
func TestGenerateImagePromptText(t *testing.T) {
	tok, err := testmodel.LoadTokenizer(t.TempDir(), "qwen3")
	if err != nil {
		t.Fatal(err)
	}
	v := &model.VisionConfig{SpatialMergeSize: 2, ImageTokenID: 151655, VisionStartTokenID: 151652, VisionEndTokenID: 151653}
	images := []promptImage{{patches: imageprep.Patches{GridT: 1, GridH: 4, GridW: 6}}, {patches: imageprep.Patches{GridT: 1, GridH: 2, GridW: 2}}}
	text, err := expandImageText("Hi <image> and<image>.", images, tok, v)
	if err != nil {
		t.Fatal(err)
	}
	got := tok.Encode(text, true)
	ids := slices.Concat(tok.Encode("Hi ", true), []int32{-1}, tok.Encode(" and", true), []int32{-1}, tok.Encode(".", true))
	want, err := expandImageIDs(ids, images, v)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) || len(want) != len(ids)-2+2*2+6+1 {
		t.Fatalf("--prompt gives %v, --prompt-ids %v", got, want)
	}
	for _, tc := range []struct {
		prompt string
		ids    []int32
		want   string
	}{
		{"one <image>", nil, "has 1 <image> for 2 --image"},
		{"", []int32{1, -1}, "has 1 -1 for 2 --image"},
		{"", []int32{-1, -1, -1}, "more -1 than the 2 --image"},
	} {
		if tc.ids == nil {
			_, err = expandImageText(tc.prompt, images, tok, v)
		} else {
			_, err = expandImageIDs(tc.ids, images, v)
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q %v: %v, want an error saying %q", tc.prompt, tc.ids, err, tc.want)
		}
	}
}

// TestGenerateImageRefused: --image on a model without a vision tower is
// refused naming the model, and unreadable image files are refused.
func TestGenerateImageRefused(t *testing.T) {
	text := t.TempDir()
	if err := testmodel.Write(text, testmodel.Tiny("qwen3")); err != nil {
		t.Fatal(err)
	}
	vl := t.TempDir()
	writeTinyVL(t, vl)
	bad := filepath.Join(vl, "bad.png")
	if err := os.WriteFile(bad, []byte("not an image"), 0o644); err != nil {
		t.Fatal(err)
	}
	good := writePNG(t, vl, 8, 8, 3)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--model", text, "--prompt-ids", "1,-1", "--image", good}, "model " + filepath.Base(text) + " has no vision tower"},
		{[]string{"--model", vl, "--prompt-ids", "1,-1", "--image", bad}, "bad.png"},
		{[]string{"--model", vl, "--prompt-ids", "1,-1,-1", "--image", good}, "more -1"},
		{[]string{"--model", vl, "--prompt-ids", "1,2", "--image", good}, "has 0 -1 for 1 --image"},
		{[]string{"--model", vl, "--prompt-ids", "1,-1", "--image", filepath.Join(vl, "missing.png")}, "missing.png"},
	} {
		_, err := runCmd(t, append([]string{"generate", "--max-tokens", "1"}, tc.args...)...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want %q", tc.args, err, tc.want)
		}
	}
}

// TestServeVisionModel: serve builds a vision model's tower beside its
// language model and answers text as generate does.
func TestServeVisionModel(t *testing.T) {
	dir := t.TempDir()
	writeTinyVL(t, dir)
	ids := "1,5,9,80,3,3,17,42"
	out, err := runCmd(t, "generate", "--model", dir, "--prompt-ids", ids, "--max-tokens", "6", "--ignore-eos")
	if err != nil {
		t.Fatal(err)
	}
	addr, _, _, stop := startServeLogs(t, "--model", dir, "--quant", "none")
	var resp struct {
		Choices []struct{ Text string }
	}
	postJSON(t, "http://"+addr+"/v1/completions", `{"prompt":[`+ids+`],"max_tokens":6,"temperature":0,"ignore_eos":true}`, &resp)
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if len(resp.Choices) != 1 || resp.Choices[0].Text+"\n" != out {
		t.Fatalf("generate: %q\nserve: %+v", out, resp)
	}
}
