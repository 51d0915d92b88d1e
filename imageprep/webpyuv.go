package imageprep

import "image"

// webpToRGB converts a lossy WebP's 4:2:0 planes (VP8: limited-range
// BT.601 YUV) to RGB as libwebp does by default (Pillow's decoder): its
// "fancy" upsampler (src/dsp/upsampling.c: each sample weighs the nearest
// chroma 9/16, the nearer horizontal and vertical ones 3/16 and the
// diagonal 1/16, through its two diagonal averages) and its 14-bit
// fixed-point YUV→RGB (src/dsp/yuv.h). Go's decoder hands back the planes
// as JFIF full-range YCbCr, which would shift every colour. alpha, when
// not nil, is composited over white afterwards.
func webpToRGB(m *image.YCbCr, alpha []uint8, alphaStride int) *RGB {
	b := m.Bounds()
	w, h := b.Dx(), b.Dy()
	ch := (h + 1) / 2
	out := NewRGB(w, h)
	u, v := make([]uint8, w), make([]uint8, w)
	for y := range h {
		// Luma row y leans on chroma row c (even rows) or t (odd rows).
		t, c := 0, 0
		if y > 0 {
			k := (y + 1) / 2
			t, c = k-1, min(k, ch-1)
		}
		lower := y > 0 && y%2 == 0
		webpUpsampleRow(u, m.Cb[t*m.CStride:], m.Cb[c*m.CStride:], w, lower)
		webpUpsampleRow(v, m.Cr[t*m.CStride:], m.Cr[c*m.CStride:], w, lower)
		for x := range w {
			yy := int(m.Y[y*m.YStride+x])
			r, g, bl := webpYUVToRGB(yy, int(u[x]), int(v[x]))
			if alpha != nil {
				a := alpha[y*alphaStride+x]
				r, g, bl = overWhite(r, a), overWhite(g, a), overWhite(bl, a)
			}
			o := out.Pix[3*(y*w+x):]
			o[0], o[1], o[2] = r, g, bl
		}
	}
	return out
}

// webpUpsampleRow fills dst (w samples) from the chroma rows top and cur
// as libwebp's UpsampleRgbLinePair does for its upper output row (leaning
// on top) or, lower, its lower one (leaning on cur).
func webpUpsampleRow(dst, top, cur []uint8, w int, lower bool) {
	edge := func(tl, l int) uint8 { // the first and, for even w, the last sample
		if lower {
			return uint8((3*l + tl + 2) >> 2)
		}
		return uint8((3*tl + l + 2) >> 2)
	}
	dst[0] = edge(int(top[0]), int(cur[0]))
	last := (w - 1) >> 1
	for x := 1; x <= last; x++ {
		tl, t, l, c := int(top[x-1]), int(top[x]), int(cur[x-1]), int(cur[x])
		avg := tl + t + l + c + 8
		diag12 := (avg + 2*(t+l)) >> 3
		diag03 := (avg + 2*(tl+c)) >> 3
		if lower {
			dst[2*x-1], dst[2*x] = uint8((diag03+l)>>1), uint8((diag12+c)>>1)
		} else {
			dst[2*x-1], dst[2*x] = uint8((diag12+tl)>>1), uint8((diag03+t)>>1)
		}
	}
	if w%2 == 0 {
		dst[w-1] = edge(int(top[last]), int(cur[last]))
	}
}

// webpYUVToRGB is libwebp's VP8YUVToR/G/B: products keep their high bits
// (MultHi: ·coeff >> 8), then 6 fractional bits are dropped with clipping.
func webpYUVToRGB(y, u, v int) (uint8, uint8, uint8) {
	mulHi := func(a, coeff int) int { return (a * coeff) >> 8 }
	clip := func(x int) uint8 {
		const fix, mask = 6, (256 << 6) - 1
		switch {
		case x&^mask == 0:
			return uint8(x >> fix)
		case x < 0:
			return 0
		}
		return 255
	}
	yy := mulHi(y, 19077)
	return clip(yy + mulHi(v, 26149) - 14234), clip(yy - mulHi(u, 6419) - mulHi(v, 13320) + 8708), clip(yy + mulHi(u, 33050) - 17685)
}
