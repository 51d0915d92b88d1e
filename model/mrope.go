package model

import "fmt"

// ImageSpan is one image among a sequence's tokens as the language model
// takes it: Tokens() image pad tokens from position Start whose input
// embeddings are the vision tower's output rows (in place of the pad
// token's embedding), and whose M-RoPE positions are 3-D.
type ImageSpan struct {
	Start int // sequence position of the image's first pad token
	// GridT, GridH, GridW are the image's token grid: the tower's grid_thw
	// with height and width divided by spatial_merge_size. The tokens run
	// over it row-major, (t, h, w), as VisionTower.Encode returns them.
	GridT, GridH, GridW int
	// Embeds are the tower's output, Tokens() rows of hidden_size; a row
	// that feeds none of the image's tokens may leave it nil.
	Embeds []float32
}

// Tokens is the number of the image's pad tokens.
func (s *ImageSpan) Tokens() int { return s.GridT * s.GridH * s.GridW }

// End is the sequence position after the image's last pad token.
func (s *ImageSpan) End() int { return s.Start + s.Tokens() }

// shift is how much the image moves the rotary positions of the tokens
// after it back: it takes Tokens() sequence positions but advances the
// rotary position by its largest side only (get_rope_index's max + 1).
func (s *ImageSpan) shift() int { return max(s.GridT, s.GridH, s.GridW) - s.Tokens() }

// maxImageTokens bounds one image's tokens, far above any real image
// (a 4-megapixel one is ~4k tokens), so no product of a grid overflows.
const maxImageTokens = 1 << 24

// checkImages reports spans that are out of order, overlapping, empty or
// absurd, or whose tokens in row have no embeddings of width hidden or
// are not pad.
func checkImages(row *Row, hidden int, pad int32) error {
	prevEnd := 0
	for i := range row.Images {
		s := &row.Images[i]
		if s.GridT <= 0 || s.GridH <= 0 || s.GridW <= 0 || s.GridT > maxImageTokens || s.GridH > maxImageTokens ||
			s.GridW > maxImageTokens || int64(s.GridT)*int64(s.GridH)*int64(s.GridW) > maxImageTokens {
			return fmt.Errorf("image %d: grid %d×%d×%d, want positive sides of at most %d tokens in all", i, s.GridT, s.GridH, s.GridW, maxImageTokens)
		}
		if s.Start < prevEnd {
			return fmt.Errorf("image %d starts at position %d, before the previous image's end %d (images in order, apart)", i, s.Start, prevEnd)
		}
		prevEnd = s.End()
		lo, hi := max(s.Start, row.Start), min(s.End(), row.Start+len(row.Tokens))
		if lo >= hi {
			continue
		}
		if len(s.Embeds) != s.Tokens()*hidden {
			return fmt.Errorf("image %d: %d embedding values for %d tokens of width %d", i, len(s.Embeds), s.Tokens(), hidden)
		}
		for p := lo; p < hi; p++ {
			if tok := row.Tokens[p-row.Start]; tok != pad {
				return fmt.Errorf("image %d: position %d holds token %d, not the image pad token %d", i, p, tok, pad)
			}
		}
	}
	return nil
}

// ropePositions appends the M-RoPE positions (temporal, height, width)
// of row's tokens to t, h and w, as transformers' Qwen3-VL get_rope_index
// gives them: a text token's three are its sequence position moved back
// by the images before it (shift); image token k of a span whose rotary
// start is b (its sequence start, moved back likewise) has
// (b + k/(H·W), b + (k/W) mod H, b + k mod W). It reports whether any
// token of the row is an image's, whose three differ.
func ropePositions(t, h, w []int32, row *Row) (_, _, _ []int32, image bool) {
	shift, next := 0, 0 // next: the first span not wholly before the position
	spans := row.Images
	for j := range row.Tokens {
		p := row.Start + j
		for next < len(spans) && spans[next].End() <= p {
			shift += spans[next].shift()
			next++
		}
		if next < len(spans) && spans[next].Start <= p {
			s := &spans[next]
			k, b := p-s.Start, int32(s.Start+shift)
			t = append(t, b+int32(k/(s.GridH*s.GridW)))
			h = append(h, b+int32(k/s.GridW%s.GridH))
			w = append(w, b+int32(k%s.GridW))
			image = true
			continue
		}
		q := int32(p + shift)
		t, h, w = append(t, q), append(h, q), append(w, q)
	}
	return t, h, w, image
}

// mropeFreqs splits invFreq among M-RoPE's three positions: entry s keeps
// the frequencies of section s (temporal, height, width) and zeroes the
// rest, whose rotation by angle 0 leaves their pairs as they are. Pair j
// is height's when interleaved with j mod 3 = 1 and j < 3·section[1],
// width's with j mod 3 = 2 and j < 3·section[2], else temporal's
// (apply_interleaved_mrope); otherwise the sections are consecutive runs.
func mropeFreqs(invFreq []float32, section []int, interleaved bool) [3][]float32 {
	var out [3][]float32
	for s := range out {
		out[s] = make([]float32, len(invFreq))
	}
	for j, f := range invFreq {
		s := 0
		switch {
		case interleaved && j%3 == 1 && j < 3*section[1]:
			s = 1
		case interleaved && j%3 == 2 && j < 3*section[2]:
			s = 2
		case !interleaved && j >= section[0]+section[1]:
			s = 2
		case !interleaved && j >= section[0]:
			s = 1
		}
		out[s][j] = f
	}
	return out
}
