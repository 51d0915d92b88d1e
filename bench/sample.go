package bench

// Sample is the record of one request. Times are in milliseconds; StartMs is
// measured from the start of the step. Every field is always present in the
// JSON report (see the schema in doc.go).
type Sample struct {
	ID      int     `json:"id"`      // order in which the request was issued within the step
	Session int     `json:"session"` // index of the job (agent session) it belongs to
	Turn    int     `json:"turn"`    // 0-based turn within the session
	StartMs float64 `json:"start_ms"`

	OK         bool   `json:"ok"`
	ErrorKind  string `json:"error_kind"` // "" when OK; see the Err* constants
	Error      string `json:"error"`
	HTTPStatus int    `json:"http_status"` // 0 when no response arrived

	TTFTMs float64   `json:"ttft_ms"` // send to first generated text
	TPOTMs float64   `json:"tpot_ms"` // (e2e − ttft) / (output_tokens − 1); 0 with fewer than 2 tokens
	E2EMs  float64   `json:"e2e_ms"`  // send to end of stream
	ITLMs  []float64 `json:"itl_ms"`  // gaps between successive chunks that carried text

	MaxTokens          int    `json:"max_tokens"`
	PromptTokens       int    `json:"prompt_tokens"`
	PromptTokensSource string `json:"prompt_tokens_source"` // "usage" or "estimate" (word count)
	OutputTokens       int    `json:"output_tokens"`
	OutputTokensSource string `json:"output_tokens_source"` // "usage" or "chunks"
	Chunks             int    `json:"chunks"`               // stream events that carried text
}

// Error kinds of failed requests.
const (
	ErrConnect      = "connect"      // no connection (refused, DNS, TLS)
	ErrTimeout      = "timeout"      // the per-request timeout expired
	ErrDisconnect   = "disconnect"   // the stream broke or ended without its end marker
	ErrStream       = "stream_error" // the server sent an error event inside the stream
	ErrBadResponse  = "bad_response" // unparseable chunk or a non-streamed answer
	ErrNoOutput     = "no_output"    // the stream completed without generating any text
	ErrCancelled    = "cancelled"    // the whole run was interrupted
	errHTTPStatusFm = "http_%d"      // the server answered with this non-2xx status
)

// Sources of token counts.
const (
	SourceUsage    = "usage"    // the server's usage report
	SourceChunks   = "chunks"   // one token per streamed chunk with text (a lower bound when servers batch tokens)
	SourceEstimate = "estimate" // words in the prompt (≈ tokens for synthetic prompts)
)
