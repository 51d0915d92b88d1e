package imageprep

import (
	"encoding/json"
	"fmt"
)

// Processor is the image part of a checkpoint's preprocessor_config.json
// (transformers' Qwen2VLImageProcessor, used by Qwen3-VL and Qwen3.5).
type Processor struct {
	PatchSize         int        // patch_size: pixels a side of a patch
	TemporalPatchSize int        // temporal_patch_size: frames a patch spans; a still image is repeated
	MergeSize         int        // merge_size: patches a side merged into one token
	MinPixels         int        // size.shortest_edge (or min_pixels)
	MaxPixels         int        // size.longest_edge (or max_pixels)
	RescaleFactor     float64    // rescale_factor: 1/255
	Mean, Std         [3]float64 // image_mean, image_std
}

// DefaultProcessor is Qwen2VLImageProcessor's defaults (OpenAI CLIP's mean
// and std).
func DefaultProcessor() Processor {
	return Processor{
		PatchSize: 14, TemporalPatchSize: 2, MergeSize: 2,
		MinPixels: 56 * 56, MaxPixels: 28 * 28 * 1280, RescaleFactor: 1.0 / 255,
		Mean: [3]float64{0.48145466, 0.4578275, 0.40821073},
		Std:  [3]float64{0.26862954, 0.26130258, 0.27577711},
	}
}

// ParseProcessor reads preprocessor_config.json; absent keys keep
// DefaultProcessor's values.
func ParseProcessor(data []byte) (Processor, error) {
	var raw struct {
		PatchSize         *int      `json:"patch_size"`
		TemporalPatchSize *int      `json:"temporal_patch_size"`
		MergeSize         *int      `json:"merge_size"`
		MinPixels         *int      `json:"min_pixels"`
		MaxPixels         *int      `json:"max_pixels"`
		RescaleFactor     *float64  `json:"rescale_factor"`
		ImageMean         []float64 `json:"image_mean"`
		ImageStd          []float64 `json:"image_std"`
		Size              *struct {
			ShortestEdge *int `json:"shortest_edge"`
			LongestEdge  *int `json:"longest_edge"`
		} `json:"size"`
	}
	p := DefaultProcessor()
	if err := json.Unmarshal(data, &raw); err != nil {
		return p, fmt.Errorf("imageprep: preprocessor_config.json: %w", err)
	}
	setInt := func(dst *int, v *int) {
		if v != nil {
			*dst = *v
		}
	}
	setInt(&p.PatchSize, raw.PatchSize)
	setInt(&p.TemporalPatchSize, raw.TemporalPatchSize)
	setInt(&p.MergeSize, raw.MergeSize)
	setInt(&p.MinPixels, raw.MinPixels)
	setInt(&p.MaxPixels, raw.MaxPixels)
	if raw.Size != nil { // transformers prefers size over min/max_pixels
		setInt(&p.MinPixels, raw.Size.ShortestEdge)
		setInt(&p.MaxPixels, raw.Size.LongestEdge)
	}
	if raw.RescaleFactor != nil {
		p.RescaleFactor = *raw.RescaleFactor
	}
	for name, pair := range map[string]struct {
		src []float64
		dst *[3]float64
	}{"image_mean": {raw.ImageMean, &p.Mean}, "image_std": {raw.ImageStd, &p.Std}} {
		switch len(pair.src) {
		case 0:
		case 3:
			copy(pair.dst[:], pair.src)
		default:
			return p, fmt.Errorf("imageprep: preprocessor_config.json: %s has %d values, want 3", name, len(pair.src))
		}
	}
	return p, p.Check()
}

// Check reports a configuration the processor cannot run.
func (p Processor) Check() error {
	const maxSide = 1 << 10
	switch {
	case p.PatchSize <= 0 || p.PatchSize > maxSide || p.MergeSize <= 0 || p.MergeSize > maxSide ||
		p.TemporalPatchSize <= 0 || p.TemporalPatchSize > maxSide:
		return fmt.Errorf("imageprep: patch_size %d, merge_size %d, temporal_patch_size %d: each must be in 1…%d",
			p.PatchSize, p.MergeSize, p.TemporalPatchSize, maxSide)
	case p.MinPixels < 0 || p.MaxPixels <= 0 || p.MinPixels > p.MaxPixels:
		return fmt.Errorf("imageprep: min pixels %d and max pixels %d: want 0 ≤ min ≤ max, max > 0", p.MinPixels, p.MaxPixels)
	}
	for c := range 3 {
		if !(p.Std[c] != 0) {
			return fmt.Errorf("imageprep: image_std[%d] is %v", c, p.Std[c])
		}
	}
	return nil
}

// Patches is an image as the vision tower reads it: GridT·GridH·GridW
// patches of Dim values each.
type Patches struct {
	Data                []float32 // (GridT·GridH·GridW, Dim)
	GridT, GridH, GridW int       // image_grid_thw: patches along time, height and width
	Dim                 int       // channels·temporal_patch_size·patch_size²
}

// Patches resizes img with SmartResize and ResizeBicubic, rescales and
// normalises it, and lays it out as Qwen2VLImageProcessor's pixel_values:
// a still image repeated over the temporal patch (grid_t 1); rows ordered
// by merge block (row-major), then by patch within the block (row-major);
// each row's values ordered channel, frame, patch row, patch column.
func (p Processor) Patches(img *RGB) (Patches, error) {
	factor := p.PatchSize * p.MergeSize
	h, w, err := SmartResize(img.Height, img.Width, factor, p.MinPixels, p.MaxPixels)
	if err != nil {
		return Patches{}, err
	}
	img = ResizeBicubic(img, w, h)
	norm := p.normalize(img)

	ps, ms, tp := p.PatchSize, p.MergeSize, p.TemporalPatchSize
	gh, gw := h/ps, w/ps
	dim := 3 * tp * ps * ps
	out := Patches{Data: make([]float32, gh*gw*dim), GridT: 1, GridH: gh, GridW: gw, Dim: dim}
	row := 0
	for bh := range gh / ms {
		for bw := range gw / ms {
			for mh := range ms {
				for mw := range ms {
					y0, x0 := (bh*ms+mh)*ps, (bw*ms+mw)*ps
					dst := out.Data[row*dim : (row+1)*dim]
					i := 0
					for c := range 3 {
						for range tp {
							for py := range ps {
								for px := range ps {
									dst[i] = norm[c][(y0+py)*w+x0+px]
									i++
								}
							}
						}
					}
					row++
				}
			}
		}
	}
	return out, nil
}

// normalize returns img's channel planes as the processor's rescale then
// normalize compute them: float32(v·rescale_factor) in float64 then
// rounded (transformers' rescale), then (x − mean)/std in float32.
func (p Processor) normalize(img *RGB) [3][]float32 {
	var planes [3][]float32
	n := img.Width * img.Height
	for c := range 3 {
		planes[c] = make([]float32, n)
		mean, std := float32(p.Mean[c]), float32(p.Std[c])
		for i := range n {
			x := float32(float64(img.Pix[3*i+c]) * p.RescaleFactor)
			planes[c][i] = (x - mean) / std
		}
	}
	return planes
}
