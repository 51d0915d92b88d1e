package pdfdoc

import "errors"

// The errors Extract returns for a document it cannot or will not read,
// each wrapped with the detail (limit, page number) of the case. Any other
// error is the extractor's own failure (it could not start), not the
// document's.
var (
	ErrTooLarge     = errors.New("pdfdoc: the PDF is too large")
	ErrEncrypted    = errors.New("pdfdoc: the PDF is encrypted (password-protected)")
	ErrCorrupt      = errors.New("pdfdoc: the file is not a readable PDF")
	ErrEmpty        = errors.New("pdfdoc: the PDF has no pages")
	ErrTooManyPages = errors.New("pdfdoc: the PDF has too many pages")
	ErrTimeout      = errors.New("pdfdoc: reading the PDF took too long")
)

// IsDocumentError reports whether err says something about the document
// (the client's input) rather than the extractor.
func IsDocumentError(err error) bool {
	for _, e := range []error{ErrTooLarge, ErrEncrypted, ErrCorrupt, ErrEmpty, ErrTooManyPages, ErrTimeout} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}
