// Package pdfdoc extracts the text of each page of a PDF, for prompts that
// carry documents.
//
// It runs PDFium compiled to WebAssembly (github.com/klippa-app/go-pdfium
// over the wazero runtime): pure Go, no cgo, and the parser is sandboxed,
// with no file system and a memory cap, so a hostile file can fail but not
// reach the host. An Extractor compiles the module on first use (the
// compiled code is cached on disk, so later starts are quick) and keeps a
// bounded pool of instances that documents take turns on.
//
//	x := pdfdoc.New(pdfdoc.Options{Limits: pdfdoc.Limits{MaxPages: 100}})
//	defer x.Close()
//	doc, err := x.Extract(ctx, data)
//	switch {
//	case errors.Is(err, pdfdoc.ErrEncrypted): // tell the client which
//	case err != nil:
//	}
//	for _, p := range doc.Pages { fmt.Println(p.Number, p.Text) }
//
// Limits bound each document: bytes (checked before parsing), pages
// (checked after opening, before reading any), extracted text, and time
// (a deadline interrupts PDFium mid-call). Pages with little or no text
// are flagged LowText: scans and figures only a vision model can read;
// with Limits.RenderPixels set, they are also rendered to images within
// that many pixels. Document.PromptText lays the pages out for a prompt,
// each under a "[file.pdf, page N]" marker (PromptWithImages puts the text
// standing for a rendered page after its marker). Documents read are kept by
// content (Options.CacheBytes), so one an agent resends with every turn
// of its conversation is read once.
package pdfdoc
