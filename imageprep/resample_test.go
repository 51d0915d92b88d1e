package imageprep

import (
	"math"
	"math/rand/v2"
	"testing"
)

func randomRGB(rng *rand.Rand, w, h int) *RGB {
	img := NewRGB(w, h)
	for i := range img.Pix {
		img.Pix[i] = uint8(rng.IntN(256))
	}
	return img
}

// TestResizeBicubicByHand checks a 2→4 upscale worked by hand from Pillow's
// precompute_coeffs (scale 0.5, support 2, taps at inputs 0 and 1):
//
//	out 0: centre 0.25, k(0.25) = 0.8671875, k(1.25) = −0.0703125, normalised
//	       1.0882 and −0.0882: 100·1.0882 − 200·0.0882 = 91.18 → 91
//	out 1: centre 0.75, k(−0.25) = 0.8671875, k(0.75) = 0.2265625, normalised
//	       0.7929 and 0.2071: 120.71 → 121
//
// and outputs 2 and 3 mirror them: 179.29 → 179, 208.82 → 209.
func TestResizeBicubicByHand(t *testing.T) {
	img := &RGB{Width: 2, Height: 1, Pix: []uint8{100, 100, 100, 200, 200, 200}}
	out := ResizeBicubic(img, 4, 1)
	want := []uint8{91, 121, 179, 209}
	for x, w := range want {
		for c := range 3 {
			if got := out.Pix[3*x+c]; got != w {
				t.Errorf("pixel %d channel %d = %d, want %d", x, c, got, w)
			}
		}
	}
}

// refResize is Pillow's bicubic resampling in float64 without fixed point
// or the intermediate rounding to 8 bits. It also returns the largest sum of
// |weights| of a vertical output: ResizeBicubic's horizontal pass rounds to
// within 0.5, the vertical pass amplifies that by at most this sum and
// rounds again, so the two differ by at most 0.5·sum + 0.5.
func refResize(img *RGB, w, h int) ([]float64, float64) {
	weights := func(in, out int) [][]float64 { // weights[o][i]
		scale := float64(in) / float64(out)
		fs := max(scale, 1)
		ws := make([][]float64, out)
		for o := range out {
			ws[o] = make([]float64, in)
			centre := (float64(o) + 0.5) * scale
			var sum float64
			for i := range in {
				// Pillow's support window: inputs whose centre lies within 2·fs.
				if float64(i)+0.5 <= centre-2*fs-0.5 || float64(i)+0.5 >= centre+2*fs+0.5 {
					continue
				}
				ws[o][i] = bicubic((float64(i) + 0.5 - centre) / fs)
				sum += ws[o][i]
			}
			for i := range ws[o] {
				ws[o][i] /= sum
			}
		}
		return ws
	}
	wx, wy := weights(img.Width, w), weights(img.Height, h)
	var maxAbs float64
	for _, ws := range wy {
		var s float64
		for _, k := range ws {
			s += math.Abs(k)
		}
		maxAbs = max(maxAbs, s)
	}
	out := make([]float64, 3*w*h)
	for y := range h {
		for x := range w {
			for c := range 3 {
				var s float64
				for iy, ky := range wy[y] {
					for ix, kx := range wx[x] {
						s += ky * kx * float64(img.Pix[3*(iy*img.Width+ix)+c])
					}
				}
				out[3*(y*w+x)+c] = s
			}
		}
	}
	return out, maxAbs
}

func TestResizeBicubicMatchesFloat(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	sizes := []struct{ inW, inH, w, h int }{
		{16, 12, 8, 6},   // halve
		{15, 9, 32, 20},  // upscale
		{40, 7, 13, 7},   // horizontal only
		{9, 33, 9, 10},   // vertical only
		{31, 17, 24, 29}, // down one way, up the other
	}
	for _, s := range sizes {
		img := randomRGB(rng, s.inW, s.inH)
		// Values away from 0 and 255 so the passes never clip.
		for i := range img.Pix {
			img.Pix[i] = uint8(64 + int(img.Pix[i])/2)
		}
		got := ResizeBicubic(img, s.w, s.h)
		want, amp := refResize(img, s.w, s.h)
		tol := 0.5*amp + 0.5 + 1e-6
		for i, v := range got.Pix {
			if math.Abs(float64(v)-want[i]) > tol {
				t.Fatalf("%dx%d→%dx%d: value %d is %d, float reference %.3f", s.inW, s.inH, s.w, s.h, i, v, want[i])
			}
		}
	}
}

func TestResizeBicubicKeepsConstant(t *testing.T) {
	for _, v := range []uint8{0, 1, 128, 254, 255} {
		img := NewRGB(37, 23)
		for i := range img.Pix {
			img.Pix[i] = v
		}
		for _, size := range [][2]int{{10, 7}, {64, 50}, {37, 5}, {3, 23}} {
			out := ResizeBicubic(img, size[0], size[1])
			for i, p := range out.Pix {
				if p != v {
					t.Fatalf("constant %d resized to %v: value %d is %d", v, size, i, p)
				}
			}
		}
	}
}
