package imageprep

import "image"

// ycbcrToRGB converts a decoded JPEG's planes to RGB as libjpeg-turbo does
// by default (Pillow's decoder, so what the Hugging Face processor sees):
// 4:2:0 and 4:2:2 chroma upsampled by its "fancy" triangular filter
// (jdsample.c h2v2_fancy_upsample, h2v1_fancy_upsample: edge rows and
// columns replicated), other subsamplings by nearest neighbour, then its
// fixed-point YCbCr→RGB tables (jdcolor.c, 16 fractional bits). Go's own
// decoder upsamples by nearest neighbour, which differs from libjpeg by up
// to half the range on sharp chroma edges.
func ycbcrToRGB(m *image.YCbCr) *RGB {
	b := m.Bounds()
	w, h := b.Dx(), b.Dy()
	var cb, cr []uint8 // full-resolution chroma, w×h
	switch m.SubsampleRatio {
	case image.YCbCrSubsampleRatio420:
		cw, ch := (w+1)/2, (h+1)/2
		cb = fancyH2V2(m.Cb, m.CStride, cw, ch, w, h)
		cr = fancyH2V2(m.Cr, m.CStride, cw, ch, w, h)
	case image.YCbCrSubsampleRatio422:
		cw := (w + 1) / 2
		cb = fancyH2V1(m.Cb, m.CStride, cw, w, h)
		cr = fancyH2V1(m.Cr, m.CStride, cw, w, h)
	default:
		cb, cr = make([]uint8, w*h), make([]uint8, w*h)
		for y := range h {
			for x := range w {
				ci := m.COffset(b.Min.X+x, b.Min.Y+y)
				cb[y*w+x], cr[y*w+x] = m.Cb[ci], m.Cr[ci]
			}
		}
	}
	out := NewRGB(w, h)
	for y := range h {
		for x := range w {
			yy := int32(m.Y[m.YOffset(b.Min.X+x, b.Min.Y+y)])
			r, g, bl := libjpegYCbCr(yy, int32(cb[y*w+x])-128, int32(cr[y*w+x])-128)
			o := out.Pix[3*(y*w+x):]
			o[0], o[1], o[2] = r, g, bl
		}
	}
	return out
}

// libjpegYCbCr is jdcolor.c's ycc_rgb_convert for one pixel, its tables
// computed inline: FIX(c) = round(c·2^16), cb and cr centred on 0.
func libjpegYCbCr(y, cb, cr int32) (uint8, uint8, uint8) {
	const (
		scaleBits = 16
		half      = 1 << (scaleBits - 1)
		crR       = 91881  // FIX(1.40200)
		cbB       = 116130 // FIX(1.77200)
		crG       = 46802  // FIX(0.71414)
		cbG       = 22554  // FIX(0.34414)
	)
	r := y + (crR*cr+half)>>scaleBits
	g := y + (-cbG*cb+half-crG*cr)>>scaleBits
	b := y + (cbB*cb+half)>>scaleBits
	return clamp255(r), clamp255(g), clamp255(b)
}

func clamp255(v int32) uint8 { return uint8(min(max(v, 0), 255)) }

// fancyH2V2 upsamples a cw×ch chroma plane to w×h as libjpeg's
// h2v2_fancy_upsample: each output sample weighs its nearest input 9/16,
// the nearer horizontal and vertical neighbours 3/16 each and the diagonal
// 1/16 (vertical sums first, then horizontal, with biases 8 and 7).
func fancyH2V2(p []uint8, stride, cw, ch, w, h int) []uint8 {
	out := make([]uint8, w*h)
	sums := make([]int, cw)
	for oy := range h {
		r := oy / 2
		near := r - 1 // the upper output row of a pair leans on the row above
		if oy%2 == 1 {
			near = r + 1
		}
		near = min(max(near, 0), ch-1)
		for c := range cw {
			sums[c] = 3*int(p[r*stride+c]) + int(p[near*stride+c])
		}
		row := out[oy*w : (oy+1)*w]
		for c, this := range sums {
			left, right := this*4+8, this*4+7 // edge columns replicate
			if c > 0 {
				left = this*3 + sums[c-1] + 8
			}
			if c < cw-1 {
				right = this*3 + sums[c+1] + 7
			}
			if 2*c < w {
				row[2*c] = uint8(left >> 4)
			}
			if 2*c+1 < w {
				row[2*c+1] = uint8(right >> 4)
			}
		}
	}
	return out
}

// fancyH2V1 upsamples a cw-wide chroma plane to w×h as libjpeg's
// h2v1_fancy_upsample: each output sample weighs its nearest input 3/4
// and the nearer neighbour 1/4 (biases 1 and 2); the outer samples of the
// edge columns are copied.
func fancyH2V1(p []uint8, stride, cw, w, h int) []uint8 {
	out := make([]uint8, w*h)
	for y := range h {
		in := p[y*stride : y*stride+cw]
		row := out[y*w : (y+1)*w]
		for c := range cw {
			this := int(in[c])
			left, right := this, this
			if c > 0 {
				left = (3*this + int(in[c-1]) + 1) >> 2
			}
			if c < cw-1 {
				right = (3*this + int(in[c+1]) + 2) >> 2
			}
			if 2*c < w {
				row[2*c] = uint8(left)
			}
			if 2*c+1 < w {
				row[2*c+1] = uint8(right)
			}
		}
	}
	return out
}
