package imageprep

import (
	"bytes"
	"image"
	"image/gif"
	"image/jpeg"
	"image/png"
	"io"
	"math"

	"golang.org/x/image/webp"
)

// Limits bound what Decode accepts and what it returns.
type Limits struct {
	// MaxBytes caps the encoded image.
	MaxBytes int
	// MaxDecodePixels caps width×height as the header declares them,
	// checked before decoding: the memory a decode may take.
	MaxDecodePixels int
	// MaxPixels caps width×height of the image Decode returns: a larger
	// image is resized down (Pillow bicubic), keeping its aspect ratio.
	// smart_resize may then round a side up by half a block; a Processor
	// whose MaxPixels is at most this one keeps the patched image within it.
	MaxPixels int
}

// DefaultMaxPixels is the default of Limits.MaxPixels (--max-image-pixels).
const DefaultMaxPixels = 4_194_304

// DefaultLimits are 20 MiB encoded, 16,777,216 declared pixels (a 5K
// screenshot decodes; a decode takes at most 64 MiB) and DefaultMaxPixels.
func DefaultLimits() Limits {
	return Limits{MaxBytes: 20 << 20, MaxDecodePixels: 4 * DefaultMaxPixels, MaxPixels: DefaultMaxPixels}
}

// RGB is an 8-bit RGB image, 3 bytes a pixel, rows top to bottom.
type RGB struct {
	Width, Height int
	Pix           []uint8 // len 3·Width·Height
}

// NewRGB returns a black w×h image.
func NewRGB(w, h int) *RGB { return &RGB{Width: w, Height: h, Pix: make([]uint8, 3*w*h)} }

// format is one supported encoding's decoders.
type format struct {
	name         string
	decodeConfig func(io.Reader) (image.Config, error)
	decode       func(io.Reader) (image.Image, error)
}

// sniff returns the format data starts with.
func sniff(data []byte) (format, bool) {
	switch {
	case bytes.HasPrefix(data, []byte("\x89PNG\r\n\x1a\n")):
		return format{"PNG", png.DecodeConfig, png.Decode}, true
	case bytes.HasPrefix(data, []byte("\xff\xd8\xff")):
		return format{"JPEG", jpeg.DecodeConfig, jpeg.Decode}, true
	case bytes.HasPrefix(data, []byte("GIF87a")), bytes.HasPrefix(data, []byte("GIF89a")):
		return format{"GIF", gif.DecodeConfig, gif.Decode}, true
	case len(data) >= 12 && string(data[:4]) == "RIFF" && string(data[8:12]) == "WEBP":
		return format{"WebP", webp.DecodeConfig, webp.Decode}, true
	}
	return format{}, false
}

// Decode decodes data (PNG, JPEG, GIF's first frame, WebP) into RGB within
// lim: the bytes and the header's dimensions are checked before any pixel
// is decoded; a JPEG's EXIF orientation is applied; transparency is
// composited over white; an image over lim.MaxPixels is resized down.
func Decode(data []byte, lim Limits) (*RGB, error) {
	if len(data) == 0 {
		return nil, errorf(Malformed, "empty image")
	}
	if len(data) > lim.MaxBytes {
		return nil, errorf(TooLarge, "%d bytes exceed the limit of %d", len(data), lim.MaxBytes)
	}
	f, ok := sniff(data)
	if !ok {
		return nil, errorf(Unsupported, "not PNG, JPEG, GIF or WebP")
	}
	cfg, err := f.decodeConfig(bytes.NewReader(data))
	if err != nil {
		return nil, decodeError(f.name+" header", err)
	}
	if err := checkDims(f.name, cfg.Width, cfg.Height, lim.MaxDecodePixels); err != nil {
		return nil, err
	}
	m, err := f.decode(bytes.NewReader(data))
	if err != nil {
		return nil, decodeError(f.name, err)
	}
	b := m.Bounds()
	if err := checkDims(f.name, b.Dx(), b.Dy(), lim.MaxDecodePixels); err != nil {
		return nil, err
	}
	var img *RGB
	switch m := m.(type) {
	case *image.YCbCr:
		if f.name == "WebP" {
			img = webpToRGB(m, nil, 0)
		} else {
			img = ycbcrToRGB(m)
		}
	case *image.NYCbCrA: // lossy WebP with alpha
		img = webpToRGB(&m.YCbCr, m.A, m.AStride)
	default:
		img = toRGB(m)
	}
	if f.name == "JPEG" {
		img = orient(img, exifOrientation(data))
	}
	return fitPixels(img, lim.MaxPixels), nil
}

// checkDims refuses an empty image or one of more than maxPixels pixels.
func checkDims(name string, w, h, maxPixels int) error {
	if w <= 0 || h <= 0 {
		return errorf(Malformed, "%s: %dx%d pixels", name, w, h)
	}
	if int64(w)*int64(h) > int64(maxPixels) {
		return errorf(TooLarge, "%s: %dx%d pixels exceed the limit of %d", name, w, h, maxPixels)
	}
	return nil
}

// fitPixels resizes img down to at most maxPixels pixels keeping its aspect
// ratio: both sides are scaled by sqrt(maxPixels/(w·h)) and rounded down,
// to at least 1.
func fitPixels(img *RGB, maxPixels int) *RGB {
	if maxPixels <= 0 || img.Width*img.Height <= maxPixels {
		return img
	}
	s := math.Sqrt(float64(maxPixels) / float64(img.Width*img.Height))
	w := max(1, int(float64(img.Width)*s))
	h := max(1, int(float64(img.Height)*s))
	for w*h > maxPixels { // rounding of s itself
		if w >= h {
			w--
		} else {
			h--
		}
	}
	return ResizeBicubic(img, w, h)
}
