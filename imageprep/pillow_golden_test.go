package imageprep

import (
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"math"
	"os"
	"strings"
	"testing"
)

// pillowGolden is testdata/pillow_golden.json, written by Pillow itself
// (testdata/pillow_golden.py).
type pillowGolden struct {
	Pillow string `json:"pillow"`
	Source [2]int `json:"source"`
	Resize []struct {
		W, H int
		Pix  string
	} `json:"resize"`
	OverWhite []struct{ C, A, Out uint8 } `json:"over_white"`
	Patches   struct {
		H, W   int
		Values string // little-endian float32s
	} `json:"patches"`
	Decode []struct {
		File string
		W, H int // when given: the size after EXIF orientation
		Pix  string
	} `json:"decode"`
}

// goldenSource is the image pillow_golden.py resizes.
func goldenSource(w, h int) *RGB {
	img := NewRGB(w, h)
	i := 0
	for y := range h {
		for x := range w {
			for c := range 3 {
				img.Pix[i] = uint8((x*37 + y*11 + c*89 + (x*y)%7*23) % 256)
				i++
			}
		}
	}
	return img
}

func readGolden(t *testing.T) pillowGolden {
	t.Helper()
	data, err := os.ReadFile("testdata/pillow_golden.json")
	if err != nil {
		t.Fatal(err)
	}
	var g pillowGolden
	if err := json.Unmarshal(data, &g); err != nil {
		t.Fatal(err)
	}
	return g
}

// TestResizeBicubicMatchesPillow: every byte of ResizeBicubic's output
// equals Pillow's Image.resize(BICUBIC), shrinking, enlarging, one axis
// at a time and to a single pixel.
func TestResizeBicubicMatchesPillow(t *testing.T) {
	g := readGolden(t)
	src := goldenSource(g.Source[0], g.Source[1])
	for _, r := range g.Resize {
		want, err := hex.DecodeString(r.Pix)
		if err != nil {
			t.Fatal(err)
		}
		got := ResizeBicubic(src, r.W, r.H)
		if len(got.Pix) != len(want) {
			t.Fatalf("%dx%d: %d bytes, Pillow %s gives %d", r.W, r.H, len(got.Pix), g.Pillow, len(want))
		}
		for i := range want {
			if got.Pix[i] != want[i] {
				t.Fatalf("%dx%d: byte %d (pixel %d channel %d) is %d, Pillow %s gives %d",
					r.W, r.H, i, i/3, i%3, got.Pix[i], g.Pillow, want[i])
			}
		}
	}
}

// TestOverWhiteMatchesPillow: compositing over white matches Pillow's
// alpha_composite then convert("RGB").
func TestOverWhiteMatchesPillow(t *testing.T) {
	for _, p := range readGolden(t).OverWhite {
		if got := overWhite(p.C, p.A); got != p.Out {
			t.Errorf("overWhite(%d, %d) = %d, Pillow gives %d", p.C, p.A, got, p.Out)
		}
	}
}

// TestPatchesMatchProcessor: Processor.Patches of the golden source equals
// Qwen2VLImageProcessor's slow path (Pillow resize, numpy rescale and
// normalise, the reshape and transpose into patches) value for value.
func TestPatchesMatchProcessor(t *testing.T) {
	g := readGolden(t)
	raw, err := hex.DecodeString(g.Patches.Values)
	if err != nil {
		t.Fatal(err)
	}
	p := DefaultProcessor()
	p.PatchSize, p.MergeSize, p.TemporalPatchSize, p.MinPixels = 2, 2, 2, 64
	got, err := p.Patches(goldenSource(g.Source[0], g.Source[1]))
	if err != nil {
		t.Fatal(err)
	}
	if got.GridH*2 != g.Patches.H || got.GridW*2 != g.Patches.W || 4*len(got.Data) != len(raw) {
		t.Fatalf("grid %d×%d with %d values, processor %d×%d pixels with %d", got.GridH, got.GridW, len(got.Data), g.Patches.H, g.Patches.W, len(raw)/4)
	}
	for i, v := range got.Data {
		if want := math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:])); v != want {
			t.Fatalf("value %d (patch %d, column %d) = %v, processor gives %v", i, i/got.Dim, i%got.Dim, v, want)
		}
	}
}

// TestDecodeMatchesPillow: decoded pixels against Pillow's (libwebp's and
// libjpeg-turbo's, JPEGs turned by ImageOps.exif_transpose as
// transformers' load_image does). Lossy WebP, opaque and with alpha over
// white, match exactly; JPEG matches within the two decoders' different
// inverse DCTs.
func TestDecodeMatchesPillow(t *testing.T) {
	for _, d := range readGolden(t).Decode {
		t.Run(d.File, func(t *testing.T) {
			data, err := os.ReadFile("testdata/" + d.File)
			if err != nil {
				t.Fatal(err)
			}
			want, err := hex.DecodeString(d.Pix)
			if err != nil {
				t.Fatal(err)
			}
			img, err := Decode(data, DefaultLimits())
			if err != nil {
				t.Fatal(err)
			}
			if d.W != 0 && (img.Width != d.W || img.Height != d.H) {
				t.Fatalf("%dx%d, Pillow's exif_transpose gives %dx%d", img.Width, img.Height, d.W, d.H)
			}
			if len(img.Pix) != len(want) {
				t.Fatalf("%d bytes, Pillow gives %d", len(img.Pix), len(want))
			}
			maxDiff, sum := 0, 0
			for i, v := range img.Pix {
				diff := int(v) - int(want[i])
				maxDiff, sum = max(maxDiff, diff, -diff), sum+max(diff, -diff)
			}
			mean := float64(sum) / float64(len(want))
			limit, meanLimit := 0, 0.0
			if strings.HasSuffix(d.File, ".jpg") {
				limit, meanLimit = 4, 0.2
			}
			if maxDiff > limit || mean > meanLimit {
				t.Fatalf("max |ours − Pillow| = %d, mean %.3f; want at most %d and %.1f", maxDiff, mean, limit, meanLimit)
			}
		})
	}
}
