package main

import (
	"fmt"

	"github.com/splash-inference/splash/api"
	"github.com/splash-inference/splash/model"
)

// apiVision is what the HTTP frontend needs of src's vision tower: its
// image processor and image tokens; nil for a text-only model.
func apiVision(src *model.Source) (*api.Vision, error) {
	v := src.Config.Vision
	if v == nil {
		return nil, nil
	}
	proc, err := src.ImageProcessor()
	if err != nil {
		return nil, fmt.Errorf("model %s: %w", src.Name, err)
	}
	return &api.Vision{Processor: proc, StartID: int32(v.VisionStartTokenID), PadID: int32(v.ImageTokenID), EndID: int32(v.VisionEndTokenID)}, nil
}
