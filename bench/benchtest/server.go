package benchtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"
)

// Behaviour scripts one response.
type Behaviour struct {
	TTFT time.Duration // wait before the first chunk
	ITL  time.Duration // wait between chunks
	// Tokens is how many tokens to generate; 0 means the request's max_tokens.
	Tokens int
	// TokensPerChunk groups tokens into chunks, as a speculative decoder
	// would; 0 means 1.
	TokensPerChunk int
	// Status, if not 0 or 200, is returned with a JSON error body instead of a stream.
	Status int
	// DisconnectAfter, if > 0, drops the connection after that many chunks.
	DisconnectAfter int
	// StreamErrorAfter, if > 0, sends an error event after that many chunks.
	StreamErrorAfter int
	// Hang waits, without sending anything, until the client gives up.
	Hang bool
	// NoUsage leaves out the usage report, as some servers do.
	NoUsage bool
}

// Script chooses the behaviour of the n-th request (0-based, in arrival order).
type Script func(n int) Behaviour

// Constant is a Script giving every request the same behaviour.
func Constant(b Behaviour) Script { return func(int) Behaviour { return b } }

// Record is what the server did for one request.
type Record struct {
	N            int
	Path         string
	Model        string
	Arrived      time.Time
	Flushes      []time.Time // when each chunk with text was sent
	Ended        time.Time   // when the end of the stream (or the failure) was sent
	PromptTokens int         // words in the prompt, reported as prompt tokens
	OutputTokens int         // tokens generated
	MaxTokens    int
	IgnoreEOS    bool
	Messages     int // number of messages (chat and messages APIs)
	Status       int
}

// TTFT is the time from arrival to the first chunk with text.
func (r Record) TTFT() time.Duration {
	if len(r.Flushes) == 0 {
		return 0
	}
	return r.Flushes[0].Sub(r.Arrived)
}

// Gaps are the times between successive chunks with text.
func (r Record) Gaps() []time.Duration {
	var g []time.Duration
	for i := 1; i < len(r.Flushes); i++ {
		g = append(g, r.Flushes[i].Sub(r.Flushes[i-1]))
	}
	return g
}

// Server is a fake LLM server. Create it with New and Close it when done.
type Server struct {
	*httptest.Server
	script Script
	// RejectIgnoreEOS makes the server answer 400 to requests with an
	// ignore_eos field, as strict OpenAI-compatible servers do. Set before use.
	RejectIgnoreEOS bool

	mu      sync.Mutex // guards records and next
	records []Record
	next    int
}

// New starts a fake server on 127.0.0.1 that follows script.
func New(script Script) *Server {
	s := &Server{script: script}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", s.handleOpenAI)
	mux.HandleFunc("POST /v1/completions", s.handleOpenAI)
	mux.HandleFunc("POST /v1/messages", s.handleAnthropic)
	mux.HandleFunc("GET /v1/models", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"object":"list","data":[{"id":"fake-model","object":"model"}]}`)
	})
	s.Server = httptest.NewServer(mux)
	return s
}

// Records returns what the server did so far, in arrival order.
func (s *Server) Records() []Record {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Record, len(s.records))
	copy(out, s.records)
	return out
}

// request is the union of the request bodies the server reads.
type request struct {
	Model     string            `json:"model"`
	Prompt    string            `json:"prompt"`
	System    string            `json:"system"`
	Messages  []json.RawMessage `json:"messages"`
	MaxTokens int               `json:"max_tokens"`
	IgnoreEOS *bool             `json:"ignore_eos"`
	Stream    bool              `json:"stream"`
}

// begin decodes a request, assigns its number and behaviour, and opens its
// record. It returns false after writing an error response.
func (s *Server) begin(w http.ResponseWriter, r *http.Request) (request, Behaviour, int, bool) {
	arrived := time.Now()
	var req request
	err := json.NewDecoder(r.Body).Decode(&req)
	s.mu.Lock()
	n := s.next
	s.next++
	s.records = append(s.records, Record{N: n, Path: r.URL.Path, Arrived: arrived})
	s.mu.Unlock()
	if err != nil {
		s.fail(w, n, http.StatusBadRequest, "bad json: "+err.Error())
		return req, Behaviour{}, n, false
	}
	b := s.script(n)
	prompt := countWords(req.Prompt) + countWords(req.System)
	for _, m := range req.Messages {
		var msg struct{ Content string }
		_ = json.Unmarshal(m, &msg)
		prompt += countWords(msg.Content)
	}
	s.update(n, func(rec *Record) {
		rec.Model, rec.MaxTokens, rec.IgnoreEOS = req.Model, req.MaxTokens, req.IgnoreEOS != nil && *req.IgnoreEOS
		rec.PromptTokens, rec.Messages = prompt, len(req.Messages)
	})
	switch {
	case s.RejectIgnoreEOS && req.IgnoreEOS != nil:
		s.fail(w, n, http.StatusBadRequest, "unrecognized request argument supplied: ignore_eos")
		return req, b, n, false
	case b.Status != 0 && b.Status != http.StatusOK:
		s.fail(w, n, b.Status, "scripted failure")
		return req, b, n, false
	case !req.Stream:
		s.fail(w, n, http.StatusBadRequest, "this fake server only streams")
		return req, b, n, false
	}
	if b.Tokens == 0 {
		b.Tokens = max(1, req.MaxTokens)
	}
	if b.TokensPerChunk <= 0 {
		b.TokensPerChunk = 1
	}
	s.update(n, func(rec *Record) { rec.Status = http.StatusOK })
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	return req, b, n, true
}

func (s *Server) fail(w http.ResponseWriter, n, status int, msg string) {
	s.update(n, func(rec *Record) { rec.Status = status; rec.Ended = time.Now() })
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"error":{"message":%q,"type":"invalid_request_error"}}`, msg)
}

func (s *Server) update(n int, f func(*Record)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(&s.records[n])
}

// stream runs the scripted generation, calling emit for each chunk of
// tokens. It returns false if the request ended early (client gone or a
// scripted disconnect, which aborts the connection).
func (s *Server) stream(w http.ResponseWriter, r *http.Request, n int, b Behaviour, emit func(text string), fail func()) bool {
	flusher := w.(http.Flusher)
	if b.Hang {
		<-r.Context().Done()
		return false
	}
	sent, chunks := 0, 0
	for sent < b.Tokens {
		wait := b.ITL
		if chunks == 0 {
			wait = b.TTFT
		}
		select {
		case <-r.Context().Done():
			return false
		case <-time.After(wait):
		}
		if b.DisconnectAfter > 0 && chunks == b.DisconnectAfter {
			s.update(n, func(rec *Record) { rec.Ended = time.Now() })
			panic(http.ErrAbortHandler) // drops the connection mid-stream
		}
		if b.StreamErrorAfter > 0 && chunks == b.StreamErrorAfter {
			s.update(n, func(rec *Record) { rec.Ended = time.Now() })
			fail()
			flusher.Flush()
			return false
		}
		k := min(b.TokensPerChunk, b.Tokens-sent)
		sent += k
		chunks++
		now := time.Now()
		s.update(n, func(rec *Record) { rec.Flushes = append(rec.Flushes, now); rec.OutputTokens = sent })
		emit(strings.Repeat(" tok", k))
		flusher.Flush()
	}
	return true
}

func (s *Server) handleOpenAI(w http.ResponseWriter, r *http.Request) {
	_, b, n, ok := s.begin(w, r)
	if !ok {
		return
	}
	chat := strings.HasSuffix(r.URL.Path, "/chat/completions")
	write := func(v any) {
		data, _ := json.Marshal(v)
		fmt.Fprintf(w, "data: %s\n\n", data)
	}
	// A keep-alive comment first, as some servers send, to check clients skip it.
	fmt.Fprint(w, ": keep-alive\n\n")
	done := s.stream(w, r, n, b, func(text string) {
		if chat {
			write(map[string]any{"object": "chat.completion.chunk", "choices": []any{map[string]any{"index": 0, "delta": map[string]any{"content": text}}}})
		} else {
			write(map[string]any{"object": "text_completion", "choices": []any{map[string]any{"index": 0, "text": text}}})
		}
	}, func() {
		write(map[string]any{"error": map[string]any{"message": "scripted stream error"}})
	})
	if !done {
		return
	}
	if !b.NoUsage {
		rec := s.Records()[n]
		write(map[string]any{"choices": []any{}, "usage": map[string]any{
			"prompt_tokens": rec.PromptTokens, "completion_tokens": rec.OutputTokens,
			"total_tokens": rec.PromptTokens + rec.OutputTokens,
		}})
	}
	// The end is recorded before it is sent, so a client that has read it
	// finds it in Records.
	s.update(n, func(rec *Record) { rec.Ended = time.Now() })
	fmt.Fprint(w, "data: [DONE]\n\n")
	w.(http.Flusher).Flush()
}

func (s *Server) handleAnthropic(w http.ResponseWriter, r *http.Request) {
	_, b, n, ok := s.begin(w, r)
	if !ok {
		return
	}
	event := func(typ string, v map[string]any) {
		v["type"] = typ
		data, _ := json.Marshal(v)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", typ, data)
	}
	prompt := s.Records()[n].PromptTokens
	event("message_start", map[string]any{"message": map[string]any{
		"id": "msg_fake", "role": "assistant", "usage": map[string]any{"input_tokens": prompt, "output_tokens": 1},
	}})
	event("content_block_start", map[string]any{"index": 0, "content_block": map[string]any{"type": "text", "text": ""}})
	event("ping", map[string]any{})
	w.(http.Flusher).Flush()
	done := s.stream(w, r, n, b, func(text string) {
		event("content_block_delta", map[string]any{"index": 0, "delta": map[string]any{"type": "text_delta", "text": text}})
	}, func() {
		event("error", map[string]any{"error": map[string]any{"type": "overloaded_error", "message": "scripted"}})
	})
	if !done {
		return
	}
	event("content_block_stop", map[string]any{"index": 0})
	usage := map[string]any{"output_tokens": s.Records()[n].OutputTokens}
	if b.NoUsage {
		usage = map[string]any{}
	}
	event("message_delta", map[string]any{"delta": map[string]any{"stop_reason": "max_tokens"}, "usage": usage})
	s.update(n, func(rec *Record) { rec.Ended = time.Now() })
	event("message_stop", map[string]any{})
	w.(http.Flusher).Flush()
}

func countWords(s string) int { return len(strings.Fields(s)) }
