package api

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/goccy/go-json"
)

// decodeJSON parses a request body into v, turning decoder errors into a
// 400 that names the offending field where the decoder knows it.
func decodeJSON(body []byte, v any) error {
	if len(bytes.TrimSpace(body)) == 0 {
		return invalidf("", "request body is empty; expected a JSON object")
	}
	if err := json.Unmarshal(body, v); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) && typeErr.Field != "" {
			return invalidf(typeErr.Field, "field %q: expected %s, got JSON %s", typeErr.Field, typeName(typeErr.Type.String()), typeErr.Value)
		}
		var ae *apiError
		if errors.As(err, &ae) {
			return ae
		}
		var img *imageInput
		if errors.As(err, &img) {
			return img
		}
		return invalidf("", "malformed JSON body: %v", err)
	}
	return nil
}

// typeName turns a Go type into the JSON type a client should have sent.
func typeName(goType string) string {
	switch {
	case strings.HasPrefix(goType, "[]"):
		return "an array"
	case strings.HasPrefix(goType, "map["), strings.HasPrefix(goType, "api."), strings.HasPrefix(goType, "struct"):
		return "an object"
	case goType == "string":
		return "a string"
	case goType == "bool":
		return "a boolean"
	case strings.HasPrefix(goType, "int"), strings.HasPrefix(goType, "uint"):
		return "an integer"
	case strings.HasPrefix(goType, "float"):
		return "a number"
	}
	return goType
}

// stringList is a JSON string or array of strings (OpenAI "stop").
type stringList []string

func (l *stringList) UnmarshalJSON(b []byte) error {
	bad := invalidf("stop", "stop must be a string or an array of strings")
	list, err := stringOrArray(b, func(s string) string { return s }, func(error) error { return bad }, bad)
	*l = list
	return err
}

// stringOrArray decodes the JSON shape many API fields share: null, a
// string (turned into one element by one) or an array of E. badArray maps
// an array that does not decode to the field's error; badType is the error
// for any other JSON type.
func stringOrArray[E any](b []byte, one func(string) E, badArray func(error) error, badType error) ([]E, error) {
	switch firstByte(b) {
	case 'n':
		return nil, nil
	case '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return nil, err
		}
		return []E{one(s)}, nil
	case '[':
		var list []E
		if err := json.Unmarshal(b, &list); err != nil {
			return nil, badArray(err)
		}
		return list, nil
	}
	return nil, badType
}

// textContent is OpenAI message content: a string, null, or an array of
// parts: text ({"type":"text","text":...}; Responses uses input_text and
// output_text), documents (Chat Completions "file", Responses
// "input_file"), whose text read joins the text's, and images (image_url,
// input_image), read in their places (see read); other part types are
// refused.
type textContent struct {
	parts []contentPart
}

type contentPart struct {
	Type string `json:"type"`
	Text string `json:"text"`
	// ImageURL is {"url": ...} in Chat Completions, a string in Responses.
	ImageURL json.RawMessage `json:"image_url"`
	// File is a Chat Completions file part's; a Responses input_file has
	// the same fields in the part itself, and file_url besides.
	File *filePart `json:"file"`
	filePart
	FileURL string `json:"file_url"`
}

// filePart is a file's data (base64, or a data: URL of it), name and id.
type filePart struct {
	FileData string `json:"file_data"`
	Filename string `json:"filename"`
	FileID   string `json:"file_id"`
}

// document is a file part's document.
func (p contentPart) document() documentInput {
	f := p.filePart
	if p.File != nil {
		f = *p.File
	}
	d := documentInput{name: f.Filename, fileID: f.FileID, url: p.FileURL}
	switch scheme, _, _ := strings.Cut(f.FileData, ":"); scheme {
	case "data", "http", "https": // a URL where base64 belongs: say what the URL policy says
		d.url = f.FileData
	default:
		d.b64 = f.FileData
	}
	return d
}

// read is the content's text, each document read in its place and each
// image's marker in its place; param names the content in errors.
func (c textContent) read(m *requestMedia, param string) (string, error) {
	var j contentJoiner
	for i, p := range c.parts {
		partParam := fmt.Sprintf("%s[%d]", param, i)
		switch p.Type {
		case "file", "input_file":
			text, err := m.documentText(partParam, p.document())
			if err != nil {
				return "", err
			}
			j.block(text)
		case "image_url", "input_image":
			marker, err := m.image(partParam, p.imageURL(), "", "")
			if err != nil {
				return "", err
			}
			j.image(marker)
		default:
			j.text(p.Text)
		}
	}
	return j.content, nil
}

// imageURL is the URL of an image part in either shape.
func (p contentPart) imageURL() string {
	var s string
	if json.Unmarshal(p.ImageURL, &s) == nil {
		return s
	}
	var obj struct {
		URL string `json:"url"`
	}
	json.Unmarshal(p.ImageURL, &obj)
	return obj.URL
}

func (c *textContent) UnmarshalJSON(b []byte) error {
	parts, err := stringOrArray(b, func(s string) contentPart { return contentPart{Type: "text", Text: s} },
		func(error) error {
			return invalidf("content", "content parts must be objects with \"type\" and \"text\"")
		},
		invalidf("content", "content must be a string or an array of content parts"))
	if err != nil {
		return err
	}
	for _, p := range parts {
		switch p.Type {
		case "text", "input_text", "output_text", "file", "input_file", "image_url", "input_image":
		default:
			return invalidf("content", "content part type %q is not supported (text, file and image only)", p.Type)
		}
	}
	c.parts = parts
	return nil
}

// firstByte is the first non-space byte of a JSON value.
func firstByte(b []byte) byte {
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return 0
	}
	return b[0]
}

func quote(s string) string {
	const max = 200
	if len(s) > max {
		s = s[:max] + "..."
	}
	return fmt.Sprintf("%q", s)
}
