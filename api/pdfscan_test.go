package api_test

import (
	"encoding/base64"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/splash-inference/splash/api"
	"github.com/splash-inference/splash/api/internal/fake"
	"github.com/splash-inference/splash/pdfdoc/pdftest"
)

// TestScannedPDFPages: a PDF page with no text (a scan: here a black
// square) reaches a model with a vision tower as an image, rendered within
// --max-image-pixels, right after its page marker, in each dialect;
// /apply-template, /tokenize and count_tokens show and count it as
// inference got it; sent again, it is the same. A text-only model gets the page's marker alone.
func TestScannedPDFPages(t *testing.T) {
	pdf := base64.StdEncoding.EncodeToString(pdftest.Doc{Pages: []string{"Revenue grew by nine percent.", ""}, Figures: []int{1}}.Build())
	const text = "[scan.pdf, page 1]\nRevenue grew by nine percent.\n\n[scan.pdf, page 2]"
	// A Letter page within 100·100 pixels renders at 87×113;
	// smart_resize makes it 88×112: 22×28 tokens.
	grid := [3]int{1, 28, 22}
	withVision := text + "\n" + imageRun(22*28) + "\n"
	tests := []struct {
		name, path, body string
	}{
		{"chat", "/v1/chat/completions", chatWithFile(chatFile("data:application/pdf;base64,"+pdf, "scan.pdf"))},
		{"responses", "/v1/responses", responsesWithFile(responsesFile("data:application/pdf;base64,"+pdf, "scan.pdf"))},
		{"anthropic", "/v1/messages", messagesWithFile(anthropicDocument(`{"type":"base64","media_type":"application/pdf","data":"`+pdf+`"}`, "scan.pdf"))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			eng := fake.New()
			ts := startServer(t, api.Options{Engine: eng, Vision: testVision(), MaxImagePixels: 100 * 100, PDFReader: api.TestPDFReader()})
			res := ts.do(t, "POST", tt.path, tt.body)
			if res.status != 200 {
				t.Fatalf("status %d: %s", res.status, res.body)
			}
			req := eng.Last()
			checkImages(t, req, [][3]int{grid})
			if prompt := (fake.Tokenizer{}).Decode(req.Prompt, false); !strings.Contains(prompt, withVision) {
				t.Errorf("prompt %q does not hold %q", prompt, withVision)
			}
			// The square is black, the page around it white: (v-0.5)/0.5.
			if lo, hi := slices.Min(req.Images[0].Patches), slices.Max(req.Images[0].Patches); lo > -0.99 || hi < 0.99 {
				t.Errorf("patch values span %v..%v, want black and white", lo, hi)
			}
			checkCounted(t, ts, tt.path, tt.body, req.Prompt)
			// Sent again, the document comes from the reader's cache, page
			// image and all.
			if res := ts.do(t, "POST", tt.path, tt.body); res.status != 200 || !slices.Equal(eng.Last().Prompt, req.Prompt) ||
				len(eng.Last().Images) != 1 || eng.Last().Images[0].Hash != req.Images[0].Hash {
				t.Errorf("sent again: %d, not the same prompt and image", res.status)
			}

			// A text-only model: the page's marker, no image.
			eng = fake.New()
			ts = startServer(t, api.Options{Engine: eng, MaxImagePixels: 100 * 100, PDFReader: api.TestPDFReader()})
			if res := ts.do(t, "POST", tt.path, tt.body); res.status != 200 {
				t.Fatalf("text-only: status %d: %s", res.status, res.body)
			}
			if n := len(eng.Last().Images); n != 0 {
				t.Errorf("text-only: %d images reached the model", n)
			}
			want := strings.TrimSuffix(text, "]") + ": no text]\n"
			if prompt := (fake.Tokenizer{}).Decode(eng.Last().Prompt, false); !strings.Contains(prompt, want) {
				t.Errorf("text-only: prompt %q does not hold %q", prompt, want)
			}
		})
	}
}

// checkCounted checks that the endpoints that show or count a request's
// prompt (/apply-template and /tokenize for OpenAI's shapes, count_tokens
// for Anthropic's) agree with prompt, the one inference got.
func checkCounted(t *testing.T, ts *testServer, path, body string, prompt []int32) {
	t.Helper()
	switch path {
	case "/v1/chat/completions":
		var at struct{ Prompt string }
		res := ts.do(t, "POST", "/apply-template", body)
		json.Unmarshal([]byte(res.body), &at)
		if want := (fake.Tokenizer{}).Decode(prompt, false); res.status != 200 || at.Prompt != want {
			t.Errorf("/apply-template: %d %q, want the prompt inference got", res.status, at.Prompt)
		}
		var tok struct{ Tokens []int32 }
		res = ts.do(t, "POST", "/tokenize", body)
		json.Unmarshal([]byte(res.body), &tok)
		if res.status != 200 || !slices.Equal(tok.Tokens, prompt) {
			t.Errorf("/tokenize: %d %s, want the prompt inference got", res.status, res.body)
		}
	case "/v1/messages":
		var counted struct {
			InputTokens int `json:"input_tokens"`
		}
		res := ts.do(t, "POST", "/v1/messages/count_tokens", body)
		json.Unmarshal([]byte(res.body), &counted)
		if res.status != 200 || counted.InputTokens != len(prompt) {
			t.Errorf("count_tokens: %d %s, want %d", res.status, res.body, len(prompt))
		}
	}
}

// TestScannedPDFPageBeyondContext: a scanned page's image counts against
// the context length as any image does, a 400 naming the page beyond it.
func TestScannedPDFPageBeyondContext(t *testing.T) {
	pdf := base64.StdEncoding.EncodeToString(pdftest.Pages("Revenue grew by nine percent.", ""))
	ts := startServer(t, api.Options{Vision: testVision(), MaxImagePixels: 100 * 100, ContextLength: 600, PDFReader: api.TestPDFReader()})
	body := chatWithFile(chatFile("data:application/pdf;base64,"+pdf, "scan.pdf"))
	wantInvalid(t, ts.do(t, "POST", "/v1/chat/completions", body), "/v1/chat/completions",
		[]string{"messages[0].content[1] (page 2)", "616 tokens", "context length of 600"})
}
