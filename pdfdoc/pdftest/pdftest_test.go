package pdftest

import (
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"testing"
)

// TestCrossReferences checks that every xref entry points at its object
// and startxref at the table, so readers need no repair.
func TestCrossReferences(t *testing.T) {
	docs := map[string][]byte{
		"plain":      Pages("one", "two\nlines", ""),
		"compressed": Doc{Pages: []string{"x (y) \\z"}, Compress: true}.Build(),
		"encrypted":  Doc{Pages: []string{"secret"}, Encrypted: true}.Build(),
		"no pages":   Pages(),
	}
	entry := regexp.MustCompile(`(\d{10}) 00000 n `)
	for name, pdf := range docs {
		t.Run(name, func(t *testing.T) {
			m := regexp.MustCompile(`startxref\n(\d+)\n%%EOF\n$`).FindSubmatch(pdf)
			if m == nil {
				t.Fatal("no startxref at the end")
			}
			xref, _ := strconv.Atoi(string(m[1]))
			if !bytes.HasPrefix(pdf[xref:], []byte("xref\n")) {
				t.Fatalf("startxref %d does not point at the table", xref)
			}
			for i, e := range entry.FindAllSubmatch(pdf[xref:], -1) {
				off, _ := strconv.Atoi(string(e[1]))
				if want := fmt.Sprintf("%d 0 obj\n", i+1); !bytes.HasPrefix(pdf[off:], []byte(want)) {
					t.Errorf("object %d: offset %d points at %.20q", i+1, off, pdf[off:])
				}
			}
		})
	}
}
