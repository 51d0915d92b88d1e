package imageprep

import (
	"bytes"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"testing"
)

// benchImage is a w×h screenshot-like image: smooth gradients under a
// grid of sharp lines.
func benchImage(w, h int) *image.RGBA {
	m := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			c := color.RGBA{uint8(x * 255 / w), uint8(y * 255 / h), uint8((x ^ y) & 0xff), 255}
			if x%64 == 0 || y%32 == 0 {
				c = color.RGBA{20, 20, 20, 255}
			}
			m.SetRGBA(x, y, c)
		}
	}
	return m
}

// BenchmarkPrepare decodes a 1920×1080 image and makes Qwen3.5's patches
// (patch 16, merge 2, smart_resize to 1088×1920: a resize of 1.4% of the
// height), per format; ms/MP is per megapixel of the source.
func BenchmarkPrepare(b *testing.B) {
	m := benchImage(1920, 1080)
	var pngData, jpegData bytes.Buffer
	if err := png.Encode(&pngData, m); err != nil {
		b.Fatal(err)
	}
	if err := jpeg.Encode(&jpegData, m, &jpeg.Options{Quality: 90}); err != nil {
		b.Fatal(err)
	}
	p := DefaultProcessor()
	p.PatchSize, p.MinPixels, p.MaxPixels = 16, 65536, 16777216
	p.Mean, p.Std = [3]float64{0.5, 0.5, 0.5}, [3]float64{0.5, 0.5, 0.5}
	for _, f := range []struct {
		name string
		data []byte
	}{{"png", pngData.Bytes()}, {"jpeg", jpegData.Bytes()}} {
		b.Run(f.name, func(b *testing.B) {
			for range b.N {
				img, err := Decode(f.data, DefaultLimits())
				if err != nil {
					b.Fatal(err)
				}
				if _, err := p.Patches(img); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N)/(1920*1080/1e6), "ms/MP")
		})
	}
}
