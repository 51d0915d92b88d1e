package api

import "github.com/goccy/go-json"

// marshal encodes a response value. HTML characters are not escaped, so
// token text such as "<think>" reads as the official APIs send it.
func marshal(v any) ([]byte, error) {
	return json.MarshalWithOption(v, json.DisableHTMLEscape())
}
