package hybridref

import (
	"math"

	"github.com/splash-inference/splash/model"
)

// Image is one image as the reference's language model takes it: its
// image_grid_thw (the tower's patch grid) and the tower's output, one row
// of hidden_size per merged patch.
type Image struct {
	GridT, GridH, GridW int
	Embeds              []float64
}

// RopeIndex is transformers' Qwen3-VL get_rope_index for one unpadded
// sequence: each image's pad tokens (found from where the previous part
// ended, in order) get (t, h, w) = text_len + st_idx + their index in the
// merged grid, the text before an image st_idx + arange(text_len) in all
// three, st_idx being the largest position so far + 1.
func RopeIndex(cfg *model.Config, tokens []int32, images []Image) [][3]int {
	pos := make([][3]int, 0, len(tokens))
	last := -1
	push := func(p [3]int) {
		pos = append(pos, p)
		last = max(last, p[0], p[1], p[2])
	}
	st := 0
	for _, img := range images {
		m := cfg.Vision.SpatialMergeSize
		ed := st
		for int(tokens[ed]) != cfg.Vision.ImageTokenID {
			ed++
		}
		textLen, stIdx := ed-st, last+1
		for i := range textLen {
			push([3]int{stIdx + i, stIdx + i, stIdx + i})
		}
		lt, lh, lw := img.GridT, img.GridH/m, img.GridW/m
		for t := range lt {
			for h := range lh {
				for w := range lw {
					push([3]int{t + textLen + stIdx, h + textLen + stIdx, w + textLen + stIdx})
				}
			}
		}
		st = ed + lt*lh*lw
	}
	stIdx := last + 1
	for i := range len(tokens) - st {
		push([3]int{stIdx + i, stIdx + i, stIdx + i})
	}
	return pos
}

// mropeAngles are the rotary angles of the rot/2 frequency pairs at a
// 3-D position: freqs[s][i] = pos[s]·inv_freq[i] (inv_freq stored as
// float32), the temporal row kept and, interleaved
// (apply_interleaved_mrope), entries offset::3 up to 3·section[s] taken
// from row s for s = 1, 2; otherwise (Qwen2-VL's layout) the sections as
// consecutive runs. A text-only model has no sections: every pair at
// pos[0].
func mropeAngles(cfg *model.Config, rot int, pos [3]int) []float64 {
	half := rot / 2
	var freqs [3][]float64
	for s := range freqs {
		freqs[s] = make([]float64, half)
		for i := range half {
			f := float64(float32(math.Pow(cfg.RopeTheta, -float64(2*i)/float64(rot))))
			freqs[s][i] = float64(pos[s]) * f
		}
	}
	y := cfg.Hybrid
	sec := y.MRopeSection
	out := append([]float64(nil), freqs[0]...)
	switch {
	case sec == nil:
	case y.MRopeInterleaved:
		for s, offset := range []int{1, 2} {
			for i := offset; i < sec[s+1]*3; i += 3 {
				out[i] = freqs[s+1][i]
			}
		}
	default:
		i := 0
		for s, n := range sec {
			for range n {
				out[i] = freqs[s][i]
				i++
			}
		}
	}
	return out
}
