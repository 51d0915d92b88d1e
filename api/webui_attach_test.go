package api_test

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/splash-inference/splash/api"
	"github.com/splash-inference/splash/api/internal/fake"
	"github.com/splash-inference/splash/pdfdoc/pdftest"
)

// onePixelPNG is a valid 1×1 PNG.
const onePixelPNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="

// TestWebUIAttachments attaches files to a message by the file picker, by
// pasting and by dropping, removes one, and sends: an image is refused by
// the text-only model (the page shows the server's error and gives the
// attachments back); sent again without the images, the PDF's text
// reaches the prompt.
func TestWebUIAttachments(t *testing.T) {
	eng := fake.New()
	ts := startServer(t, api.Options{Engine: eng, PDFReader: api.TestPDFReader()})
	ctx := newBrowser(t)
	openChat(t, ctx, ts.url)

	pdf := pdftest.Pages("Quarterly report: revenue grew by nine percent.")
	png, _ := base64.StdEncoding.DecodeString(onePixelPNG)
	dir := t.TempDir()
	var paths []string
	for _, f := range []struct {
		name string
		data []byte
	}{{"photo.png", png}, {"report.pdf", pdf}, {"notes.txt", []byte("plain text")}} {
		p := filepath.Join(dir, f.name)
		if err := os.WriteFile(p, f.data, 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	chips := func() string {
		return evalString(t, ctx, `Array.from(document.querySelectorAll("#attachments .chip .name")).map(e => e.textContent).sort().join(",")`)
	}

	// Picked: the PNG and the PDF become chips, the text file is refused.
	if err := chromedp.Do(ctx, chromedp.SetUploadFiles(chromedp.CSS("#file-input"), paths)); err != nil {
		t.Fatalf("pick files: %v", err)
	}
	waitInPage(t, ctx, `document.querySelectorAll("#attachments .chip").length === 2`, "picked files never shown as chips")
	if got, want := chips(), "photo.png,report.pdf"; got != want {
		t.Errorf("chips = %q, want %q", got, want)
	}
	if got := evalString(t, ctx, `document.getElementById("error").textContent`); !strings.Contains(got, "notes.txt") {
		t.Errorf("error = %q, want it to name the refused notes.txt", got)
	}

	// Pasted and dropped files, as the browser hands them over.
	makeFile := func(b64, name, typ string) string {
		return `new File([Uint8Array.from(atob("` + b64 + `"), c => c.charCodeAt(0))], "` + name + `", {type: "` + typ + `"})`
	}
	evalString(t, ctx, `(() => { const dt = new DataTransfer(); dt.items.add(`+makeFile(onePixelPNG, "screenshot.png", "image/png")+`);
		document.getElementById("prompt").dispatchEvent(new ClipboardEvent("paste", {clipboardData: dt, bubbles: true, cancelable: true})); return ""; })()`)
	waitInPage(t, ctx, `document.querySelectorAll("#attachments .chip").length === 3`, "pasted image never shown")
	evalString(t, ctx, `(() => { const dt = new DataTransfer(); dt.items.add(`+makeFile(base64.StdEncoding.EncodeToString(pdf), "dropped.pdf", "")+`);
		document.body.dispatchEvent(new DragEvent("drop", {dataTransfer: dt, bubbles: true, cancelable: true})); return ""; })()`)
	waitInPage(t, ctx, `document.querySelectorAll("#attachments .chip").length === 4`, "dropped PDF never shown")
	if got, want := chips(), "dropped.pdf,photo.png,report.pdf,screenshot.png"; got != want {
		t.Errorf("chips = %q, want %q", got, want)
	}
	if got := evalString(t, ctx, `document.querySelector("#attachments .chip.image img").src.slice(0, 22)`); got != "data:image/png;base64," {
		t.Errorf("image thumbnail src starts %q", got)
	}

	// Removed: the dropped PDF.
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`#attachments button[aria-label="remove dropped.pdf"]`))); err != nil {
		t.Fatalf("remove chip: %v", err)
	}
	if got, want := chips(), "photo.png,report.pdf,screenshot.png"; got != want {
		t.Errorf("chips after removing dropped.pdf = %q, want %q", got, want)
	}

	// Sent with images: the text-only model refuses them; the page shows
	// the server's message and gives text and attachments back.
	ask(t, ctx, "Summarise these")
	waitInPage(t, ctx, `document.querySelector(".msg.assistant.done") !== null`, "refused message never finished")
	if got := evalString(t, ctx, `document.querySelector(".msg.assistant .note").textContent`); !strings.Contains(got, "does not accept images") {
		t.Errorf("note = %q, want the server's refusal of the image", got)
	}
	if got := evalString(t, ctx, `document.querySelectorAll(".msg.user .attached .chip").length + " " + document.getElementById("prompt").value`); got != "3 Summarise these" {
		t.Errorf("sent chips and restored prompt = %q, want 3 chips shown and the text back", got)
	}
	if got, want := chips(), "photo.png,report.pdf,screenshot.png"; got != want {
		t.Errorf("chips after the refusal = %q, want them back: %q", got, want)
	}

	// Sent again without the images: the PDF's text reaches the prompt.
	for _, name := range []string{"photo.png", "screenshot.png"} {
		if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`#attachments button[aria-label="remove `+name+`"]`))); err != nil {
			t.Fatalf("remove %s: %v", name, err)
		}
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.ID("send"))); err != nil {
		t.Fatalf("send: %v", err)
	}
	waitInPage(t, ctx, `document.querySelectorAll(".msg.assistant.done").length === 2 && !document.querySelectorAll(".msg.assistant.done")[1].classList.contains("failed")`, "reply with the PDF never finished")
	if got, want := (fake.Tokenizer{}).Decode(eng.Last().Prompt, false), "Summarise these\n\n[report.pdf, page 1]\nQuarterly report: revenue grew by nine percent.\n"; !strings.Contains(got, want) {
		t.Errorf("prompt %q does not hold the PDF as %q", got, want)
	}
	if got := evalString(t, ctx, `String(document.querySelectorAll("#attachments .chip").length)`); got != "0" {
		t.Errorf("%s chips left after sending", got)
	}
	if *webuiScreenshot != "" {
		shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatalf("screenshot: %v", err)
		}
		if err := os.WriteFile(strings.TrimSuffix(*webuiScreenshot, ".png")+"-attachments.png", shot, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
