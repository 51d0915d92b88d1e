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
func (d *Document) PromptText(name string) string { return d.PromptWithImages(name, nil) }

// PromptWithImages is PromptText with images[i], where it is not empty,
// on its own line after page i's marker and before the page's text: the
// text that stands for the page's rendered image (Page.Image) in a
// prompt for a model that reads images. Such a page is not said to have
// no text, since the image is its content.
func (d *Document) PromptWithImages(name string, images []string) string {
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
		image := ""
		if i < len(images) {
			image = images[i]
		}
		if p.Text == "" && image == "" {
			fmt.Fprintf(&b, "[%s, page %d: no text]\n", name, p.Number)
			continue
		}
		fmt.Fprintf(&b, "[%s, page %d]\n", name, p.Number)
		if image != "" {
			b.WriteString(image + "\n")
		}
		b.WriteString(p.Text)
	}
	return b.String()
}
