package api

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"image"
	"image/png"
	"io"
	"strings"
	"testing"

	"github.com/splash-inference/splash/actors"
	"github.com/splash-inference/splash/engine"
	"github.com/splash-inference/splash/imageprep"
	"github.com/splash-inference/splash/model"
	"github.com/splash-inference/splash/pdfdoc/pdftest"
)

// Minimal stand-ins for the parser fuzz targets (internal tests cannot
// import api/internal/fake, which imports this package).
type byteTokenizer struct{}

func (byteTokenizer) Encode(text string, addSpecial bool) []int32 {
	ids := make([]int32, 0, len(text)+1)
	if addSpecial {
		ids = append(ids, 256)
	}
	for i := range len(text) {
		ids = append(ids, int32(text[i]))
	}
	return ids
}

func (t byteTokenizer) EncodePrompt(p RenderedPrompt) []int32 { return t.Encode(p.Text, false) }

func (byteTokenizer) Decode(ids []int32, _ bool) string {
	b := make([]byte, 0, len(ids))
	for _, id := range ids {
		b = append(b, byte(id))
	}
	return string(b)
}

type lineTemplate struct{}

func (lineTemplate) Render(r ChatRenderRequest) (RenderedPrompt, error) {
	var b strings.Builder
	for _, m := range r.Messages {
		b.WriteString(m.Role + ": " + m.Content + "\n")
	}
	if r.EnableThinking {
		b.WriteString("<think>\n")
	}
	return RenderedPrompt{Text: b.String()}, nil
}

type idleEngine struct{}

func (idleEngine) Generate(context.Context, *actors.Request) (<-chan Event, error) {
	return nil, errors.New("idle engine")
}
func (idleEngine) WriteMetrics(io.Writer) error { return nil }

const fuzzContext = 512

// fuzzPDF is a small PDF in base64, for seeds with documents.
var fuzzPDF = base64.StdEncoding.EncodeToString(pdftest.Pages("page one", "page two"))

// fuzzPNG is a 4×4 PNG in base64 (one image token of fuzzVision), for
// seeds with images.
var fuzzPNG = func() string {
	var buf bytes.Buffer
	png.Encode(&buf, image.NewGray(image.Rect(0, 0, 4, 4)))
	return base64.StdEncoding.EncodeToString(buf.Bytes())
}()

// fuzzVision is a small vision tower: 2-pixel patches merged 2×2, image
// tokens past the byte range.
var fuzzVision = model.VisionConfig{InChannels: 3, PatchSize: 2, TemporalPatchSize: 2, SpatialMergeSize: 2,
	VisionStartTokenID: 257, ImageTokenID: 258, VisionEndTokenID: 259}

func fuzzServer(t testing.TB) *Server {
	v := fuzzVision
	s, err := New(Options{Engine: idleEngine{}, Tokenizer: byteTokenizer{}, Template: lineTemplate{}, ModelID: "m", ContextLength: fuzzContext,
		PDFReader: TestPDFReader(), MaxPDFPages: 4, MaxImagePixels: 64 * 64,
		Vision: &Vision{Processor: imageprep.Processor{PatchSize: v.PatchSize, TemporalPatchSize: v.TemporalPatchSize, MergeSize: v.SpatialMergeSize,
			MinPixels: 16, MaxPixels: 1 << 20, RescaleFactor: 1.0 / 255, Mean: [3]float64{0.5, 0.5, 0.5}, Std: [3]float64{0.5, 0.5, 0.5}},
			StartID: int32(v.VisionStartTokenID), PadID: int32(v.ImageTokenID), EndID: int32(v.VisionEndTokenID)}})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// fuzzParser runs a request parser on arbitrary bodies: it must never
// panic, must fail only with a client error, and must produce requests
// that fit the context.
func fuzzParser(f *testing.F, seeds []string, parse func(s *Server, body []byte) (*actors.Request, error)) {
	for _, seed := range seeds {
		f.Add([]byte(seed))
	}
	s := fuzzServer(f)
	f.Fuzz(func(t *testing.T, body []byte) {
		gen, err := parse(s, body)
		if err != nil {
			var ae *apiError
			if !errors.As(err, &ae) || ae.kind.status() >= 500 {
				t.Fatalf("not a client error: %v", err)
			}
			return
		}
		if gen == nil {
			return
		}
		if gen.MaxTokens < 1 || len(gen.Prompt)+gen.MaxTokens > fuzzContext || gen.N < 1 || gen.TopLogprobs < 0 || gen.TopLogprobs > 20 {
			t.Fatalf("bad request accepted: prompt %d max %d n %d top %d", len(gen.Prompt), gen.MaxTokens, gen.N, gen.TopLogprobs)
		}
		if err := engine.CheckImages(gen.Prompt, gen.Images, &fuzzVision, 0); err != nil {
			t.Fatalf("bad images accepted: %v", err)
		}
	})
}

func FuzzChatRequest(f *testing.F) {
	fuzzParser(f, []string{
		`{"messages":[{"role":"user","content":"hi"}],"max_tokens":5,"stop":["x"],"n":2,"logprobs":true,"top_logprobs":3}`,
		`{"messages":[{"role":"user","content":[{"type":"text","text":"a"}]}],"temperature":0.5,"logit_bias":{"1":-5},"reasoning_effort":"low"}`,
		`{"messages":[{"role":"system","content":null},{"role":"tool","content":"x","tool_call_id":"1"}],"stop":"s","seed":3}`,
		`{"messages":[{"role":"user","content":[{"type":"file","file":{"file_data":"data:application/pdf;base64,` + fuzzPDF + `","filename":"a.pdf"}}]}]}`,
		`{"messages":[{"role":"user","content":[{"type":"text","text":"a"},{"type":"image_url","image_url":{"url":"data:image/png;base64,` + fuzzPNG + `"}}]}]}`,
	}, func(s *Server, body []byte) (*actors.Request, error) {
		var r chatRequest
		if err := decodeJSON(body, &r); err != nil {
			return nil, err
		}
		p, err := s.planChat(&r)
		if err != nil {
			return nil, err
		}
		return p.gen, nil
	})
}

func FuzzMessagesRequest(f *testing.F) {
	fuzzParser(f, []string{
		`{"max_tokens":50,"system":"s","messages":[{"role":"user","content":"hi"}],"stop_sequences":["x"]}`,
		`{"max_tokens":2000,"thinking":{"type":"enabled","budget_tokens":1024},"messages":[{"role":"user","content":[{"type":"text","text":"a"},{"type":"tool_result","tool_use_id":"t","content":"r"}]},{"role":"assistant","content":[{"type":"tool_use","id":"t","name":"f","input":{}}]}]}`,
		`{"max_tokens":9,"messages":[{"role":"user","content":[{"type":"document","title":"t","source":{"type":"base64","media_type":"application/pdf","data":"` + fuzzPDF + `"}},{"type":"document","source":{"type":"text","data":"plain"}}]}]}`,
		`{"max_tokens":9,"messages":[{"role":"user","content":[{"type":"image","source":{"type":"base64","media_type":"image/png","data":"` + fuzzPNG + `"}},{"type":"tool_result","tool_use_id":"t","content":[{"type":"image","source":{"type":"url","url":"data:image/png;base64,` + fuzzPNG + `"}}]}]}]}`,
	}, func(s *Server, body []byte) (*actors.Request, error) {
		var r messagesRequest
		if err := decodeJSON(body, &r); err != nil {
			return nil, err
		}
		p, err := s.planMessages(&r)
		if err != nil {
			return nil, err
		}
		return p.gen, nil
	})
}

func FuzzCompletionsRequest(f *testing.F) {
	fuzzParser(f, []string{
		`{"prompt":"hello","max_tokens":3,"echo":true,"logprobs":2}`,
		`{"prompt":[1,2,3],"n":3}`, `{"prompt":[[5,6]]}`, `{"prompt":["a"],"stop":["b","c"]}`,
	}, func(s *Server, body []byte) (*actors.Request, error) {
		var r completionsRequest
		if err := decodeJSON(body, &r); err != nil {
			return nil, err
		}
		p, err := s.planCompletions(&r)
		if err != nil {
			return nil, err
		}
		return p.gen, nil
	})
}

func FuzzResponsesRequest(f *testing.F) {
	fuzzParser(f, []string{
		`{"input":"hi","instructions":"be brief","max_output_tokens":20,"reasoning":{"effort":"high"}}`,
		`{"input":[{"role":"user","content":[{"type":"input_text","text":"x"}]},{"type":"reasoning","content":[{"type":"reasoning_text","text":"r"}]},{"type":"function_call","call_id":"c","name":"f","arguments":"{}"},{"type":"function_call_output","call_id":"c","output":"o"}]}`,
		`{"input":"x","tools":[{"type":"function","name":"f","parameters":{}}],"top_logprobs":2}`,
		`{"input":[{"role":"user","content":[{"type":"input_file","file_data":"` + fuzzPDF + `","filename":"a.pdf"}]}]}`,
		`{"input":[{"role":"user","content":[{"type":"input_image","image_url":"data:image/png;base64,` + fuzzPNG + `"}]}]}`,
	}, func(s *Server, body []byte) (*actors.Request, error) {
		var r responsesRequest
		if err := decodeJSON(body, &r); err != nil {
			return nil, err
		}
		p, err := s.planResponses(&r)
		if err != nil {
			return nil, err
		}
		return p.gen, nil
	})
}

func FuzzTokenizeRequest(f *testing.F) {
	fuzzParser(f, []string{
		`{"text":"hi"}`, `{"prompt":"x","add_special_tokens":false}`,
		`{"messages":[{"role":"user","content":"x"}],"chat_template_kwargs":{"enable_thinking":false}}`,
	}, func(s *Server, body []byte) (*actors.Request, error) {
		var r tokenizeRequest
		if err := decodeJSON(body, &r); err != nil {
			return nil, err
		}
		_, err := s.tokenize(&r)
		return nil, err
	})
}
