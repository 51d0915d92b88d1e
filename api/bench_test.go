package api_test

import (
	"bytes"
	"encoding/base64"
	"image"
	"image/color"
	"image/jpeg"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/splash-inference/splash/api"
)

// benchmarkRequest measures one request's round trip through the server
// with the zero-delay fake engine (the frontend's overhead plus a local
// HTTP client's).
func benchmarkRequest(b *testing.B, path, body string) {
	benchmarkServed(b, api.Options{}, path, body)
}

// benchmarkServed is benchmarkRequest on a server of opts.
func benchmarkServed(b *testing.B, opts api.Options, path, body string) {
	ts := startServer(b, opts)
	b.ReportAllocs()
	for b.Loop() {
		res, err := http.Post(ts.url+path, "application/json", strings.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		if _, err := io.Copy(io.Discard, res.Body); err != nil {
			b.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != 200 {
			b.Fatalf("status %d", res.StatusCode)
		}
	}
}

func BenchmarkChatCompletion(b *testing.B) {
	benchmarkRequest(b, "/v1/chat/completions", `{"messages":[{"role":"user","content":"hi"}]}`)
}

func BenchmarkChatCompletionStream(b *testing.B) {
	benchmarkRequest(b, "/v1/chat/completions", `{"stream":true,"messages":[{"role":"user","content":"hi"}]}`)
}

func BenchmarkMessagesStream(b *testing.B) {
	benchmarkRequest(b, "/v1/messages", `{"stream":true,"max_tokens":100,"thinking":{"type":"adaptive"},"messages":[{"role":"user","content":"hi"}]}`)
}

func BenchmarkResponsesStream(b *testing.B) {
	benchmarkRequest(b, "/v1/responses", `{"stream":true,"input":"hi"}`)
}

// BenchmarkChatCompletionImage is BenchmarkChatCompletion with a 1920×1080
// JPEG screenshot for a Qwen3.5-shaped processor (patch 16, merge 2:
// 2040 image tokens): the frontend's decoding, resizing, patching and
// hashing of an image, against BenchmarkChatCompletion's round trip.
func BenchmarkChatCompletionImage(b *testing.B) {
	m := image.NewRGBA(image.Rect(0, 0, 1920, 1080))
	for y := range 1080 {
		for x := range 1920 {
			m.SetRGBA(x, y, color.RGBA{uint8(x * 255 / 1920), uint8(y * 255 / 1080), uint8((x ^ y) & 0xff), 255})
		}
	}
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, m, &jpeg.Options{Quality: 90}); err != nil {
		b.Fatal(err)
	}
	v := testVision()
	v.Processor.PatchSize, v.Processor.MinPixels, v.Processor.MaxPixels = 16, 65536, 16777216
	body := `{"max_tokens":1,"messages":[{"role":"user","content":[{"type":"text","text":"what is this?"},` +
		`{"type":"image_url","image_url":{"url":"data:image/jpeg;base64,` + base64.StdEncoding.EncodeToString(buf.Bytes()) + `"}}]}]}`
	benchmarkServed(b, api.Options{Vision: v}, "/v1/chat/completions", body)
}
