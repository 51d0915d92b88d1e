package imageprep

import "math"

// SmartResize returns the height and width an image of h×w pixels is
// resized to before patching, as transformers' smart_resize
// (models/qwen2_vl/image_processing_qwen2_vl.py, shared by Qwen2-VL,
// Qwen2.5-VL, Qwen3-VL and Qwen3.5): each side rounded to a multiple of
// factor (patch_size·merge_size), Python's round (half to even); if the area
// exceeds maxPixels both sides are scaled by 1/β, β = √(h·w/maxPixels), and
// floored to multiples of factor (at least factor); if it is under
// minPixels, scaled by β = √(minPixels/(h·w)) and ceiled. An aspect ratio
// over 200 is refused, as there, and so is a result smaller than factor.
func SmartResize(h, w, factor, minPixels, maxPixels int) (int, int, error) {
	if h <= 0 || w <= 0 || factor <= 0 {
		return 0, 0, errorf(Malformed, "%dx%d pixels", w, h)
	}
	if float64(max(h, w))/float64(min(h, w)) > 200 {
		return 0, 0, errorf(Unsupported, "%dx%d pixels: the aspect ratio exceeds 200", w, h)
	}
	fh, fw, ff := float64(h), float64(w), float64(factor)
	hBar := int(math.RoundToEven(fh/ff)) * factor
	wBar := int(math.RoundToEven(fw/ff)) * factor
	switch {
	case hBar*wBar > maxPixels:
		beta := math.Sqrt(fh * fw / float64(maxPixels))
		hBar = max(factor, int(math.Floor(fh/beta/ff))*factor)
		wBar = max(factor, int(math.Floor(fw/beta/ff))*factor)
	case hBar*wBar < minPixels:
		beta := math.Sqrt(float64(minPixels) / (fh * fw))
		hBar = int(math.Ceil(fh*beta/ff)) * factor
		wBar = int(math.Ceil(fw*beta/ff)) * factor
	}
	if hBar < factor || wBar < factor { // only when minPixels < factor²
		return 0, 0, errorf(Unsupported, "%dx%d pixels: smaller than one %dx%d block", w, h, factor, factor)
	}
	return hBar, wBar, nil
}
