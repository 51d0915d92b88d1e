package imageprep

import (
	"math"
	"testing"
)

// TestPatchesLayout checks the patch layout against the processor's
// reshape and transpose, written as index arithmetic: pixel_values is the
// (t, tp, c, gh/m, m, p, gw/m, m, p) array transposed to (t, gh/m, gw/m,
// m, m, c, tp, p, p) and flattened.
func TestPatchesLayout(t *testing.T) {
	p := Processor{PatchSize: 2, TemporalPatchSize: 2, MergeSize: 2, MinPixels: 0, MaxPixels: 1 << 20,
		RescaleFactor: 1, Std: [3]float64{1, 1, 1}}
	const w, h = 8, 12 // already multiples of 4: no resize
	img := NewRGB(w, h)
	value := func(x, y, c int) uint8 { return uint8((y*w+x)*2 + c%2) } // distinct per pixel
	for y := range h {
		for x := range w {
			for c := range 3 {
				img.Pix[3*(y*w+x)+c] = value(x, y, c)
			}
		}
	}
	got, err := p.Patches(img)
	if err != nil {
		t.Fatal(err)
	}
	if got.GridT != 1 || got.GridH != h/2 || got.GridW != w/2 || got.Dim != 3*2*2*2 {
		t.Fatalf("grid %d×%d×%d dim %d", got.GridT, got.GridH, got.GridW, got.Dim)
	}
	bw := w / 4 // merge blocks across
	for row := range got.GridH * got.GridW {
		bh, rest := row/(bw*4), row%(bw*4)
		bwi, mh, mw := rest/4, rest%4/2, rest%2
		for col := range got.Dim {
			// col/4%2 is the frame: both are the still image.
			c, py, px := col/8, col/2%2, col%2
			x, y := (bwi*2+mw)*2+px, (bh*2+mh)*2+py
			if want := float32(value(x, y, c)); got.Data[row*got.Dim+col] != want {
				t.Fatalf("row %d col %d = %v, want pixel (%d,%d) channel %d = %v", row, col, got.Data[row*got.Dim+col], x, y, c, want)
			}
		}
	}
}

// TestNormalize: transformers rescales to float32(v/255) and normalises
// in float32; Qwen3-VL's mean and std of 0.5 map 0…255 to −1…1.
func TestNormalize(t *testing.T) {
	p := DefaultProcessor()
	p.Mean, p.Std = [3]float64{0.5, 0.5, 0.5}, [3]float64{0.5, 0.5, 0.5}
	img := &RGB{Width: 3, Height: 1, Pix: []uint8{0, 0, 0, 255, 255, 255, 51, 102, 204}}
	planes := p.normalize(img)
	want := [3][]float32{{-1, 1, -0.6}, {-1, 1, -0.2}, {-1, 1, 0.6}}
	for c := range 3 {
		for i := range 3 {
			if math.Abs(float64(planes[c][i]-want[c][i])) > 1e-6 {
				t.Errorf("channel %d pixel %d = %v, want %v", c, i, planes[c][i], want[c][i])
			}
		}
	}
	clip := DefaultProcessor()
	// (1/255·255 − 0.48145466)/0.26862954 in float32.
	if got, want := clip.normalize(&RGB{Width: 1, Height: 1, Pix: []uint8{255, 0, 0}})[0][0], (float32(1)-float32(0.48145466))/float32(0.26862954); got != want {
		t.Errorf("CLIP normalisation of 255 = %v, want %v", got, want)
	}
}

func TestParseProcessor(t *testing.T) {
	// Qwen3-VL's (and Qwen3.5's) preprocessor_config.json.
	qwen3 := `{"size": {"longest_edge": 16777216, "shortest_edge": 65536}, "patch_size": 16,
		"temporal_patch_size": 2, "merge_size": 2, "image_mean": [0.5, 0.5, 0.5],
		"image_std": [0.5, 0.5, 0.5], "processor_class": "Qwen3VLProcessor",
		"image_processor_type": "Qwen2VLImageProcessorFast"}`
	p, err := ParseProcessor([]byte(qwen3))
	if err != nil {
		t.Fatal(err)
	}
	want := Processor{PatchSize: 16, TemporalPatchSize: 2, MergeSize: 2, MinPixels: 65536, MaxPixels: 16777216,
		RescaleFactor: 1.0 / 255, Mean: [3]float64{0.5, 0.5, 0.5}, Std: [3]float64{0.5, 0.5, 0.5}}
	if p != want {
		t.Fatalf("parsed %+v, want %+v", p, want)
	}
	bad := []string{
		`{"image_mean": [0.5]}`,
		`{"patch_size": 0}`,
		`{"image_std": [0, 1, 1]}`,
		`{"min_pixels": 100, "max_pixels": 10}`,
		`not json`,
	}
	for _, b := range bad {
		if _, err := ParseProcessor([]byte(b)); err == nil {
			t.Errorf("ParseProcessor(%s) accepted", b)
		}
	}
}

func TestPatchesResizes(t *testing.T) {
	p := DefaultProcessor() // factor 28, min 3136
	got, err := p.Patches(NewRGB(100, 42))
	if err != nil {
		t.Fatal(err)
	}
	// 42/28 = 1.5 → 2, 100/28 = 3.57 → 4 blocks: 56×112 pixels, 4×8 patches.
	if got.GridH != 4 || got.GridW != 8 || len(got.Data) != 32*got.Dim {
		t.Fatalf("grid %d×%d, %d values", got.GridH, got.GridW, len(got.Data))
	}
}
