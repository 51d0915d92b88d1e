package main

import (
	"context"
	"encoding/base64"
	"errors"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	aoption "github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/splash-inference/splash/model/testmodel"
	"github.com/splash-inference/splash/pdfdoc/pdftest"
)

// TestServeDocuments: through the real server and model, a PDF sent by
// the OpenAI and Anthropic SDKs is read into the prompt, /apply-template
// shows its pages in the model's own template, and one over
// --max-pdf-pages is refused naming the flag.
func TestServeDocuments(t *testing.T) {
	dir := t.TempDir()
	if err := testmodel.Write(dir, testmodel.Tiny("qwen3")); err != nil {
		t.Fatal(err)
	}
	addr, _, stop := startServe(t, "--model", dir, "--max-pdf-pages", "2")
	base := "http://" + addr
	pdf := base64.StdEncoding.EncodeToString(pdftest.Pages("Revenue grew by nine percent.", "Costs fell by two percent."))

	var rendered struct{ Prompt string }
	postJSON(t, base+"/apply-template", `{"messages":[{"role":"user","content":[{"type":"text","text":"Summarise it."},`+
		`{"type":"file","file":{"file_data":"data:application/pdf;base64,`+pdf+`","filename":"report.pdf"}}]}]}`, &rendered)
	want := "<|im_start|>user\nSummarise it.\n\n[report.pdf, page 1]\nRevenue grew by nine percent.\n\n[report.pdf, page 2]\nCosts fell by two percent.\n<|im_end|>"
	if !strings.Contains(rendered.Prompt, want) {
		t.Errorf("/apply-template prompt %q, want it to hold %q", rendered.Prompt, want)
	}

	oc := openai.NewClient(option.WithBaseURL(base+"/v1/"), option.WithAPIKey("unused"), option.WithMaxRetries(0))
	file := openai.FileContentPart(openai.ChatCompletionContentPartFileFileParam{
		FileData: openai.String("data:application/pdf;base64," + pdf), Filename: openai.String("report.pdf")})
	res, err := oc.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{MaxTokens: openai.Int(2),
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage([]openai.ChatCompletionContentPartUnionParam{openai.TextContentPart("Summarise it."), file})}})
	if err != nil {
		t.Fatal(err)
	}
	plain, err := oc.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{MaxTokens: openai.Int(2),
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Summarise it.")}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Usage.PromptTokens <= plain.Usage.PromptTokens+10 {
		t.Errorf("prompt tokens %d with the PDF, %d without: its text is not in the prompt", res.Usage.PromptTokens, plain.Usage.PromptTokens)
	}

	ac := anthropic.NewClient(aoption.WithBaseURL(base), aoption.WithAPIKey("unused"), aoption.WithMaxRetries(0))
	doc := anthropic.NewDocumentBlock(anthropic.Base64PDFSourceParam{Data: pdf})
	msg, err := ac.Messages.New(context.Background(), anthropic.MessageNewParams{MaxTokens: 2,
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(doc, anthropic.NewTextBlock("Summarise it."))}})
	if err != nil {
		t.Fatal(err)
	}
	if msg.Usage.InputTokens <= plain.Usage.PromptTokens+10 {
		t.Errorf("input tokens %d with the PDF: its text is not in the prompt", msg.Usage.InputTokens)
	}

	three := base64.StdEncoding.EncodeToString(pdftest.Pages("one", "two", "three"))
	_, err = ac.Messages.New(context.Background(), anthropic.MessageNewParams{MaxTokens: 2,
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewDocumentBlock(anthropic.Base64PDFSourceParam{Data: three}))}})
	var apiErr *anthropic.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 400 || !strings.Contains(apiErr.Error(), "--max-pdf-pages") {
		t.Errorf("a 3-page PDF with --max-pdf-pages 2: %v, want a 400 naming the flag", err)
	}
	if err := stop(); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
}
