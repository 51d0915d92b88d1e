package pdfdoc

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/splash-inference/splash/pdfdoc/pdftest"
)

// testExtractor is the one extractor of the test binary: starting PDFium
// (compiling the module, or loading it from the disk cache) is the
// expensive part, and a server shares one the same way.
var testExtractor = sync.OnceValue(func() *Extractor { return New(Options{}) })

func pg(n int, text string, low bool) Page { return Page{Number: n, Text: text, LowText: low} }

func TestExtract(t *testing.T) {
	tests := []struct {
		name string
		pdf  []byte
		want []Page
	}{
		{"one page", pdftest.Pages("Hello from page one, with enough text."),
			[]Page{pg(1, "Hello from page one, with enough text.\n", false)}},
		{"page numbers", pdftest.Pages("The first page says this.", "The second page says that.", "The third page closes it."),
			[]Page{pg(1, "The first page says this.\n", false), pg(2, "The second page says that.\n", false), pg(3, "The third page closes it.\n", false)}},
		{"lines", pdftest.Pages("Line one of the page\nLine two of the page"),
			[]Page{pg(1, "Line one of the page\nLine two of the page\n", false)}},
		{"escaped characters", pdftest.Pages(`f(x) = a\b (see note)`),
			[]Page{pg(1, "f(x) = a\\b (see note)\n", false)}},
		{"compressed streams", pdftest.Doc{Pages: []string{"Compressed content stream text."}, Compress: true}.Build(),
			[]Page{pg(1, "Compressed content stream text.\n", false)}},
		{"page without text", pdftest.Pages("Some real text is on this page.", ""),
			[]Page{pg(1, "Some real text is on this page.\n", false), pg(2, "", true)}},
		{"page with little text", pdftest.Pages("Fig. 3"),
			[]Page{pg(1, "Fig. 3\n", true)}},
	}
	x := testExtractor()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc, err := x.Extract(t.Context(), tt.pdf)
			if err != nil {
				t.Fatal(err)
			}
			if len(doc.Pages) != len(tt.want) {
				t.Fatalf("got %d pages %+v, want %d", len(doc.Pages), doc.Pages, len(tt.want))
			}
			for i, p := range doc.Pages {
				if p != tt.want[i] {
					t.Errorf("page %d = %+v, want %+v", i+1, p, tt.want[i])
				}
			}
		})
	}
}

func TestExtractErrors(t *testing.T) {
	valid := pdftest.Pages("A page of ordinary text.", "Another page of ordinary text.", "A third page.")
	expired, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	tests := []struct {
		name string
		ctx  context.Context
		pdf  []byte
		lim  Limits
		want error
		msg  string // the error's text contains this
	}{
		{"not a PDF", nil, []byte("hello, I am a text file"), Limits{}, ErrCorrupt, "not a readable PDF"},
		{"nothing", nil, nil, Limits{}, ErrCorrupt, ""},
		{"header only", nil, []byte("%PDF-1.7\n"), Limits{}, ErrCorrupt, ""},
		{"encrypted", nil, pdftest.Doc{Pages: []string{"secret text"}, Encrypted: true}.Build(), Limits{}, ErrEncrypted, "password"},
		{"no pages", nil, pdftest.Pages(), Limits{}, ErrEmpty, "no pages"},
		{"too many pages", nil, valid, Limits{MaxPages: 2}, ErrTooManyPages, "3 pages, above the limit of 2"},
		{"too many bytes", nil, valid, Limits{MaxBytes: 100}, ErrTooLarge, "above the limit of 100"},
		{"too much text", nil, valid, Limits{MaxTextBytes: 90}, ErrTooLarge, "limit of 90 bytes at page 2"},
		{"deadline passed", expired, valid, Limits{}, ErrTimeout, "took too long"},
	}
	x := testExtractor()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := tt.ctx
			if ctx == nil {
				ctx = t.Context()
			}
			lim := tt.lim
			lim.Timeout = time.Minute
			doc, err := x.extract(ctx, tt.pdf, lim.withDefaults(), nil)
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v (doc %v), want %v", err, doc, tt.want)
			}
			if !IsDocumentError(err) || !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("err = %q, want a document error containing %q", err, tt.msg)
			}
		})
	}
}

// TestExtractCancelled cancels a document between pages: the instance it
// ran on is killed, and the extractor goes on serving the next document.
func TestExtractCancelled(t *testing.T) {
	x := testExtractor()
	pdf := pdftest.Pages("Page one has text on it.", "Page two has text on it.", "Page three has text on it.")
	ctx, cancel := context.WithCancel(t.Context())
	_, err := x.extract(ctx, pdf, x.Limits(), func(i int) {
		if i == 1 {
			cancel()
		}
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	for i := range 3 { // more than the pool's instances; other documents than the cache holds
		doc, err := x.Extract(t.Context(), pdftest.Pages("Page one has text on it.", "Page two has text on it.", fmt.Sprintf("Read %d.", i)))
		if err != nil || len(doc.Pages) != 3 {
			t.Fatalf("extraction %d after the kill: %v, %v", i, doc, err)
		}
	}
}

// TestExtractConcurrent reads more documents at once than there are
// instances: each waits for a free one and gets its own text.
func TestExtractConcurrent(t *testing.T) {
	x := testExtractor()
	const n = 6
	errs := make(chan error, n)
	for i := range n {
		go func() {
			want := fmt.Sprintf("Document number %d of the concurrent test.", i)
			doc, err := x.Extract(t.Context(), pdftest.Pages(want))
			switch {
			case err != nil:
				errs <- err
			case doc.Pages[0].Text != want+"\n":
				errs <- fmt.Errorf("document %d: got %q", i, doc.Pages[0].Text)
			default:
				errs <- nil
			}
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

func TestCleanText(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"a\r\nb\rc", "a\nb\nc\n"},
		{"trailing   \nspace\t\r\n\r\n\r\n", "trailing\nspace\n"},
		{"nul\x00s", "nuls\n"},
		{" \r\n ", ""},
	}
	for _, tt := range tests {
		if got := cleanText(tt.in); got != tt.want {
			t.Errorf("cleanText(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// FuzzExtract feeds arbitrary bytes to the extractor: every input gets a
// document or a document error, never a panic, a hang or the extractor's
// own failure.
func FuzzExtract(f *testing.F) {
	f.Add(pdftest.Pages("Some text on a page."))
	f.Add(pdftest.Doc{Pages: []string{"compressed", ""}, Compress: true}.Build())
	f.Add(pdftest.Doc{Pages: []string{"secret"}, Encrypted: true}.Build())
	f.Add(pdftest.Pages())
	f.Add([]byte("%PDF-1.4\n1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF"))
	f.Add([]byte("not a pdf"))
	x := testExtractor()
	lim := Limits{MaxPages: 8, MaxBytes: 1 << 20, MaxTextBytes: 1 << 20, Timeout: 10 * time.Second}
	f.Fuzz(func(t *testing.T, data []byte) {
		doc, err := x.extract(t.Context(), data, lim, nil)
		if err != nil {
			if !IsDocumentError(err) {
				t.Fatalf("not a document error: %v", err)
			}
			return
		}
		if len(doc.Pages) == 0 || len(doc.Pages) > lim.MaxPages {
			t.Fatalf("%d pages", len(doc.Pages))
		}
		for i, p := range doc.Pages {
			if p.Number != i+1 {
				t.Fatalf("page %d numbered %d", i+1, p.Number)
			}
		}
	})
}

// TestExtractRenders has pages with little text rendered within the pixel
// cap, and only those.
func TestExtractRenders(t *testing.T) {
	pdf := pdftest.Doc{Pages: []string{"A page with plenty of text on it.", ""}, Figures: []int{0, 1}}.Build()
	const maxPixels = 100_000
	lim := DefaultLimits()
	lim.RenderPixels = maxPixels
	doc, err := testExtractor().extract(t.Context(), pdf, lim, nil)
	if err != nil {
		t.Fatal(err)
	}
	if doc.Pages[0].Image != nil {
		t.Errorf("page 1 has text but was rendered")
	}
	img := doc.Pages[1].Image
	if img == nil {
		t.Fatal("page 2 has no text but was not rendered")
	}
	w, h := img.Rect.Dx(), img.Rect.Dy()
	if w*h > maxPixels || w != 277 || h != 359 { // 612×792 points scaled by √(100000/(612·792)), truncated
		t.Errorf("rendered %d×%d, want 277×359 within %d pixels", w, h, maxPixels)
	}
	// The square spans points 72..144 from the bottom-left: pixels
	// 32..65 across and 293..326 down (the image's origin is top-left).
	for _, tc := range []struct {
		x, y int
		dark bool
	}{{48, 310, true}, {10, 10, false}, {150, 310, false}, {48, 200, false}} {
		c := img.RGBAAt(tc.x, tc.y)
		if dark := c.R < 64 && c.G < 64 && c.B < 64; dark != tc.dark {
			t.Errorf("pixel (%d,%d) = %v, want dark %v", tc.x, tc.y, c, tc.dark)
		}
	}
}

func TestRenderSize(t *testing.T) {
	tests := []struct {
		w, h      float64
		maxPixels int
		pw, ph    int
	}{
		{612, 792, 4 << 20, 1275, 1650}, // Letter at the 150 dpi ceiling
		{612, 792, 1 << 20, 900, 1164},
		{595, 842, 1 << 20, 860, 1218}, // A4
		{72, 72, 100, 10, 10},
		{1, 100000, 1000, 1, 1000}, // a ribbon stays within the cap
		{0, 792, 1000, 1, 1},
		{612, 792, 0, 1, 1},
	}
	for _, tt := range tests {
		pw, ph := renderSize(tt.w, tt.h, tt.maxPixels)
		if pw != tt.pw || ph != tt.ph || pw*ph > max(tt.maxPixels, 1) {
			t.Errorf("renderSize(%v, %v, %d) = %d×%d, want %d×%d", tt.w, tt.h, tt.maxPixels, pw, ph, tt.pw, tt.ph)
		}
	}
}

func TestPromptText(t *testing.T) {
	doc := &Document{Pages: []Page{pg(1, "First page.\nSecond line.\n", false), pg(2, "", true), pg(3, "Last.\n", true)}}
	tests := []struct {
		name   string
		doc    *Document
		file   string
		images []string
		want   string
	}{
		{"text", doc, "a.pdf", nil, "[a.pdf, page 1]\nFirst page.\nSecond line.\n\n[a.pdf, page 2: no text]\n\n[a.pdf, page 3]\nLast.\n"},
		{"without a name", &Document{Pages: []Page{pg(1, "x\n", true)}}, "\n", nil, "[document, page 1]\nx\n"},
		{"images after their markers", doc, "a.pdf", []string{"", "<img2>", "<img3>"},
			"[a.pdf, page 1]\nFirst page.\nSecond line.\n\n[a.pdf, page 2]\n<img2>\n\n[a.pdf, page 3]\n<img3>\nLast.\n"},
		{"fewer images than pages", doc, "a.pdf", []string{"", "<img2>"},
			"[a.pdf, page 1]\nFirst page.\nSecond line.\n\n[a.pdf, page 2]\n<img2>\n\n[a.pdf, page 3]\nLast.\n"},
	}
	for _, tt := range tests {
		if got := tt.doc.PromptWithImages(tt.file, tt.images); got != tt.want {
			t.Errorf("%s: PromptWithImages = %q, want %q", tt.name, got, tt.want)
		}
		if tt.images == nil {
			if got := tt.doc.PromptText(tt.file); got != tt.want {
				t.Errorf("%s: PromptText = %q, want %q", tt.name, got, tt.want)
			}
		}
	}
}

// TestExtractCache: a document read again comes from the cache (the same
// Document), unless the limits differ; the cache keeps within its bytes,
// least recently used dropped first.
func TestExtractCache(t *testing.T) {
	x := testExtractor()
	pdf := pdftest.Pages("A document that an agent sends with every turn.")
	first, err := x.Extract(t.Context(), pdf)
	if err != nil {
		t.Fatal(err)
	}
	again, err := x.Extract(t.Context(), pdf)
	if err != nil || again != first {
		t.Errorf("second read: %p, %v; want the cached %p", again, err, first)
	}
	other, err := x.ExtractWithin(t.Context(), pdf, Limits{MaxPages: 7})
	if err != nil || other == first {
		t.Errorf("read under other limits: %p, %v; want a fresh read", other, err)
	}

	c := newDocCache(300)
	doc := func(text string) *Document { return &Document{Pages: []Page{{Number: 1, Text: text}}} }
	key := func(b byte) cacheKey { return cacheKey{sum: [32]byte{b}} }
	c.put(key(1), doc(strings.Repeat("a", 100))) // 164 bytes
	c.put(key(2), doc(strings.Repeat("b", 50)))  // 114
	c.get(key(1))                                // 1 is now the most recent
	c.put(key(3), doc(strings.Repeat("c", 50)))  // over 300: 2 goes
	c.put(key(4), doc(strings.Repeat("d", 500))) // alone over the bound: not kept
	for k, want := range map[byte]bool{1: true, 2: false, 3: true, 4: false} {
		if _, ok := c.get(key(k)); ok != want {
			t.Errorf("entry %d cached = %v, want %v", k, ok, want)
		}
	}
	if c.size != 164+114 {
		t.Errorf("cache holds %d bytes, want %d", c.size, 164+114)
	}
}
