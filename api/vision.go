package api

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/splash-inference/splash/engine"
	"github.com/splash-inference/splash/imageprep"
	"github.com/splash-inference/splash/mediaurl"
)

// Vision describes the served model's vision tower to the frontend: how
// its images are prepared and the special tokens that place them in a
// prompt. Options.Vision is nil for a text-only model.
type Vision struct {
	// Processor turns a decoded image into the tower's patches; its
	// MergeSize groups merge×merge patches into one image token.
	Processor imageprep.Processor
	// StartID, PadID and EndID are <|vision_start|>, <|image_pad|> (one
	// per image token) and <|vision_end|>.
	StartID, PadID, EndID int32
}

// promptImage is one image of a request, prepared for the tower.
type promptImage struct {
	patches imageprep.Patches
	hash    [32]byte
}

// tokens is the image's pad tokens: one per merged block of patches.
func (im *promptImage) tokens(merge int) int {
	return im.patches.GridT * (im.patches.GridH / merge) * (im.patches.GridW / merge)
}

// requestMedia is one request's attachments as its conversation is read:
// documents become text, and each image becomes a marker in its
// message's text, replaced by the image's tokens when the rendered prompt
// is tokenized (renderChat). The marker holds the server's random nonce,
// so no client text can pass for one.
type requestMedia struct {
	*mediaReader
	vision *Vision
	marker string // the nonce-bearing prefix of every marker
	images []promptImage
	// tokens counts the images' tokens, which the context length bounds:
	// so it also bounds the memory a request's patches take.
	tokens, contextLength int
}

// newRequestMedia starts a request's attachments, after the images of
// an earlier conversation it continues (a stored response's).
func (s *Server) newRequestMedia(earlier []promptImage) *requestMedia {
	m := &requestMedia{mediaReader: s.media, vision: s.opts.Vision, marker: s.imageMarker, images: earlier, contextLength: s.opts.ContextLength}
	for i := range earlier {
		m.tokens += earlier[i].tokens(m.vision.Processor.MergeSize)
	}
	return m
}

// newImageMarker is a server's marker prefix: random, never in a request.
func newImageMarker() string {
	var b [16]byte
	rand.Read(b[:])
	return "<|splash-image-" + hex.EncodeToString(b[:]) + "-"
}

// markerFor is the text standing for image i until the prompt is tokenized.
func (m *requestMedia) markerFor(i int) string { return m.marker + strconv.Itoa(i) + "|>" }

// image reads an image given as a URL (data: or, when allowed, http(s))
// or as base64 data of a media type, prepares it for the tower and
// returns its marker. A text-only model refuses it (imageInput says why,
// with the image's size when its header can be read).
func (m *requestMedia) image(param, url, mediaType, b64 string) (string, error) {
	if m.vision == nil {
		if url != "" || b64 == "" {
			return "", inspectImage(param, url)
		}
		return "", inspectImageData(param, mediaType, b64)
	}
	var media mediaurl.Media
	var err error
	switch {
	case url != "":
		media, err = m.urls.Resolve(m.base, url)
	case b64 != "":
		media, err = m.urls.DecodeBase64(mediaType, b64)
	default:
		return "", invalidf(param, "%s: the image has no URL or data", param)
	}
	if err != nil {
		return "", mediaError(param, err)
	}
	img, err := imageprep.Decode(media.Data, imageprep.Limits{MaxBytes: m.urls.MaxBytes(),
		MaxDecodePixels: decodePixels(m.maxPixels), MaxPixels: imagePixels(m.maxPixels, m.vision)})
	if err != nil {
		return "", imageError(param, err)
	}
	return m.addImage(param, img)
}

// addImage prepares a decoded image for the tower, counts its tokens
// against the context length and returns its marker.
func (m *requestMedia) addImage(param string, img *imageprep.RGB) (string, error) {
	p := m.vision.Processor
	patches, err := p.Patches(img)
	if err != nil {
		return "", imageError(param, err)
	}
	im := promptImage{patches: patches}
	if m.tokens += im.tokens(p.MergeSize); m.tokens >= m.contextLength {
		return "", invalidf(param, "%s: the images so far take %d tokens, which leaves no room in the context length of %d tokens (--max-image-pixels makes each smaller)",
			param, m.tokens, m.contextLength)
	}
	im.hash = engine.HashPatches(patches.Data, patches.GridT, patches.GridH, patches.GridW)
	m.images = append(m.images, im)
	return m.markerFor(len(m.images) - 1), nil
}

// imagePixels is the most pixels an image keeps before the processor
// prepares it: the server's cap, or the processor's own if lower.
func imagePixels(maxPixels int, v *Vision) int { return min(maxPixels, v.Processor.MaxPixels) }

// decodePixels is the header check before decoding: an image may declare
// four times the pixel cap (a 5K screenshot under the default cap), as it
// is then resized down to the cap; a larger one is refused before any
// pixel is decoded, so a decompression bomb costs nothing.
func decodePixels(maxPixels int) int { return 4 * maxPixels }

// imageError is the client's 400 for an image that was not prepared.
func imageError(param string, err error) error {
	msg := strings.TrimPrefix(err.Error(), "imageprep: ")
	var ie *imageprep.Error
	if errors.As(err, &ie) && ie.Kind == imageprep.TooLarge {
		msg += " (--max-image-pixels, --max-media-bytes)"
	}
	return invalidf(param, "%s: %s", param, msg)
}

// splitImages tokenizes a rendered prompt whose text holds image markers:
// the text between markers is tokenized as before (a marker splits it, as
// the special tokens it stands for split a tokenizer's input), and each
// marker becomes <|vision_start|>, the image's pads and <|vision_end|>, in
// the ids and, as those tokens' text, in the prompt's text. A marker the
// template dropped leaves its image out.
func (s *Server) splitImages(rp RenderedPrompt, media *requestMedia) (prompt, error) {
	v := media.vision
	tok := s.opts.Tokenizer
	startText, padText, endText := tok.Decode([]int32{v.StartID}, false), tok.Decode([]int32{v.PadID}, false), tok.Decode([]int32{v.EndID}, false)
	var p prompt
	var text strings.Builder
	rest, restStart := rp.Text, 0
	for {
		at := strings.Index(rest, media.marker)
		if at < 0 {
			break
		}
		num, _, closed := strings.Cut(rest[at+len(media.marker):], "|>")
		i, err := strconv.Atoi(num)
		if !closed || err != nil || i < 0 || i >= len(media.images) {
			return prompt{}, fmt.Errorf("api: the rendered prompt has a malformed image marker at byte %d", restStart+at)
		}
		s.appendPiece(&p, &text, rp, restStart, restStart+at)
		im := &media.images[i]
		n := im.tokens(v.Processor.MergeSize)
		p.ids = append(p.ids, v.StartID)
		merge := v.Processor.MergeSize
		p.images = append(p.images, engine.Image{Start: len(p.ids), GridT: im.patches.GridT,
			GridH: im.patches.GridH / merge, GridW: im.patches.GridW / merge, Hash: im.hash, Patches: im.patches.Data})
		for range n {
			p.ids = append(p.ids, v.PadID)
		}
		p.ids = append(p.ids, v.EndID)
		text.WriteString(startText + strings.Repeat(padText, n) + endText)
		skip := at + len(media.marker) + len(num) + len("|>")
		rest, restStart = rest[skip:], restStart+skip
	}
	s.appendPiece(&p, &text, rp, restStart, len(rp.Text))
	p.text = text.String()
	return p, nil
}

// appendPiece tokenizes rp.Text[a:b], a stretch between image markers,
// with its share of the content spans, onto p (and its text onto text).
func (s *Server) appendPiece(p *prompt, text *strings.Builder, rp RenderedPrompt, a, b int) {
	if a == b {
		return
	}
	piece := RenderedPrompt{Text: rp.Text[a:b]}
	offset := text.Len()
	for _, sp := range rp.Content {
		lo, hi := max(sp.Start, a), min(sp.End, b)
		if lo < hi {
			piece.Content = append(piece.Content, Span{lo - a, hi - a})
			p.content = append(p.content, Span{offset + lo - a, offset + hi - a})
		}
	}
	p.ids = append(p.ids, s.opts.Tokenizer.EncodePrompt(piece)...)
	text.WriteString(piece.Text)
}
