package pdfdoc

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"image"
	"strings"
	"unicode"

	"github.com/klippa-app/go-pdfium"
	pdfiumerrors "github.com/klippa-app/go-pdfium/errors"
	"github.com/klippa-app/go-pdfium/references"
	"github.com/klippa-app/go-pdfium/requests"
)

// lowTextChars is the fewest non-space characters a page needs not to be
// flagged LowText: below it the page is most likely a scan or a figure,
// whose content only a vision model could read.
const lowTextChars = 16

// Page is one page's text.
type Page struct {
	Number  int    // from 1
	Text    string // lines end with "\n"; no trailing blank lines
	LowText bool   // little or no text: a scan, a figure or an empty page
	// Image is the page rendered, for a LowText page when the extractor
	// renders them (Limits.RenderPixels); nil otherwise.
	Image *image.RGBA
}

// Document is a PDF's text, page by page.
type Document struct {
	Pages []Page
}

// HasText reports whether any page has text.
func (d *Document) HasText() bool {
	for _, p := range d.Pages {
		if p.Text != "" {
			return true
		}
	}
	return false
}

// Extract reads the text of every page of a PDF. A document it will not
// read gets one of the package's Err* errors, wrapped with its detail. The
// Document may be shared with other callers (a document read before is
// answered from the cache): it must not be modified.
// ctx bounds the whole call, waiting for a free instance included; the
// extractor's Timeout applies on top.
func (e *Extractor) Extract(ctx context.Context, data []byte) (*Document, error) {
	return e.extract(ctx, data, e.opts.Limits, nil)
}

// ExtractWithin is Extract under other limits than the extractor's (zero
// fields take the defaults), for a caller such as a server whose limits
// are its own while it shares an extractor.
func (e *Extractor) ExtractWithin(ctx context.Context, data []byte, lim Limits) (*Document, error) {
	return e.extract(ctx, data, lim.withDefaults(), nil)
}

// extract is Extract under limits lim, calling onPage (if not nil) before
// reading each page.
func (e *Extractor) extract(ctx context.Context, data []byte, lim Limits, onPage func(index int)) (*Document, error) {
	if len(data) > lim.MaxBytes {
		return nil, fmt.Errorf("%w: %d bytes, above the limit of %d", ErrTooLarge, len(data), lim.MaxBytes)
	}
	key := cacheKey{sum: sha256.Sum256(data), lim: lim}
	if e.docs != nil && onPage == nil {
		if doc, ok := e.docs.get(key); ok {
			return doc, nil
		}
	}
	if err := e.Start(); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, lim.Timeout)
	defer cancel()
	inst, err := e.pool.GetInstanceWithContext(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%w: no PDF reader was free within %s", ErrTimeout, lim.Timeout)
		}
		return nil, fmt.Errorf("pdfdoc: starting a PDFium instance: %w", err)
	}
	// A deadline kills the instance, which interrupts the WebAssembly call
	// in flight (the runtime closes modules whose context is done); the
	// pool then replaces it.
	stop := context.AfterFunc(ctx, func() { inst.Kill() })
	doc, err := (&reader{inst: inst, lim: lim, onPage: onPage}).read(ctx, data)
	if !stop() { // killed
		if errors.Is(ctx.Err(), context.Canceled) {
			return nil, fmt.Errorf("pdfdoc: %w", ctx.Err())
		}
		return nil, fmt.Errorf("%w (limit %s)", ErrTimeout, lim.Timeout)
	}
	if err != nil && !IsDocumentError(err) {
		// PDFium itself failed (a trap, memory exhausted): the instance's
		// state is unknown, so it is not reused.
		inst.Kill()
		return nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	inst.Close()
	if err == nil && e.docs != nil {
		e.docs.put(key, doc)
	}
	return doc, err
}

// reader reads one document on one instance.
type reader struct {
	inst pdfium.Pdfium
	lim  Limits
	text int // bytes of text read so far

	onPage func(index int) // a test's hook, or nil
}

func (r *reader) read(ctx context.Context, data []byte) (*Document, error) {
	opened, err := r.inst.OpenDocument(&requests.OpenDocument{File: &data})
	if err != nil {
		return nil, openError(err)
	}
	doc := opened.Document
	defer r.inst.FPDF_CloseDocument(&requests.FPDF_CloseDocument{Document: doc})
	count, err := r.inst.FPDF_GetPageCount(&requests.FPDF_GetPageCount{Document: doc})
	if err != nil {
		return nil, err
	}
	switch n := count.PageCount; {
	case n <= 0:
		return nil, ErrEmpty
	case n > r.lim.MaxPages:
		return nil, fmt.Errorf("%w: %d pages, above the limit of %d", ErrTooManyPages, n, r.lim.MaxPages)
	}
	out := &Document{Pages: make([]Page, 0, count.PageCount)}
	for i := range count.PageCount {
		if r.onPage != nil {
			r.onPage(i)
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		p, err := r.page(doc, i)
		if err != nil {
			return nil, err
		}
		out.Pages = append(out.Pages, p)
	}
	return out, nil
}

// openError says why PDFium could not open a document.
func openError(err error) error {
	switch {
	case errors.Is(err, pdfiumerrors.ErrPassword), errors.Is(err, pdfiumerrors.ErrSecurity):
		return ErrEncrypted
	case errors.Is(err, pdfiumerrors.ErrFormat), errors.Is(err, pdfiumerrors.ErrFile), errors.Is(err, pdfiumerrors.ErrUnknown):
		return ErrCorrupt
	}
	return err
}

// page reads page index i (from 0): its text, and its image if it has
// little text and the reader renders such pages.
func (r *reader) page(doc references.FPDF_DOCUMENT, i int) (Page, error) {
	loaded, err := r.inst.FPDF_LoadPage(&requests.FPDF_LoadPage{Document: doc, Index: i})
	if err != nil {
		return Page{}, fmt.Errorf("%w: page %d cannot be read", ErrCorrupt, i+1)
	}
	defer r.inst.FPDF_ClosePage(&requests.FPDF_ClosePage{Page: loaded.Page})
	ref := requests.Page{ByReference: &loaded.Page}
	text, err := r.pageText(ref, i)
	if err != nil {
		return Page{}, err
	}
	p := Page{Number: i + 1, Text: text, LowText: lowText(text)}
	if p.LowText && r.lim.RenderPixels > 0 {
		if p.Image, err = r.render(ref); err != nil {
			return Page{}, fmt.Errorf("%w: page %d cannot be rendered", ErrCorrupt, i+1)
		}
	}
	return p, nil
}

// pageText reads the text of a page, counting it against the text limit
// before copying it out.
func (r *reader) pageText(page requests.Page, i int) (string, error) {
	tp, err := r.inst.FPDFText_LoadPage(&requests.FPDFText_LoadPage{Page: page})
	if err != nil {
		return "", fmt.Errorf("%w: the text of page %d cannot be read", ErrCorrupt, i+1)
	}
	defer r.inst.FPDFText_ClosePage(&requests.FPDFText_ClosePage{TextPage: tp.TextPage})
	chars, err := r.inst.FPDFText_CountChars(&requests.FPDFText_CountChars{TextPage: tp.TextPage})
	if err != nil {
		return "", err
	}
	if chars.Count <= 0 {
		return "", nil
	}
	// Each character is at most 3 bytes of UTF-8 once converted.
	if r.text += 3 * chars.Count; r.text > r.lim.MaxTextBytes {
		return "", fmt.Errorf("%w: its text passes the limit of %d bytes at page %d", ErrTooLarge, r.lim.MaxTextBytes, i+1)
	}
	got, err := r.inst.FPDFText_GetText(&requests.FPDFText_GetText{TextPage: tp.TextPage, Count: chars.Count})
	if err != nil {
		return "", err
	}
	return cleanText(got.Text), nil
}

// cleanText normalises PDFium's text: "\n" line ends, no NULs, no trailing
// spaces on lines or blank lines at the end.
func cleanText(s string) string {
	s = strings.NewReplacer("\r\n", "\n", "\r", "\n", "\x00", "").Replace(s)
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRightFunc(l, unicode.IsSpace)
	}
	s = strings.TrimRight(strings.Join(lines, "\n"), "\n")
	if s == "" {
		return ""
	}
	return s + "\n"
}

// lowText reports whether a page has fewer than lowTextChars characters
// that are not spaces.
func lowText(s string) bool {
	n := 0
	for _, r := range s {
		if !unicode.IsSpace(r) {
			if n++; n >= lowTextChars {
				return false
			}
		}
	}
	return true
}
