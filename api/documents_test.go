package api_test

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"github.com/splash-inference/splash/api"
	"github.com/splash-inference/splash/api/internal/fake"
	"github.com/splash-inference/splash/pdfdoc/pdftest"
)

// Request bodies with one user message of text and a file, in each
// dialect's shape; file is the file part or block as JSON.
func chatWithFile(file string) string {
	return `{"messages":[{"role":"user","content":[{"type":"text","text":"Summarise it."},` + file + `]}],"max_tokens":2}`
}

func responsesWithFile(file string) string {
	return `{"input":[{"role":"user","content":[{"type":"input_text","text":"Summarise it."},` + file + `]}],"max_output_tokens":2}`
}

func messagesWithFile(file string) string {
	return `{"max_tokens":2,"messages":[{"role":"user","content":[{"type":"text","text":"Summarise it."},` + file + `]}]}`
}

func chatFile(data, name string) string {
	return `{"type":"file","file":{"file_data":"` + data + `","filename":"` + name + `"}}`
}

func responsesFile(data, name string) string {
	return `{"type":"input_file","file_data":"` + data + `","filename":"` + name + `"}`
}

func anthropicDocument(source, title string) string {
	return `{"type":"document","title":"` + title + `","source":` + source + `}`
}

func pdfBase64(pages ...string) string {
	return base64.StdEncoding.EncodeToString(pdftest.Pages(pages...))
}

// TestDocumentInputs: a document's text reaches the prompt in its place,
// in every dialect, and /apply-template, /tokenize and count_tokens show
// and count it as inference renders it.
func TestDocumentInputs(t *testing.T) {
	pdf := pdfBase64("Revenue grew by nine percent.", "Costs fell by two percent.")
	pdfURL := "data:application/pdf;base64," + pdf
	const pages = "[report.pdf, page 1]\nRevenue grew by nine percent.\n\n[report.pdf, page 2]\nCosts fell by two percent.\n"
	tests := []struct {
		name, path, body, want string
	}{
		{"chat", "/v1/chat/completions", chatWithFile(chatFile(pdfURL, "report.pdf")), "Summarise it.\n\n" + pages},
		{"chat raw base64", "/v1/chat/completions", chatWithFile(chatFile(pdf, "report.pdf")), "Summarise it.\n\n" + pages},
		{"chat without a name", "/v1/chat/completions", chatWithFile(chatFile(pdfURL, "")), "[document.pdf, page 2]\nCosts fell"},
		{"chat text file", "/v1/chat/completions", chatWithFile(chatFile("data:text/markdown;base64,"+base64.StdEncoding.EncodeToString([]byte("# Notes\nship it\n")), "notes.md")),
			"Summarise it.\n\n[notes.md]\n# Notes\nship it\n"},
		{"responses", "/v1/responses", responsesWithFile(responsesFile(pdfURL, "report.pdf")), "Summarise it.\n\n" + pages},
		{"anthropic", "/v1/messages", messagesWithFile(anthropicDocument(`{"type":"base64","media_type":"application/pdf","data":"`+pdf+`"}`, "report.pdf")),
			"Summarise it.\n\n" + pages},
		{"anthropic document first", "/v1/messages",
			`{"max_tokens":2,"messages":[{"role":"user","content":[` + anthropicDocument(`{"type":"base64","media_type":"application/pdf","data":"`+pdf+`"}`, "report.pdf") + `,{"type":"text","text":"Summarise it."}]}]}`,
			pages + "\nSummarise it."},
		{"anthropic plain text with context", "/v1/messages",
			messagesWithFile(`{"type":"document","title":"memo","context":"From the board.","source":{"type":"text","media_type":"text/plain","data":"Ship on Friday."}}`),
			"Summarise it.\n\nFrom the board.\n[memo]\nShip on Friday.\n"},
		{"apply-template", "/apply-template", chatWithFile(chatFile(pdfURL, "report.pdf")), "Summarise it.\n\n" + pages},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			eng := fake.New()
			ts := startServer(t, api.Options{Engine: eng, PDFReader: api.TestPDFReader()})
			res := ts.do(t, "POST", tt.path, tt.body)
			if res.status != 200 {
				t.Fatalf("status %d: %s", res.status, res.body)
			}
			var prompt string
			if tt.path == "/apply-template" {
				var at struct{ Prompt string }
				if err := json.Unmarshal([]byte(res.body), &at); err != nil {
					t.Fatal(err)
				}
				prompt = at.Prompt
				// /tokenize counts the same prompt.
				tok := ts.do(t, "POST", "/tokenize", tt.body)
				var counted struct{ Count int }
				json.Unmarshal([]byte(tok.body), &counted)
				if want := len(fake.Tokenizer{}.Encode(prompt, false)); tok.status != 200 || counted.Count != want {
					t.Errorf("/tokenize: %d %s, want a count of %d", tok.status, tok.body, want)
				}
			} else {
				prompt = fake.Tokenizer{}.Decode(eng.Last().Prompt, false)
			}
			if tt.path == "/v1/messages" { // count_tokens counts what inference got
				res := ts.do(t, "POST", "/v1/messages/count_tokens", tt.body)
				var counted struct {
					InputTokens int `json:"input_tokens"`
				}
				json.Unmarshal([]byte(res.body), &counted)
				if res.status != 200 || counted.InputTokens != len(eng.Last().Prompt) {
					t.Errorf("count_tokens: %d %s, want %d tokens", res.status, res.body, len(eng.Last().Prompt))
				}
			}
			if !strings.Contains(prompt, tt.want) {
				t.Errorf("prompt %q does not hold %q", prompt, tt.want)
			}
		})
	}
}

// TestDocumentErrors: a document that is not read gets a 400 in the
// dialect's shape that names it and says why, and the server goes on.
func TestDocumentErrors(t *testing.T) {
	ts := startServer(t, api.Options{PDFReader: api.TestPDFReader(), MaxPDFPages: 2, MaxMediaBytes: 4096})
	dataURL := func(pdf []byte) string {
		return "data:application/pdf;base64," + base64.StdEncoding.EncodeToString(pdf)
	}
	encrypted := dataURL(pdftest.Doc{Pages: []string{"secret"}, Encrypted: true}.Build())
	threePages := dataURL(pdftest.Pages("one", "two", "three"))
	tests := []struct {
		name, path, body, param string
		want                    []string
	}{
		{"encrypted", "/v1/chat/completions", chatWithFile(chatFile(encrypted, "s.pdf")), "messages[0].content[1]", []string{"encrypted"}},
		{"corrupt", "/v1/chat/completions", chatWithFile(chatFile(dataURL([]byte("%PDF-1.7 and then nothing useful")), "c.pdf")), "messages[0].content[1]", []string{"not a readable PDF"}},
		{"empty", "/v1/chat/completions", chatWithFile(chatFile(dataURL(pdftest.Pages()), "e.pdf")), "messages[0].content[1]", []string{"no pages"}},
		{"too many pages", "/v1/chat/completions", chatWithFile(chatFile(threePages, "big.pdf")), "messages[0].content[1]", []string{"3 pages", "limit of 2", "--max-pdf-pages"}},
		{"too many bytes", "/v1/chat/completions", chatWithFile(chatFile(dataURL([]byte("%PDF-"+strings.Repeat(" ", 5000))), "huge.pdf")), "messages[0].content[1]", []string{"limit of 4096", "--max-media-bytes"}},
		{"not a PDF", "/v1/chat/completions", chatWithFile(chatFile("data:application/pdf;base64,aGVsbG8=", "x.pdf")), "messages[0].content[1]", []string{"not a PDF"}},
		{"unknown type", "/v1/chat/completions", chatWithFile(chatFile("data:application/zip;base64,UEsDBA==", "x.zip")), "messages[0].content[1]", []string{"application/zip", "not a PDF or a text document"}},
		{"bad base64", "/v1/chat/completions", chatWithFile(chatFile("data:application/pdf;base64,@@@", "x.pdf")), "messages[0].content[1]", []string{"not valid base64"}},
		{"file id", "/v1/chat/completions", chatWithFile(`{"type":"file","file":{"file_id":"file-abc"}}`), "messages[0].content[1]", []string{"file-abc", "file_data"}},
		{"no data", "/v1/chat/completions", chatWithFile(`{"type":"file","file":{}}`), "messages[0].content[1]", []string{"no data"}},
		{"remote off", "/v1/chat/completions", chatWithFile(chatFile("https://example.com/a.pdf", "a.pdf")), "messages[0].content[1]", []string{"--allow-remote-media"}},
		{"responses encrypted", "/v1/responses", responsesWithFile(responsesFile(encrypted, "s.pdf")), "input[0].content[1]", []string{"encrypted"}},
		{"responses remote off", "/v1/responses", responsesWithFile(`{"type":"input_file","file_url":"https://example.com/a.pdf"}`), "input[0].content[1]", []string{"--allow-remote-media"}},
		{"anthropic too many pages", "/v1/messages", messagesWithFile(anthropicDocument(`{"type":"base64","media_type":"application/pdf","data":"`+strings.TrimPrefix(threePages, "data:application/pdf;base64,")+`"}`, "big.pdf")),
			"", []string{"messages[0].content[1]", "3 pages"}},
		{"anthropic bad source", "/v1/messages", messagesWithFile(`{"type":"document","source":{"type":"content","content":[]}}`), "", []string{"messages[0].content[1]", `"content"`}},
		{"anthropic remote off", "/v1/messages", messagesWithFile(anthropicDocument(`{"type":"url","url":"http://example.com/a.pdf"}`, "a")), "", []string{"--allow-remote-media"}},
		{"tokenize", "/tokenize", chatWithFile(chatFile(encrypted, "s.pdf")), "messages[0].content[1]", []string{"encrypted"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := ts.do(t, "POST", tt.path, tt.body)
			if res.status != 400 {
				t.Fatalf("status %d, want 400: %s", res.status, res.body)
			}
			typ, msg, param := errorShape(t, tt.path, res.body)
			if typ != "invalid_request_error" || param != tt.param {
				t.Errorf("type %q, param %q; want invalid_request_error, %q", typ, param, tt.param)
			}
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("message %q lacks %q", msg, w)
				}
			}
		})
	}
	if res := ts.do(t, "POST", "/v1/chat/completions", chatWithFile(chatFile(dataURL(pdftest.Pages("fine")), "ok.pdf"))); res.status != 200 {
		t.Fatalf("a good PDF after the refusals: %d %s", res.status, res.body)
	}
}

// TestDocumentRemoteURLs: with remote media allowed, a URL is fetched only
// from a public address; one that names this machine is refused at dial
// time, before any request is sent.
func TestDocumentRemoteURLs(t *testing.T) {
	ts := startServer(t, api.Options{PDFReader: api.TestPDFReader(), AllowRemoteMedia: true})
	for _, url := range []string{"http://127.0.0.1:1/a.pdf", "http://[::1]:1/a.pdf", "http://169.254.169.254/latest/meta-data/"} {
		res := ts.do(t, "POST", "/v1/chat/completions", chatWithFile(chatFile(url, "a.pdf")))
		_, msg, _ := errorShape(t, "/v1/chat/completions", res.body)
		if res.status != 400 || !strings.Contains(msg, "not a public address") {
			t.Errorf("%s: %d %s, want a 400 saying the address is not public", url, res.status, msg)
		}
	}
}
