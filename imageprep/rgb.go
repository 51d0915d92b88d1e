package imageprep

import (
	"image"
	"image/color"
)

// FromImage converts an image already in memory (a rendered PDF page) to
// RGB as Decode converts a decoded one: transparency over white.
func FromImage(m image.Image) *RGB { return toRGB(m) }

// toRGB converts a decoded image to RGB, compositing any transparency over
// white as transformers' convert_to_rgb does (Image.alpha_composite over a
// white RGBA background, then convert("RGB")).
func toRGB(m image.Image) *RGB {
	b := m.Bounds()
	out := NewRGB(b.Dx(), b.Dy())
	i := 0
	put := func(r, g, bl, a uint8) {
		out.Pix[i], out.Pix[i+1], out.Pix[i+2] = overWhite(r, a), overWhite(g, a), overWhite(bl, a)
		i += 3
	}
	switch m := m.(type) {
	case *image.NRGBA:
		for y := b.Min.Y; y < b.Max.Y; y++ {
			row := m.Pix[m.PixOffset(b.Min.X, y):]
			for x := 0; x < b.Dx(); x++ {
				put(row[4*x], row[4*x+1], row[4*x+2], row[4*x+3])
			}
		}
	case *image.RGBA: // Go's PNG decoder gives opaque truecolour images as RGBA
		for y := b.Min.Y; y < b.Max.Y; y++ {
			row := m.Pix[m.PixOffset(b.Min.X, y):]
			for x := 0; x < b.Dx(); x++ {
				p := row[4*x : 4*x+4]
				if p[3] == 255 {
					put(p[0], p[1], p[2], 255)
					continue
				}
				c := color.NRGBAModel.Convert(color.RGBA{p[0], p[1], p[2], p[3]}).(color.NRGBA)
				put(c.R, c.G, c.B, c.A)
			}
		}
	case *image.Gray:
		for y := b.Min.Y; y < b.Max.Y; y++ {
			row := m.Pix[m.PixOffset(b.Min.X, y):]
			for x := 0; x < b.Dx(); x++ {
				put(row[x], row[x], row[x], 255)
			}
		}
	default:
		for y := b.Min.Y; y < b.Max.Y; y++ {
			for x := b.Min.X; x < b.Max.X; x++ {
				c := color.NRGBAModel.Convert(m.At(x, y)).(color.NRGBA)
				put(c.R, c.G, c.B, c.A)
			}
		}
	}
	return out
}

// overWhite composites channel value c of alpha a over white with Pillow's
// integer arithmetic (libImaging/AlphaComposite.c, 7 bits of precision,
// division by 255 as two shifts), which over an opaque white background
// reduces to coefficients a·128 and (255−a)·128.
func overWhite(c, a uint8) uint8 {
	if a == 255 {
		return c
	}
	if a == 0 {
		return 255
	}
	const precision = 7
	coef1 := uint32(a) << precision
	coef2 := uint32(255-a) << precision
	tmp := uint32(c)*coef1 + 255*coef2 + 0x80<<precision
	return uint8(((tmp>>8 + tmp) >> 8) >> precision)
}
