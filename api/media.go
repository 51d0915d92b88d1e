package api

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/splash-inference/splash/imageprep"
	"github.com/splash-inference/splash/mediaurl"
	"github.com/splash-inference/splash/pdfdoc"
)

// documentInput is a document a request attaches — a file part (Chat
// Completions), an input_file part (Responses) or a document block
// (Anthropic) — as decoded. Its text is read when the conversation is
// built, under the server's limits.
type documentInput struct {
	name      string // the file name or title the markers show
	url       string // a data: or http(s) URL, if the data comes that way
	b64       string // base64 data (of mediaType), if it comes that way
	mediaType string
	text      string // a plain-text document's text, if it comes that way
	context   string // Anthropic's context: said before the document
	fileID    string // an uploaded file's id, which this server has no store for
}

// mediaReader reads attached documents into prompt text.
type mediaReader struct {
	base   context.Context // the server's: reads end when it is torn down
	pdf    *pdfdoc.Extractor
	ownPDF bool // the reader started pdf and closes it
	limits pdfdoc.Limits
	urls   *mediaurl.Resolver
	// maxPixels caps an image's width × height after decoding (larger
	// ones are resized down): --max-image-pixels.
	maxPixels int
}

func newMediaReader(base context.Context, o Options) *mediaReader {
	m := &mediaReader{base: base, pdf: o.PDFReader,
		limits:    pdfdoc.Limits{MaxBytes: o.MaxMediaBytes, MaxPages: o.MaxPDFPages},
		urls:      mediaurl.New(mediaurl.Options{AllowRemote: o.AllowRemoteMedia, MaxBytes: o.MaxMediaBytes}),
		maxPixels: o.MaxImagePixels,
	}
	if o.Vision != nil {
		// Scanned pages are rendered for the tower, within the pixel cap
		// an image of theirs would be resized to.
		m.limits.RenderPixels = imagePixels(o.MaxImagePixels, o.Vision)
	}
	if m.pdf == nil {
		m.pdf, m.ownPDF = pdfdoc.New(pdfdoc.Options{}), true
	}
	return m
}

func (m *mediaReader) close() error {
	if !m.ownPDF {
		return nil
	}
	return m.pdf.Close()
}

// documentText is a document as the prompt shows it: a PDF page by page
// under "[name, page N]" markers, a text document under "[name]". On a
// model with a vision tower, a PDF page with little or no text (a scan)
// follows its marker as an image too. param names the document in errors.
func (m *requestMedia) documentText(param string, d documentInput) (string, error) {
	if d.fileID != "" {
		return "", invalidf(param, "%s: file_id %s: this server keeps no uploaded files; send the file inline (file_data)", param, quote(d.fileID))
	}
	data, mediaType, err := m.documentBytes(param, d)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	if d.context != "" {
		b.WriteString(strings.TrimRight(d.context, "\n") + "\n")
	}
	switch {
	case isPDF(data):
		doc, err := m.pdf.ExtractWithin(m.base, data, m.limits)
		if err != nil {
			return "", documentError(param, err)
		}
		text, err := m.pdfText(param, doc, orName(d.name, "document.pdf"))
		if err != nil {
			return "", err
		}
		b.WriteString(text)
	case strings.HasPrefix(mediaType, "text/"):
		if !utf8.Valid(data) {
			return "", invalidf(param, "%s: the text document is not valid UTF-8", param)
		}
		fmt.Fprintf(&b, "[%s]\n%s\n", strings.Join(strings.Fields(orName(d.name, "document")), " "), bytes.TrimRight(data, "\n"))
	case mediaType == "application/pdf":
		return "", invalidf(param, "%s: the data is not a PDF (it has no %%PDF- header)", param)
	default:
		return "", invalidf(param, "%s: the file (%s) is not a PDF or a text document", param, orName(mediaType, "of unknown type"))
	}
	return b.String(), nil
}

// pdfText is a read PDF's prompt text, with each page rendered for the
// tower (a scan) prepared as an image and placed after its page marker.
func (m *requestMedia) pdfText(param string, doc *pdfdoc.Document, name string) (string, error) {
	if m.vision == nil {
		return doc.PromptText(name), nil
	}
	images := make([]string, len(doc.Pages))
	for i, p := range doc.Pages {
		if p.Image == nil {
			continue
		}
		marker, err := m.addImage(fmt.Sprintf("%s (page %d)", param, p.Number), imageprep.FromImage(p.Image))
		if err != nil {
			return "", err
		}
		images[i] = marker
	}
	return doc.PromptWithImages(name, images), nil
}

// documentBytes gets a document's bytes and media type, decoding or
// fetching them.
func (m *mediaReader) documentBytes(param string, d documentInput) ([]byte, string, error) {
	var media mediaurl.Media
	var err error
	switch {
	case d.url != "":
		media, err = m.urls.Resolve(m.base, d.url)
	case d.b64 != "":
		media, err = m.urls.DecodeBase64(d.mediaType, d.b64)
	case d.text != "":
		if len(d.text) > m.urls.MaxBytes() {
			return nil, "", invalidf(param, "%s: the document is %d bytes, above this server's limit of %d (--max-media-bytes)", param, len(d.text), m.urls.MaxBytes())
		}
		return []byte(d.text), "text/plain", nil
	default:
		return nil, "", invalidf(param, "%s: the document has no data", param)
	}
	if err != nil {
		return nil, "", mediaError(param, err)
	}
	if d.mediaType != "" {
		media.MediaType = d.mediaType
	}
	return media.Data, strings.ToLower(media.MediaType), nil
}

// isPDF reports whether data starts as a PDF does; readers look for the
// header anywhere in the first kilobyte, after junk some writers put first.
func isPDF(data []byte) bool {
	return bytes.Contains(data[:min(len(data), 1024)], []byte("%PDF-"))
}

// documentError is the client's error for a PDF that was not read.
func documentError(param string, err error) error {
	if !pdfdoc.IsDocumentError(err) {
		return fmt.Errorf("api: reading the PDF in %s: %w", param, err) // the server's failure: a 500
	}
	msg := strings.TrimPrefix(err.Error(), "pdfdoc: ")
	switch {
	case errors.Is(err, pdfdoc.ErrTooManyPages):
		msg += " (--max-pdf-pages)"
	case errors.Is(err, pdfdoc.ErrTooLarge):
		msg += " (--max-media-bytes)"
	}
	return invalidf(param, "%s: %s", param, msg)
}

// mediaError is the client's error for media that could not be had.
func mediaError(param string, err error) error {
	msg := strings.TrimPrefix(err.Error(), "mediaurl: ")
	if errors.Is(err, mediaurl.ErrTooLarge) {
		msg += " (--max-media-bytes)"
	}
	return invalidf(param, "%s: %s", param, msg)
}

func orName(s, fallback string) string {
	if s == "" {
		return fallback
	}
	return s
}

// contentJoiner joins a message's parts: text parts run together as the
// client split them; a document stands apart, a blank line on each side.
type contentJoiner struct {
	content    string
	afterBlock bool
}

func (j *contentJoiner) text(s string) {
	if j.afterBlock && s != "" {
		j.block(s)
		j.afterBlock = false
		return
	}
	j.content += s
}

// image puts an image's marker where its part sits, as the chat templates
// put its tokens: nothing added on either side.
func (j *contentJoiner) image(marker string) {
	j.content += marker
	j.afterBlock = false
}

func (j *contentJoiner) block(s string) {
	switch {
	case j.content == "", strings.HasSuffix(j.content, "\n\n"):
	case strings.HasSuffix(j.content, "\n"):
		j.content += "\n"
	default:
		j.content += "\n\n"
	}
	j.content += s
	j.afterBlock = true
}

// mediaSource is an Anthropic image or document block's source: an
// image's (base64 or url), or a document's, which may also be plain text
// ("text": data is the text) or an uploaded file ("file").
type mediaSource struct {
	imageSource
	FileID string `json:"file_id"`
}

// document is a document block's document; param names the block.
func (b anthropicBlockIn) document(param string) (documentInput, error) {
	d := documentInput{name: b.Title, context: b.Context, mediaType: b.Source.MediaType}
	switch s := b.Source; s.Type {
	case "base64":
		d.b64 = s.Data
	case "text":
		d.text = s.Data
	case "url":
		d.url = s.URL
	case "file":
		d.fileID = s.FileID
	default:
		return d, invalidf(param, "%s: document source type %s is not base64, text, url or file", param, quote(s.Type))
	}
	return d, nil
}
