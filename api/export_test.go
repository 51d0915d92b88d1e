package api

import (
	"sync"

	"github.com/splash-inference/splash/pdfdoc"
)

// TestPDFReader is the test binary's one PDF reader, shared by the servers
// of the package's internal and external tests: starting PDFium is the
// expensive part.
var TestPDFReader = sync.OnceValue(func() *pdfdoc.Extractor { return pdfdoc.New(pdfdoc.Options{}) })
