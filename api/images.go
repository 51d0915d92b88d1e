package api

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"image"
	"image/gif"
	"image/jpeg"
	"image/png"
	"strings"

	"github.com/valyala/fasthttp"
)

// DefaultMaxImagePixels is the default cap on one input image's width ×
// height (2048 × 2048), the --max-image-pixels of `splash serve`.
const DefaultMaxImagePixels = 4 << 20

// imageInput is an image content part (OpenAI image_url, Responses
// input_image, Anthropic image block) sent to a text-only model, which
// refuses it; the error still says whether the image would also break the
// server's pixel cap, measured from the image's own header, so a client
// learns both limits from one request.
type imageInput struct {
	param         string
	width, height int    // 0 when the size could not be read
	unreadable    string // why the size could not be read, if so
}

func (e *imageInput) Error() string { return "api: image input in " + e.param }

// apiError is the 400 the client sees, given the server's cap.
func (e *imageInput) apiError(maxPixels int, model string) *apiError {
	if maxPixels > 0 && e.width > 0 && e.width*e.height > maxPixels {
		return invalidf(e.param, "%s: the image is %d×%d = %d pixels, above this server's limit of %d (--max-image-pixels)",
			e.param, e.width, e.height, e.width*e.height, maxPixels)
	}
	if e.unreadable != "" {
		return invalidf(e.param, "%s: %s; besides, model %s is text-only and does not accept images", e.param, e.unreadable, model)
	}
	return invalidf(e.param, "%s: model %s is text-only and does not accept images", e.param, model)
}

// inspectImage reads the size of an image given as a URL: a data: URL
// (base64) is decoded far enough to read its header; other URLs are never
// fetched (a local server must not make requests on a client's behalf).
func inspectImage(param, url string) *imageInput {
	in := &imageInput{param: param}
	if !strings.HasPrefix(url, "data:") {
		if url == "" {
			in.unreadable = "the image has no URL or data"
		} else {
			in.unreadable = "remote image URLs are not fetched (send a base64 data: URL)"
		}
		return in
	}
	meta, data, ok := strings.Cut(url[len("data:"):], ",")
	if !ok || !strings.HasSuffix(meta, ";base64") {
		in.unreadable = "the data: URL is not base64 (want data:image/png;base64,...)"
		return in
	}
	return inspectImageData(param, strings.TrimSuffix(meta, ";base64"), data)
}

// inspectImageData reads the size of base64 image data of a media type.
func inspectImageData(param, mediaType, b64 string) *imageInput {
	in := &imageInput{param: param}
	raw, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		in.unreadable = "the image data is not valid base64"
		return in
	}
	cfg, err := imageConfig(mediaType, raw)
	if err != nil {
		in.unreadable = err.Error()
		return in
	}
	in.width, in.height = cfg.Width, cfg.Height
	return in
}

// imageConfig reads an image header by its magic bytes (the media type a
// client sends is often wrong), without registering decoders globally.
func imageConfig(mediaType string, raw []byte) (image.Config, error) {
	switch {
	case bytes.HasPrefix(raw, []byte("\x89PNG\r\n\x1a\n")):
		return png.DecodeConfig(bytes.NewReader(raw))
	case bytes.HasPrefix(raw, []byte("\xff\xd8")):
		return jpeg.DecodeConfig(bytes.NewReader(raw))
	case bytes.HasPrefix(raw, []byte("GIF8")):
		return gif.DecodeConfig(bytes.NewReader(raw))
	case len(raw) >= 30 && string(raw[:4]) == "RIFF" && string(raw[8:12]) == "WEBP":
		return webpConfig(raw)
	}
	return image.Config{}, fmt.Errorf("the image data (%s) is not PNG, JPEG, GIF or WebP", mediaType)
}

// webpConfig reads the canvas size of a WebP file from its first chunk
// (VP8X, VP8L or VP8 — the three layouts of the RIFF container).
func webpConfig(raw []byte) (image.Config, error) {
	le24 := func(b []byte) int { return int(b[0]) | int(b[1])<<8 | int(b[2])<<16 }
	chunk := string(raw[12:16])
	switch chunk {
	case "VP8X":
		return image.Config{Width: 1 + le24(raw[24:27]), Height: 1 + le24(raw[27:30])}, nil
	case "VP8L":
		b := raw[21:25]
		bits := uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
		return image.Config{Width: 1 + int(bits&0x3fff), Height: 1 + int(bits>>14&0x3fff)}, nil
	case "VP8 ":
		// frame tag (3 bytes) and start code (3 bytes), then 14-bit sizes
		return image.Config{Width: int(raw[26]) | int(raw[27]&0x3f)<<8, Height: int(raw[28]) | int(raw[29]&0x3f)<<8}, nil
	}
	return image.Config{}, errors.New("the WebP image has an unknown first chunk")
}

// imageLimits is what writeError needs to word an image refusal; the
// guard stores it in each request's user values.
type imageLimits struct {
	maxPixels int
	model     string
}

const imageLimitsKey = "splash.imageLimits"

// resolveImageError turns an image refusal into the client's 400, worded
// with the server's limits.
func resolveImageError(ctx *fasthttp.RequestCtx, err error) error {
	var img *imageInput
	if !errors.As(err, &img) {
		return err
	}
	lim, _ := ctx.UserValue(imageLimitsKey).(imageLimits)
	return img.apiError(lim.maxPixels, lim.model)
}

// imageSource is an Anthropic image block's source: base64 data with its
// media type, or a URL.
type imageSource struct {
	Type      string `json:"type"`
	MediaType string `json:"media_type"`
	Data      string `json:"data"`
	URL       string `json:"url"`
}

// read reads the image as m does, returning its marker.
func (s imageSource) read(m *requestMedia, param string) (string, error) {
	switch s.Type {
	case "base64":
		return m.image(param, "", s.MediaType, s.Data)
	case "url":
		return m.image(param, s.URL, "", "")
	}
	if m.vision == nil {
		return "", &imageInput{param: param, unreadable: fmt.Sprintf("image source type %q is not base64 or url", s.Type)}
	}
	return "", invalidf(param, "%s: image source type %s is not base64 or url", param, quote(s.Type))
}
