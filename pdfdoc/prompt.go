package pdfdoc

import (
	"fmt"
	"strings"
	"unicode"
)

// PromptText is the document as a prompt shows it: each page's text under
// a marker naming the file and the page, so the model can cite pages,
// pages separated by a blank line:
//
//	[report.pdf, page 1]
//	text of page 1
//
//	[report.pdf, page 2: no text]
//
// A page without text still gets its marker, so page numbers stay
// visible and a page sent as an image has its place.
func (d *Document) PromptText(name string) string {
	// A name is one line: it cannot start lines of its own.
	name = strings.Join(strings.FieldsFunc(name, unicode.IsControl), " ")
	if name == "" {
		name = "document"
	}
	var b strings.Builder
	for i, p := range d.Pages {
		if i > 0 {
			b.WriteByte('\n')
		}
		if p.Text == "" {
			fmt.Fprintf(&b, "[%s, page %d: no text]\n", name, p.Number)
			continue
		}
		fmt.Fprintf(&b, "[%s, page %d]\n%s", name, p.Number, p.Text)
	}
	return b.String()
}
