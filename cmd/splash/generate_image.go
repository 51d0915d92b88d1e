package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/splash-inference/splash/imageprep"
	"github.com/splash-inference/splash/metal"
	"github.com/splash-inference/splash/model"
	"github.com/splash-inference/splash/tokenizer"
)

// imagePlaceholder marks where --prompt takes the next --image; -1 does
// in --prompt-ids.
const imagePlaceholder = "<image>"

// promptImage is one --image file as the processor prepared it.
type promptImage struct {
	path    string
	patches imageprep.Patches
}

// tokens is the image's pad tokens: one per merged block of patches.
func (im *promptImage) tokens(v *model.VisionConfig) int {
	m := v.SpatialMergeSize
	return im.patches.GridT * (im.patches.GridH / m) * (im.patches.GridW / m)
}

// loadImages decodes and prepares the --image files for src's vision
// tower, refusing them for a model without one.
func loadImages(src *model.Source, paths []string) ([]promptImage, error) {
	if len(paths) == 0 {
		return nil, nil
	}
	if src.Config.Vision == nil {
		return nil, fmt.Errorf("generate: --image: model %s has no vision tower (its config has no vision_config), so it cannot read images", src.Name)
	}
	proc, err := src.ImageProcessor()
	if err != nil {
		return nil, fmt.Errorf("generate: --image: %w", err)
	}
	lim := imageprep.DefaultLimits()
	lim.MaxPixels = min(lim.MaxPixels, proc.MaxPixels)
	images := make([]promptImage, len(paths))
	for i, path := range paths {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("generate: --image: %w", err)
		}
		img, err := imageprep.Decode(data, lim)
		if err != nil {
			return nil, fmt.Errorf("generate: --image %s: %w", path, err)
		}
		p, err := proc.Patches(img)
		if err != nil {
			return nil, fmt.Errorf("generate: --image %s: %w", path, err)
		}
		images[i] = promptImage{path: path, patches: p}
	}
	return images, nil
}

// imageText is the chat template's text for an image: vision start, one
// image pad per token, vision end.
func imageText(tok *tokenizer.Tokenizer, v *model.VisionConfig, n int) string {
	pad := tok.Decode([]int32{int32(v.ImageTokenID)}, false)
	return tok.Decode([]int32{int32(v.VisionStartTokenID)}, false) + strings.Repeat(pad, n) +
		tok.Decode([]int32{int32(v.VisionEndTokenID)}, false)
}

// expandImageText puts each image's text in place of the next <image> of
// prompt.
func expandImageText(prompt string, images []promptImage, tok *tokenizer.Tokenizer, v *model.VisionConfig) (string, error) {
	if n := strings.Count(prompt, imagePlaceholder); n != len(images) {
		return "", fmt.Errorf("generate: --prompt has %d %s for %d --image", n, imagePlaceholder, len(images))
	}
	parts := strings.Split(prompt, imagePlaceholder)
	var b strings.Builder
	for i, part := range parts {
		b.WriteString(part)
		if i < len(images) {
			b.WriteString(imageText(tok, v, images[i].tokens(v)))
		}
	}
	return b.String(), nil
}

// expandImageIDs puts each image's tokens in place of the next -1 of ids.
func expandImageIDs(ids []int32, images []promptImage, v *model.VisionConfig) ([]int32, error) {
	var out []int32
	next := 0
	for _, id := range ids {
		if id != -1 || len(images) == 0 {
			out = append(out, id)
			continue
		}
		if next == len(images) {
			return nil, fmt.Errorf("generate: --prompt-ids has more -1 than the %d --image", len(images))
		}
		out = append(out, int32(v.VisionStartTokenID))
		for range images[next].tokens(v) {
			out = append(out, int32(v.ImageTokenID))
		}
		out = append(out, int32(v.VisionEndTokenID))
		next++
	}
	if next != len(images) {
		return nil, fmt.Errorf("generate: --prompt-ids has %d -1 for %d --image", next, len(images))
	}
	return out, nil
}

// encodeImages runs src's vision tower over the images and places them in
// prompt: the i-th run of image pad tokens after a vision start is image
// i's, and must have its number of tokens.
func encodeImages(src *model.Source, be metal.Backend, prompt []int32, images []promptImage) ([]model.ImageSpan, error) {
	if len(images) == 0 {
		return nil, nil
	}
	tower, err := src.BuildVision(be)
	if err != nil {
		return nil, err
	}
	v := tower.Config()
	m := v.SpatialMergeSize
	spans := make([]model.ImageSpan, 0, len(images))
	for p := 1; p < len(prompt); p++ {
		if prompt[p] != int32(v.ImageTokenID) || prompt[p-1] != int32(v.VisionStartTokenID) {
			continue
		}
		i := len(spans)
		if i == len(images) {
			return nil, fmt.Errorf("generate: the prompt has more images than the %d --image", len(images))
		}
		im := &images[i]
		s := model.ImageSpan{Start: p, GridT: im.patches.GridT, GridH: im.patches.GridH / m, GridW: im.patches.GridW / m}
		if s.End() > len(prompt) || !allEqual(prompt[p:s.End()], int32(v.ImageTokenID)) {
			return nil, fmt.Errorf("generate: image %s needs %d pad tokens after its vision start at position %d", im.path, s.Tokens(), p-1)
		}
		if s.Embeds, err = tower.Encode(im.patches.Data, im.patches.GridH, im.patches.GridW); err != nil {
			return nil, fmt.Errorf("generate: --image %s: %w", im.path, err)
		}
		spans = append(spans, s)
	}
	if len(spans) != len(images) {
		return nil, fmt.Errorf("generate: the prompt has %d images for %d --image", len(spans), len(images))
	}
	return spans, nil
}

func allEqual(ids []int32, id int32) bool {
	for _, x := range ids {
		if x != id {
			return false
		}
	}
	return true
}
