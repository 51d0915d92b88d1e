package imageprep

import (
	"errors"
	"fmt"
	"image/jpeg"
	"image/png"
	"io"
	"strings"
)

// Kind classifies why an image was refused.
type Kind uint8

const (
	// Malformed: the bytes are not a valid image of their format.
	Malformed Kind = iota + 1
	// Truncated: the image ends before its data does.
	Truncated
	// TooLarge: the encoded bytes or the declared dimensions exceed Limits.
	TooLarge
	// Unsupported: a format, a feature of a format, or a shape (an aspect
	// ratio over 200) that is not handled.
	Unsupported
)

var kindNames = [...]string{Malformed: "malformed image", Truncated: "truncated image", TooLarge: "image too large", Unsupported: "unsupported image"}

func (k Kind) String() string {
	if int(k) < len(kindNames) && kindNames[k] != "" {
		return kindNames[k]
	}
	return fmt.Sprintf("kind(%d)", k)
}

// Error is every refusal of this package. All kinds are the client's fault
// (HTTP 400); Error() is a message fit to show the client.
type Error struct {
	Kind Kind
	Msg  string // what is wrong, e.g. "PNG: 100000x100000 pixels exceed the limit of 16777216"
	Err  error  // the decoder's error, when there is one
}

func (e *Error) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("imageprep: %s: %s: %v", e.Kind, e.Msg, e.Err)
	}
	return fmt.Sprintf("imageprep: %s: %s", e.Kind, e.Msg)
}

func (e *Error) Unwrap() error { return e.Err }

// KindOf returns the Kind of an *Error in err's chain, or 0.
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return 0
}

func errorf(k Kind, format string, args ...any) *Error {
	return &Error{Kind: k, Msg: fmt.Sprintf(format, args...)}
}

// decodeError classifies a decoder's error: running out of bytes is
// Truncated, a decoder's "unsupported" is Unsupported, the rest Malformed.
func decodeError(format string, err error) *Error {
	k := Malformed
	var pngU png.UnsupportedError
	var jpegU jpeg.UnsupportedError
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF),
		strings.Contains(err.Error(), "unexpected EOF"): // image/png and image/gif format it into their messages
		k = Truncated
	case errors.As(err, &pngU), errors.As(err, &jpegU):
		k = Unsupported
	}
	return &Error{Kind: k, Msg: format, Err: err}
}
