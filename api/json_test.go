package api_test

import "github.com/goccy/go-json"

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }
