package model

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/splash-inference/splash/imageprep"
)

// ImageProcessor returns how images are prepared for the model's vision
// tower: the directory's preprocessor_config.json (which Pack copies)
// when there is one, else Qwen3-VL's image processor defaults (mean and
// std 0.5, 65,536 to 16,777,216 pixels) with the tower's patch, merge and
// temporal sizes. It refuses a model without a tower, and a processor
// whose patches the tower cannot read.
func (s *Source) ImageProcessor() (imageprep.Processor, error) {
	v := s.Config.Vision
	if v == nil {
		return imageprep.Processor{}, fmt.Errorf("model: %s has no vision tower", s.Name)
	}
	p := imageprep.Processor{PatchSize: v.PatchSize, TemporalPatchSize: v.TemporalPatchSize, MergeSize: v.SpatialMergeSize,
		MinPixels: 65536, MaxPixels: 16777216, RescaleFactor: 1.0 / 255,
		Mean: [3]float64{0.5, 0.5, 0.5}, Std: [3]float64{0.5, 0.5, 0.5}}
	raw, err := os.ReadFile(filepath.Join(s.Dir, "preprocessor_config.json"))
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return p, fmt.Errorf("model: %w", err)
	default:
		if p, err = imageprep.ParseProcessor(raw); err != nil {
			return p, err
		}
	}
	if p.PatchSize != v.PatchSize || p.TemporalPatchSize != v.TemporalPatchSize || p.MergeSize != v.SpatialMergeSize || v.InChannels != 3 {
		return p, fmt.Errorf("model: %s: preprocessor_config.json's patch %d, temporal patch %d and merge %d differ from the vision tower's %d, %d and %d (on %d channels)",
			s.Name, p.PatchSize, p.TemporalPatchSize, p.MergeSize, v.PatchSize, v.TemporalPatchSize, v.SpatialMergeSize, v.InChannels)
	}
	return p, p.Check()
}
