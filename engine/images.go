package engine

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math"

	"github.com/splash-inference/splash/model"
)

// Image is one image of a request's prompt: where its tokens are, what the
// vision tower reads, and a hash of its content.
type Image struct {
	// Start is the prompt position of the first of the image's
	// GridT·GridH·GridW pad tokens (after its vision start token).
	Start int
	// GridT, GridH, GridW are its token grid, model.ImageSpan's: the
	// processor's grid_thw with height and width divided by the tower's
	// spatial_merge_size.
	GridT, GridH, GridW int
	// Hash names the image's content as the tower sees it (for example a
	// SHA-256 of its processed patches, or of its decoded pixels and the
	// processor's settings): the same image resent has the same hash, two
	// different ones never do. It keys the embedding cache (ImageCache)
	// and the prefix cache, where every pad token has the same id.
	Hash [32]byte
	// Patches are the processor's patches (imageprep.Patches.Data) of the
	// (GridT, GridH·merge, GridW·merge) patch grid, for the tower to encode
	// once no cache holds the image; nil when Embeds is set.
	Patches []float32
	// Embeds are the tower's output when the caller has it already: one
	// row of the language model's width per token.
	Embeds []float32
}

// HashPatches is an Image.Hash for processed patches: a SHA-256 of the
// patch grid (grid_thw) and the patches' float32 values, so that what the
// tower would read names the image, whatever file it came from.
func HashPatches(patches []float32, gridT, gridH, gridW int) [32]byte {
	h := sha256.New()
	var buf [4096]byte
	for _, g := range []int{gridT, gridH, gridW} {
		binary.LittleEndian.PutUint64(buf[:8], uint64(g))
		h.Write(buf[:8])
	}
	for len(patches) > 0 {
		n := min(len(patches), len(buf)/4)
		for i, v := range patches[:n] {
			binary.LittleEndian.PutUint32(buf[4*i:], math.Float32bits(v))
		}
		h.Write(buf[:4*n])
		patches = patches[n:]
	}
	var sum [32]byte
	h.Sum(sum[:0])
	return sum
}

// Tokens is the number of the image's pad tokens.
func (im *Image) Tokens() int { return im.GridT * im.GridH * im.GridW }

// maxImageTokens bounds one image's tokens (model's bound).
const maxImageTokens = 1 << 24

// checkImages reports images a prompt of n tokens cannot hold: out of
// order or overlapping, outside the prompt, with an empty or absurd grid,
// or with neither patches nor embeddings.
func checkImages(images []Image, n int) error {
	end := 0
	for i := range images {
		im := &images[i]
		switch {
		case im.GridT <= 0 || im.GridH <= 0 || im.GridW <= 0 || im.GridT > maxImageTokens || im.GridH > maxImageTokens ||
			im.GridW > maxImageTokens || int64(im.GridT)*int64(im.GridH)*int64(im.GridW) > maxImageTokens:
			return fmt.Errorf("image %d: grid %d×%d×%d, want positive sides of at most %d tokens in all", i, im.GridT, im.GridH, im.GridW, maxImageTokens)
		case im.Start < end:
			return fmt.Errorf("image %d starts at prompt position %d, before the previous image's end %d", i, im.Start, end)
		case im.Start+im.Tokens() > n:
			return fmt.Errorf("image %d: %d tokens from position %d run past the prompt's %d", i, im.Tokens(), im.Start, n)
		case im.Patches == nil && im.Embeds == nil:
			return fmt.Errorf("image %d has neither patches nor embeddings", i)
		}
		end = im.Start + im.Tokens()
	}
	return nil
}

// CacheKeys returns the prompt as the prefix cache names it: each image's
// pad tokens replaced by keys drawn from its Hash and their index, so two
// different images of one size share no cached block and the same image
// resent hits its blocks. A key is a negative int32 (31 bits of the
// image's hash mixed with the index), never a token id; without images
// the prompt itself is returned. A disk tier names blocks by the same
// list (kvcache.ChainHashes).
func CacheKeys(prompt []int32, images []Image) []int32 {
	if len(images) == 0 {
		return prompt
	}
	keys := append([]int32(nil), prompt...)
	for i := range images {
		im := &images[i]
		// The hash's bits are already uniform: each index takes its own
		// odd-multiplier mix of them.
		h := binary.LittleEndian.Uint64(im.Hash[:8]) ^ binary.LittleEndian.Uint64(im.Hash[8:16])
		for k := range min(im.Tokens(), len(keys)-im.Start) {
			x := (h ^ uint64(k)*0x9e3779b97f4a7c15) * 0xbf58476d1ce4e5b9
			keys[im.Start+k] = int32(uint32(x>>32^x) | 1<<31)
		}
	}
	return keys
}

// imageSpans are the model's view of a sequence's images: their places
// and grids, embeddings filled in by Plan.EncodeImages while rows need them.
func imageSpans(images []Image) []model.ImageSpan {
	if len(images) == 0 {
		return nil
	}
	spans := make([]model.ImageSpan, len(images))
	for i := range images {
		im := &images[i]
		spans[i] = model.ImageSpan{Start: im.Start, GridT: im.GridT, GridH: im.GridH, GridW: im.GridW}
	}
	return spans
}

// CheckImages reports images the model with vision tower v cannot take in
// prompt: besides what Scheduler.Add refuses, pad tokens that are not
// v's image token, patches that do not fill the grid, embeddings of
// another width than hidden. Call it where requests are built, so a bad
// one gets its own error rather than failing a batch.
func CheckImages(prompt []int32, images []Image, v *model.VisionConfig, hidden int) error {
	if len(images) == 0 {
		return nil
	}
	if v == nil {
		return fmt.Errorf("engine: the model has no vision tower to read images")
	}
	if err := checkImages(images, len(prompt)); err != nil {
		return fmt.Errorf("engine: %w", err)
	}
	m2 := v.SpatialMergeSize * v.SpatialMergeSize
	for i := range images {
		im := &images[i]
		for p := im.Start; p < im.Start+im.Tokens(); p++ {
			if prompt[p] != int32(v.ImageTokenID) {
				return fmt.Errorf("engine: image %d: prompt position %d holds token %d, not the image pad token %d", i, p, prompt[p], v.ImageTokenID)
			}
		}
		switch {
		case im.Embeds != nil && len(im.Embeds) != im.Tokens()*hidden:
			return fmt.Errorf("engine: image %d: %d embedding values for %d tokens of width %d", i, len(im.Embeds), im.Tokens(), hidden)
		case im.Embeds == nil && im.GridT != 1:
			return fmt.Errorf("engine: image %d has %d frames: only still images (grid_t 1) are supported", i, im.GridT)
		case im.Embeds == nil && len(im.Patches) != im.Tokens()*m2*v.PatchDim():
			return fmt.Errorf("engine: image %d: %d patch values for a %d×%d token grid of %d patches of %d", i, len(im.Patches),
				im.GridH, im.GridW, m2, v.PatchDim())
		}
	}
	return nil
}

// EncodeImages gives the images that the plan's rows feed their
// embeddings (from the image itself, cache, or c's tower) and lets those
// wholly before their sequence's row go, the cache keeping them. Call it
// after Schedule and before Batch, where the model runs: it may run the
// tower.
func (p *Plan) EncodeImages(c *ImageCache) error {
	for i := range p.Rows {
		r := &p.Rows[i]
		if r.seq == nil {
			continue
		}
		end := r.Start + len(r.Tokens)
		for j := range r.seq.spans {
			s, im := &r.seq.spans[j], &r.seq.images[j]
			switch {
			case s.End() <= r.Start:
				s.Embeds = nil
			case s.Start < end && s.Embeds == nil:
				if c == nil {
					return fmt.Errorf("engine: request %d has images, but the model has no vision tower", r.Seq)
				}
				e, err := c.Embeddings(im)
				if err != nil {
					return fmt.Errorf("engine: request %d image %d: %w", r.Seq, j, err)
				}
				s.Embeds = e
			}
		}
	}
	return nil
}
