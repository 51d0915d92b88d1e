package imageprep

import "math"

// ResizeBicubic resizes img to w×h as Pillow's Image.resize(…, BICUBIC)
// does on an RGB image, bit for bit (Pillow src/libImaging/Resample.c,
// ImagingResample): a separable filter, the horizontal pass first (over
// just the rows the vertical pass reads) into 8-bit pixels, then the
// vertical pass; the cubic convolution kernel with a = −0.5 and support 2,
// widened by the scale factor when shrinking (an antialiasing filter);
// weights normalised to sum 1 and rounded to 22-bit fixed point.
func ResizeBicubic(img *RGB, w, h int) *RGB {
	if w == img.Width && h == img.Height {
		out := NewRGB(w, h)
		copy(out.Pix, img.Pix)
		return out
	}
	vert := bicubicCoefficients(img.Height, h)
	src := img
	if w != img.Width {
		first := vert.first[0]
		last := vert.first[h-1] + vert.count[h-1]
		src = resampleRows(img, first, last, bicubicCoefficients(img.Width, w))
		for i := range vert.first {
			vert.first[i] -= first
		}
	}
	if h == img.Height {
		return src
	}
	return resampleColumns(src, vert)
}

// precisionBits is the fixed-point precision of Pillow's 8-bit resampling
// weights: 32 bits less 8 for the pixel and 2 for overflow.
const precisionBits = 32 - 8 - 2

// coefficients are one pass's fixed-point weights: output i is the
// weighted sum of inputs first[i] … first[i]+count[i]−1 with weights
// k[i·ksize …].
type coefficients struct {
	first, count []int
	k            []int32
	ksize        int
}

// bicubic is the cubic convolution kernel with a = −0.5 (Keys 1981),
// Pillow's bicubic_filter.
func bicubic(x float64) float64 {
	const a = -0.5
	x = math.Abs(x)
	switch {
	case x < 1:
		return ((a+2)*x-(a+3))*x*x + 1
	case x < 2:
		return (((x-5)*x+8)*x - 4) * a
	}
	return 0
}

// bicubicCoefficients computes Pillow's precompute_coeffs and
// normalize_coeffs_8bpc for resampling inSize samples to outSize over the
// whole input (box 0…inSize).
func bicubicCoefficients(inSize, outSize int) coefficients {
	const support = 2.0
	scale := float64(float32(inSize)) / float64(outSize)
	filterscale := max(scale, 1)
	sup := support * filterscale
	ksize := int(math.Ceil(sup))*2 + 1
	c := coefficients{first: make([]int, outSize), count: make([]int, outSize), k: make([]int32, outSize*ksize), ksize: ksize}
	w := make([]float64, ksize)
	inv := 1 / filterscale
	for i := range outSize {
		center := (float64(i) + 0.5) * scale
		lo := max(int(center-sup+0.5), 0)
		hi := min(int(center+sup+0.5), inSize) - lo
		var sum float64
		for x := range hi {
			w[x] = bicubic((float64(x+lo) - center + 0.5) * inv)
			sum += w[x]
		}
		for x := range hi {
			v := w[x]
			if sum != 0 {
				v /= sum
			}
			if v < 0 {
				c.k[i*ksize+x] = int32(-0.5 + v*(1<<precisionBits))
			} else {
				c.k[i*ksize+x] = int32(0.5 + v*(1<<precisionBits))
			}
		}
		c.first[i], c.count[i] = lo, hi
	}
	return c
}

// clip8 takes a fixed-point sum to a pixel value, clamped to 0…255.
func clip8(ss int32) uint8 {
	v := ss >> precisionBits
	return uint8(min(max(v, 0), 255))
}

// resampleRows is the horizontal pass over rows y0…y1−1 of img: an image
// of c's output width and y1−y0 rows.
func resampleRows(img *RGB, y0, y1 int, c coefficients) *RGB {
	ow := len(c.first)
	out := NewRGB(ow, y1-y0)
	for y := y0; y < y1; y++ {
		in := img.Pix[3*y*img.Width : 3*(y+1)*img.Width]
		o := out.Pix[3*(y-y0)*ow:]
		for x := range ow {
			k := c.k[x*c.ksize : x*c.ksize+c.count[x]]
			p := in[3*c.first[x]:]
			s0, s1, s2 := int32(1<<(precisionBits-1)), int32(1<<(precisionBits-1)), int32(1<<(precisionBits-1))
			for j, kj := range k {
				s0 += int32(p[3*j]) * kj
				s1 += int32(p[3*j+1]) * kj
				s2 += int32(p[3*j+2]) * kj
			}
			o[3*x], o[3*x+1], o[3*x+2] = clip8(s0), clip8(s1), clip8(s2)
		}
	}
	return out
}

// resampleColumns is the vertical pass: an image of img's width and c's
// output height.
func resampleColumns(img *RGB, c coefficients) *RGB {
	oh := len(c.first)
	w := img.Width
	out := NewRGB(w, oh)
	for y := range oh {
		k := c.k[y*c.ksize : y*c.ksize+c.count[y]]
		o := out.Pix[3*y*w : 3*(y+1)*w]
		for i := range o {
			s := int32(1 << (precisionBits - 1))
			for j, kj := range k {
				s += int32(img.Pix[3*(c.first[y]+j)*w+i]) * kj
			}
			o[i] = clip8(s)
		}
	}
	return out
}
