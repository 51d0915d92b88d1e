package fake

import (
	"strings"

	"github.com/splash-inference/splash/api"
)

// BOS is the id of the fake tokenizer's beginning-of-sequence token.
const BOS = 256

// VisionStart, ImagePad and VisionEnd are its image tokens (never
// produced by Encode: the frontend places them as ids).
const (
	VisionStart = 257 + iota
	ImagePad
	VisionEnd
)

// specialText is the text Decode gives a special token, "" for others.
func specialText(id int32) string {
	switch id {
	case BOS:
		return "<s>"
	case VisionStart:
		return "<|vision_start|>"
	case ImagePad:
		return "<|image_pad|>"
	case VisionEnd:
		return "<|vision_end|>"
	}
	return ""
}

// Tokenizer is byte-level: every byte is one token.
type Tokenizer struct{}

var _ api.Tokenizer = Tokenizer{}

// Encode returns the bytes of text, after BOS when addSpecial.
func (Tokenizer) Encode(text string, addSpecial bool) []int32 {
	ids := make([]int32, 0, len(text)+1)
	if addSpecial {
		ids = append(ids, BOS)
	}
	for i := range len(text) {
		ids = append(ids, int32(text[i]))
	}
	return ids
}

// EncodePrompt returns the bytes of the prompt's text: a byte-level
// tokenizer has no control tokens to keep out of content.
func (t Tokenizer) EncodePrompt(p api.RenderedPrompt) []int32 { return t.Encode(p.Text, false) }

// Decode turns byte tokens back into text; the special tokens are their
// text unless skipped (BOS is "<s>"), and unknown ids become U+FFFD.
func (Tokenizer) Decode(ids []int32, skipSpecial bool) string {
	var b strings.Builder
	var raw []byte
	for _, id := range ids {
		switch {
		case id >= 0 && id < 256:
			raw = append(raw, byte(id))
			continue
		case specialText(id) != "" && skipSpecial:
		case specialText(id) != "":
			raw = append(raw, specialText(id)...)
		default:
			raw = append(raw, "\uFFFD"...)
		}
	}
	b.Write(raw)
	return b.String()
}
