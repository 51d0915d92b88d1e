package api_test

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"image"
	"image/gif"
	"image/jpeg"
	"image/png"
	"strings"
	"testing"

	"github.com/splash-inference/splash/api"
)

// encoded returns a w×h image in a format as base64.
func encoded(t *testing.T, format string, w, h int) string {
	t.Helper()
	img := image.NewGray(image.Rect(0, 0, w, h))
	var buf bytes.Buffer
	var err error
	switch format {
	case "png":
		err = png.Encode(&buf, img)
	case "jpeg":
		err = jpeg.Encode(&buf, img, nil)
	case "gif":
		err = gif.Encode(&buf, img, nil)
	case "webp-lossless":
		// RIFF header, then a VP8L chunk whose 14-bit fields hold size-1
		buf.WriteString("RIFF\x00\x00\x00\x00WEBPVP8L\x00\x00\x00\x00\x2f")
		binary.Write(&buf, binary.LittleEndian, uint32(w-1)|uint32(h-1)<<14)
		buf.Write(make([]byte, 8))
	case "webp-extended":
		buf.WriteString("RIFF\x00\x00\x00\x00WEBPVP8X\x0a\x00\x00\x00\x00\x00\x00\x00")
		buf.Write([]byte{byte(w - 1), byte((w - 1) >> 8), byte((w - 1) >> 16), byte(h - 1), byte((h - 1) >> 8), byte((h - 1) >> 16)})
	}
	if err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(buf.Bytes())
}

// TestImageInputs: images are refused (the served models are text-only),
// and the refusal names the pixel cap when the image is over it, in each
// dialect's error shape.
func TestImageInputs(t *testing.T) {
	ts := startServer(t, api.Options{ContextLength: 100, MaxImagePixels: 100 * 100})
	chat := func(url string) string {
		return `{"messages":[{"role":"user","content":[{"type":"text","text":"what is this?"},{"type":"image_url","image_url":{"url":"` + url + `"}}]}]}`
	}
	responses := func(url string) string {
		return `{"input":[{"role":"user","content":[{"type":"input_image","image_url":"` + url + `"}]}]}`
	}
	messages := func(mediaType, data string) string {
		return `{"max_tokens":5,"messages":[{"role":"user","content":[{"type":"image","source":{"type":"base64","media_type":"` + mediaType + `","data":"` + data + `"}}]}]}`
	}
	tests := []struct {
		name, path, body string
		want             []string
	}{
		{"small png", "/v1/chat/completions", chat("data:image/png;base64," + encoded(t, "png", 10, 10)), []string{"text-only"}},
		{"large png", "/v1/chat/completions", chat("data:image/png;base64," + encoded(t, "png", 200, 100)), []string{"200×100 = 20000 pixels", "10000", "--max-image-pixels"}},
		{"exactly at the cap", "/v1/chat/completions", chat("data:image/png;base64," + encoded(t, "png", 100, 100)), []string{"text-only"}},
		{"large jpeg", "/v1/chat/completions", chat("data:image/jpeg;base64," + encoded(t, "jpeg", 101, 100)), []string{"101×100"}},
		{"large gif", "/v1/chat/completions", chat("data:image/gif;base64," + encoded(t, "gif", 300, 40)), []string{"300×40"}},
		{"large webp lossless", "/v1/chat/completions", chat("data:image/webp;base64," + encoded(t, "webp-lossless", 1000, 11)), []string{"1000×11"}},
		{"large webp extended", "/v1/chat/completions", chat("data:image/webp;base64," + encoded(t, "webp-extended", 70000, 2)), []string{"70000×2"}},
		{"remote url", "/v1/chat/completions", chat("https://example.com/cat.png"), []string{"not fetched", "text-only"}},
		{"not base64", "/v1/chat/completions", chat("data:image/png;base64,@@@"), []string{"not valid base64"}},
		{"not an image", "/v1/chat/completions", chat("data:image/png;base64," + base64.StdEncoding.EncodeToString([]byte("hello"))), []string{"not PNG"}},
		{"responses large", "/v1/responses", responses("data:image/png;base64," + encoded(t, "png", 500, 500)), []string{"500×500"}},
		{"responses small", "/v1/responses", responses("data:image/png;base64," + encoded(t, "png", 5, 5)), []string{"text-only"}},
		{"anthropic large", "/v1/messages", messages("image/png", encoded(t, "png", 120, 120)), []string{"120×120"}},
		{"anthropic small", "/v1/messages", messages("image/jpeg", encoded(t, "jpeg", 8, 8)), []string{"text-only"}},
		{"anthropic bad source", "/v1/messages", `{"max_tokens":5,"messages":[{"role":"user","content":[{"type":"image","source":{"type":"file"}}]}]}`, []string{`"file"`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			msg := wantInvalid(t, ts.do(t, "POST", tc.path, tc.body), tc.path, tc.want)
			if overCap := strings.Contains(tc.want[0], "×"); strings.Contains(msg, "--max-image-pixels") != overCap {
				t.Errorf("message %q: pixel cap named when it should not be (or the reverse)", msg)
			}
		})
	}
	// the server still serves text afterwards
	if res := ts.do(t, "POST", "/v1/chat/completions", `{"messages":[{"role":"user","content":"hi"}],"max_tokens":2}`); res.status != 200 {
		t.Fatalf("text request after image refusals: %d %s", res.status, res.body)
	}
}
