package api

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/valyala/fasthttp"
)

// errorKind classifies a failure independently of the API dialect; each
// dialect maps it to its own status code and error type string.
type errorKind int

const (
	kindInvalidRequest errorKind = iota
	kindAuthentication
	kindPermission
	kindNotFound
	kindTooLarge
	kindUnsupportedMedia // a body that is not JSON
	kindRequestTimeout   // a request not received in time
	kindRateLimit
	kindServer
	kindUnavailable
)

// apiError is an error the client sees, in the shape of its dialect.
type apiError struct {
	kind    errorKind
	code    string // OpenAI "code", e.g. "model_not_found"; optional
	param   string // the offending request field; optional
	message string
	// retryAfter, in seconds, is sent as Retry-After when > 0.
	retryAfter int
}

func (e *apiError) Error() string { return "api: " + e.message }

func invalidf(param, format string, args ...any) *apiError {
	return &apiError{kind: kindInvalidRequest, param: param, message: fmt.Sprintf(format, args...)}
}

// asAPIError turns any error into the one the client sees; unexpected
// errors become 500s carrying their message.
func asAPIError(err error) *apiError {
	var ae *apiError
	if errors.As(err, &ae) {
		return ae
	}
	if errors.Is(err, ErrBusy) {
		return &apiError{kind: kindRateLimit, message: "server busy: too many requests waiting", retryAfter: 1}
	}
	if errors.Is(err, ErrInvalidRequest) {
		return &apiError{kind: kindInvalidRequest, message: err.Error()}
	}
	return &apiError{kind: kindServer, message: err.Error()}
}

// dialect is the API family a request belongs to; it decides error shapes.
type dialect int

const (
	dialectOpenAI dialect = iota
	dialectAnthropic
)

// dialectOf picks the error shape for a request path, so that middleware
// (auth, Host check, body cap) answers each client in its own dialect.
func dialectOf(path []byte) dialect {
	const prefix = "/v1/messages"
	if len(path) >= len(prefix) && string(path[:len(prefix)]) == prefix {
		return dialectAnthropic
	}
	return dialectOpenAI
}

// status returns the HTTP status of an error kind.
func (k errorKind) status() int {
	switch k {
	case kindAuthentication:
		return fasthttp.StatusUnauthorized
	case kindPermission:
		return fasthttp.StatusForbidden
	case kindNotFound:
		return fasthttp.StatusNotFound
	case kindTooLarge:
		return fasthttp.StatusRequestEntityTooLarge
	case kindUnsupportedMedia:
		return fasthttp.StatusUnsupportedMediaType
	case kindRequestTimeout:
		return fasthttp.StatusRequestTimeout
	case kindRateLimit:
		return fasthttp.StatusTooManyRequests
	case kindServer:
		return fasthttp.StatusInternalServerError
	case kindUnavailable:
		return fasthttp.StatusServiceUnavailable
	}
	return fasthttp.StatusBadRequest
}

// openAIType is the "type" of an OpenAI error object.
func (k errorKind) openAIType() string {
	switch k {
	case kindAuthentication:
		return "authentication_error"
	case kindPermission:
		return "permission_error"
	case kindNotFound:
		return "not_found_error"
	case kindRateLimit:
		return "rate_limit_error"
	case kindServer, kindUnavailable:
		return "server_error"
	}
	return "invalid_request_error"
}

// anthropicType is the "type" of an Anthropic error object.
func (k errorKind) anthropicType() string {
	switch k {
	case kindAuthentication:
		return "authentication_error"
	case kindPermission:
		return "permission_error"
	case kindNotFound:
		return "not_found_error"
	case kindTooLarge:
		return "request_too_large"
	case kindRateLimit:
		return "rate_limit_error"
	case kindServer:
		return "api_error"
	case kindUnavailable:
		return "overloaded_error"
	}
	return "invalid_request_error"
}

// openAIErrorBody is {"error": {...}} as OpenAI sends it.
type openAIErrorBody struct {
	Error openAIErrorObject `json:"error"`
}

type openAIErrorObject struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    *string `json:"code"`
}

// anthropicErrorBody is {"type":"error","error":{...}} as Anthropic sends it.
type anthropicErrorBody struct {
	Type  string               `json:"type"`
	Error anthropicErrorObject `json:"error"`
}

type anthropicErrorObject struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// errorBody returns the JSON value of e in dialect d.
func errorBody(d dialect, e *apiError) any {
	if d == dialectAnthropic {
		return anthropicErrorBody{Type: "error", Error: anthropicErrorObject{Type: e.kind.anthropicType(), Message: e.message}}
	}
	return openAIErrorBody{Error: openAIErrorObject{
		Message: e.message, Type: e.kind.openAIType(), Param: optional(e.param), Code: optional(e.code),
	}}
}

// writeError answers the request with err in dialect d.
func writeError(ctx *fasthttp.RequestCtx, d dialect, err error) {
	e := asAPIError(resolveImageError(ctx, err))
	if e.retryAfter > 0 {
		ctx.Response.Header.Set("Retry-After", strconv.Itoa(e.retryAfter))
	}
	writeJSON(ctx, e.kind.status(), errorBody(d, e))
}

// writeJSON answers with v encoded as JSON.
func writeJSON(ctx *fasthttp.RequestCtx, status int, v any) {
	b, err := marshal(v)
	if err != nil {
		status = fasthttp.StatusInternalServerError
		b = []byte(`{"error":{"message":"api: encoding the response failed","type":"server_error","param":null,"code":null}}`)
	}
	ctx.SetStatusCode(status)
	ctx.SetContentType("application/json")
	ctx.SetBody(b)
}
