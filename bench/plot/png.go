package plot

import (
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"math"
	"unicode"
)

// WritePNG draws the chart of runs as a PNG image.
func WritePNG(w io.Writer, runs ...Run) error {
	img := image.NewRGBA(image.Rect(0, 0, width, height))
	for i := range img.Pix {
		img.Pix[i] = 0xff // white, opaque
	}
	if err := draw(&pngCanvas{img: img}, runs); err != nil {
		return err
	}
	if err := png.Encode(w, img); err != nil {
		return fmt.Errorf("plot: writing png: %w", err)
	}
	return nil
}

// pngCanvas rasterises onto an RGBA image: lines are stamped discs along the
// segment (so width works at any angle), text uses the 5×7 bitmap font.
type pngCanvas struct{ img *image.RGBA }

func (p *pngCanvas) line(x1, y1, x2, y2 float64, c color.RGBA, width float64, dashed bool) {
	length := math.Hypot(x2-x1, y2-y1)
	steps := int(math.Ceil(length*2)) + 1
	r := width / 2
	for i := 0; i <= steps; i++ {
		t := float64(i) / float64(steps)
		if dashed && math.Mod(t*length, 10) >= 6 { // 6 on, 4 off, as in the SVG
			continue
		}
		p.disc(x1+t*(x2-x1), y1+t*(y2-y1), r, c)
	}
}

func (p *pngCanvas) circle(x, y, r float64, c color.RGBA) { p.disc(x, y, r, c) }

// disc fills the pixels whose centres lie within r (at least the nearest
// pixel, so one-pixel lines show).
func (p *pngCanvas) disc(cx, cy, r float64, c color.RGBA) {
	if r < 0.5 {
		r = 0.5
	}
	for y := int(math.Floor(cy - r)); y <= int(math.Ceil(cy+r)); y++ {
		for x := int(math.Floor(cx - r)); x <= int(math.Ceil(cx+r)); x++ {
			if math.Hypot(float64(x)+0.5-cx, float64(y)+0.5-cy) <= r {
				p.img.SetRGBA(x, y, c)
			}
		}
	}
}

func (p *pngCanvas) text(x, y float64, s string, size float64, a anchor, c color.RGBA) {
	scale := max(1, int(math.Round(size/9)))
	advance := (glyphW + 1) * scale
	w := len([]rune(s)) * advance
	switch a {
	case anchorMiddle:
		x -= float64(w) / 2
	case anchorEnd:
		x -= float64(w)
	}
	top := int(y) - glyphH*scale
	for i, ch := range []rune(s) {
		g, ok := glyphs[unicode.ToUpper(ch)]
		if !ok {
			g = unknownGlyph
		}
		left := int(x) + i*advance
		for row := range glyphH {
			for col := range glyphW {
				if g[row][col] != '#' {
					continue
				}
				for dy := range scale {
					for dx := range scale {
						p.img.SetRGBA(left+col*scale+dx, top+row*scale+dy, c)
					}
				}
			}
		}
	}
}
