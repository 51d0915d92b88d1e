// Package pdftest writes small PDF files for tests: pages of text in a
// standard font, optionally with compressed content streams or a password.
// The output is a valid PDF 1.4 file (cross-reference table and all), so a
// real reader opens it without repairing it.
package pdftest

import (
	"bytes"
	"compress/zlib"
	"fmt"
	"slices"
	"strings"
)

// Doc describes a PDF to write.
type Doc struct {
	// Pages holds each page's text; lines split on "\n". An empty string
	// is a page with no text at all (as a scan without OCR looks).
	Pages []string
	// Compress stores the page content streams with FlateDecode.
	Compress bool
	// Figures lists pages (from 0) that also show a filled black square,
	// 1 inch a side, 1 inch from the bottom-left corner.
	Figures []int
	// Encrypted adds a standard security handler whose user password is
	// not empty, so the document cannot be opened without a password.
	Encrypted bool
}

// Build writes the PDF.
func (d Doc) Build() []byte {
	w := &writer{}
	w.buf.WriteString("%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
	// Objects: 1 catalog, 2 page tree, 3 font, then per page a page object
	// and its content stream, then the encryption dictionary.
	kids := make([]string, len(d.Pages))
	for i := range d.Pages {
		kids[i] = fmt.Sprintf("%d 0 R", 4+2*i)
	}
	w.object("<< /Type /Catalog /Pages 2 0 R >>")
	w.object(fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", strings.Join(kids, " "), len(d.Pages)))
	w.object("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>")
	for i, text := range d.Pages {
		w.object(fmt.Sprintf("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents %d 0 R >>", 5+2*i))
		w.stream(content(text, slices.Contains(d.Figures, i)), d.Compress)
	}
	trailer := fmt.Sprintf("/Size %d /Root 1 0 R /ID [<%s> <%s>]", len(w.offsets)+1, fileID, fileID)
	if d.Encrypted {
		// R2 (40-bit RC4) with an arbitrary /U: no key derived from the
		// empty password reproduces it, so readers ask for a password.
		enc := w.object(fmt.Sprintf("<< /Filter /Standard /V 1 /R 2 /Length 40 /P -44 /O <%s> /U <%s> >>",
			strings.Repeat("5a", 32), strings.Repeat("c3", 32)))
		trailer = fmt.Sprintf("/Size %d /Root 1 0 R /Encrypt %d 0 R /ID [<%s> <%s>]", len(w.offsets)+1, enc, fileID, fileID)
	}
	xref := w.buf.Len()
	fmt.Fprintf(&w.buf, "xref\n0 %d\n0000000000 65535 f \n", len(w.offsets)+1)
	for _, off := range w.offsets {
		fmt.Fprintf(&w.buf, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&w.buf, "trailer\n<< %s >>\nstartxref\n%d\n%%%%EOF\n", trailer, xref)
	return w.buf.Bytes()
}

// Pages is a Doc of uncompressed pages with these texts.
func Pages(texts ...string) []byte { return Doc{Pages: texts}.Build() }

const fileID = "0123456789abcdef0123456789abcdef"

type writer struct {
	buf     bytes.Buffer
	offsets []int // byte offset of each object, object n at index n-1
}

// object writes the next object and returns its number.
func (w *writer) object(body string) int {
	w.offsets = append(w.offsets, w.buf.Len())
	n := len(w.offsets)
	fmt.Fprintf(&w.buf, "%d 0 obj\n%s\nendobj\n", n, body)
	return n
}

func (w *writer) stream(data []byte, compress bool) {
	filter := ""
	if compress {
		var z bytes.Buffer
		zw := zlib.NewWriter(&z)
		zw.Write(data) // a bytes.Buffer does not fail
		zw.Close()
		data, filter = z.Bytes(), " /Filter /FlateDecode"
	}
	w.offsets = append(w.offsets, w.buf.Len())
	fmt.Fprintf(&w.buf, "%d 0 obj\n<< /Length %d%s >>\nstream\n", len(w.offsets), len(data), filter)
	w.buf.Write(data)
	w.buf.WriteString("\nendstream\nendobj\n")
}

// content is a page content stream showing text line by line from the
// top-left of a US Letter page.
func content(text string, figure bool) []byte {
	var b bytes.Buffer
	if figure {
		b.WriteString("0 0 0 rg\n72 72 72 72 re\nf\n")
	}
	if text == "" {
		return b.Bytes()
	}
	b.WriteString("BT\n/F1 12 Tf\n14 TL\n72 720 Td\n")
	for _, line := range strings.Split(text, "\n") {
		fmt.Fprintf(&b, "(%s) Tj\nT*\n", escape(line))
	}
	b.WriteString("ET\n")
	return b.Bytes()
}

// escape quotes a PDF literal string.
func escape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `(`, `\(`, `)`, `\)`, "\r", `\r`).Replace(s)
}
