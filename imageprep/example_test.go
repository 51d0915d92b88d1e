package imageprep_test

import (
	"bytes"
	"fmt"
	"image"
	"image/png"

	"github.com/splash-inference/splash/imageprep"
)

// An image from a request becomes the patches of a Qwen3.5 vision tower:
// Decode checks and decodes it, Patches resizes it to whole 32-pixel
// blocks and lays out 16-pixel patches (Qwen3.5's preprocessor_config.json).
func Example() {
	var buf bytes.Buffer
	_ = png.Encode(&buf, image.NewGray(image.Rect(0, 0, 1000, 500)))

	img, err := imageprep.Decode(buf.Bytes(), imageprep.DefaultLimits())
	if err != nil {
		fmt.Println(err) // an *imageprep.Error: answer 400 with its message
		return
	}
	proc, _ := imageprep.ParseProcessor([]byte(`{"patch_size": 16, "merge_size": 2, "temporal_patch_size": 2,
		"size": {"shortest_edge": 65536, "longest_edge": 16777216},
		"image_mean": [0.5, 0.5, 0.5], "image_std": [0.5, 0.5, 0.5]}`))
	p, _ := proc.Patches(img)
	fmt.Printf("%dx%d pixels → %d×%d patches of %d values, %d image tokens\n",
		img.Width, img.Height, p.GridH, p.GridW, p.Dim, p.GridH*p.GridW/4)

	// A 13-byte GIF claiming 10000×10000 pixels is refused from its header.
	_, err = imageprep.Decode([]byte("GIF89a\x10\x27\x10\x27\x00\x00\x00"), imageprep.DefaultLimits())
	fmt.Println(imageprep.KindOf(err), "-", err)
	// Output:
	// 1000x500 pixels → 32×62 patches of 1536 values, 496 image tokens
	// image too large - imageprep: image too large: GIF: 10000x10000 pixels exceed the limit of 16777216
}
