// Package api is Splash's HTTP frontend: it speaks the
// OpenAI, Anthropic and vLLM-style APIs over fasthttp, turns every request
// into one dialect-neutral actors.Request, and streams the engine's
// events back as each dialect's JSON or Server-Sent Events.
//
// # Seams
//
// The package depends on the rest of Splash only through three small
// interfaces, satisfied by adapters in api/actorengine (Engine, over the
// actor runtime) and api/textmodel (Tokenizer, ChatTemplate):
//
//   - Engine runs an actors.Request and returns a channel of Events (text
//     already detokenized and stop-string filtered, token ids, logprobs,
//     finish reasons, and a final event with Usage).
//   - Tokenizer encodes and decodes text; a rendered chat prompt is
//     encoded with control tokens parsed only outside its content spans.
//   - ChatTemplate renders a []ChatMessage conversation to prompt text and
//     says which bytes of it came from the request (RenderedPrompt).
//
// internal/fake holds deterministic stand-ins used by the tests.
//
// # Endpoints
//
//	POST /v1/chat/completions       OpenAI Chat Completions (stream, n, logprobs, reasoning_content)
//	POST /v1/completions            OpenAI Completions (text or token-id prompt; echo with logprobs
//	                                scores the prompt tokens, as vLLM does)
//	POST /v1/responses              OpenAI Responses (store, previous_response_id, reasoning items)
//	GET  /v1/responses/{id}         a stored response (bounded in-memory store, oldest evicted)
//	POST /v1/messages               Anthropic Messages (thinking blocks, stop_sequence)
//	POST /v1/messages/count_tokens  Anthropic token count of a rendered request
//	GET  /v1/models                 the served model
//	POST /tokenize                  {"text"|"content"|"prompt"|"messages"} → {"tokens", "count"}
//	POST /detokenize                {"tokens"} → {"prompt"}
//	POST /apply-template            {"messages", "tools", reasoning switches, "spans"} → {"prompt",
//	                                "content_spans" with "spans": the request's bytes of it}
//	GET  /health, /ready            liveness; readiness (503 until SetReady(true))
//	GET  /metrics                   Prometheus text: HTTP counters, then Engine.WriteMetrics
//
// Every generating handler is one flow, serveGeneration (exchange.go):
// decode → plan (validate, template, tokenize) → hand to the engine →
// stream or collect. A dialect supplies its plan and its answer: request
// parsing lives in <dialect>_request.go, the checks every dialect shares
// (sampling, n, logprobs, stop) in validate.go, and response/stream
// writing in <dialect>_response.go.
//
// # Reasoning
//
// reasoning_effort (Chat), reasoning.effort (Responses) and thinking
// (Anthropic) resolve to the template's thinking switch and a thinking
// budget the engine enforces (it closes the block when the budget is
// spent): none → no thinking; minimal 256, low 1024, medium 4096,
// high 16384, xhigh 32768 tokens; Anthropic budget_tokens as given
// (≥ 1024 and < max_tokens). With no setting, OpenAI dialects keep the
// template's default (thinking, uncapped) and Anthropic has thinking off,
// as its API does. The model's "<think>…</think>" output is split from the
// answer in this package by a streaming-safe parser (think.go) and returned
// as reasoning_content, reasoning items or thinking blocks.
//
// # Security and limits
//
// Only Host headers naming loopback (127.0.0.1, localhost, [::1], any
// port) or an Options.AllowedHosts entry are served; others get 403, which
// defeats DNS rebinding. With Options.APIKey set, every route but /health
// and /ready needs "Authorization: Bearer <key>" or "x-api-key: <key>"
// (compared in constant time). Browser pages of other sites are kept out
// (crosssite.go): a POST must be application/json (415 otherwise), a
// request whose Origin is neither the server nor an
// Options.AllowedOrigins entry gets 403, and CORS preflights are answered
// for allowed origins only. A request with both Content-Length and
// Transfer-Encoding is a 400. Connections are capped in total and per
// client IP, the longest-idle one shed to make room, with read, idle and
// per-write stall timeouts (conns.go); running out of file descriptors
// sheds idle connections and backs off rather than stopping the accept
// loop (listener.go). Bodies over Options.MaxBodyBytes get 413;
// beyond MaxRunning+MaxWaiting generations in flight, or when the engine
// returns ErrBusy, requests get 429 with Retry-After. A prompt plus its
// max tokens beyond Options.ContextLength is a 400 naming both numbers.
// Every error uses the dialect's own shape: {"error":{...}} for OpenAI
// paths, {"type":"error","error":{...}} under /v1/messages.
//
// # Documents and images
//
// Chat Completions file parts, Responses input_file parts and Anthropic
// document blocks are read into their message's text (media.go) when the
// conversation is built: a PDF page by page through pdfdoc, under
// "[name, page N]" markers, a text document as it is, each a block of its
// own; so /tokenize and /apply-template show what inference sees. Data
// comes inline (base64, data: URLs) or, with Options.AllowRemoteMedia,
// from public http(s) URLs (mediaurl). A document that cannot be read is
// a 400 naming its part (messages[i].content[j]). Images (image_url,
// input_image, Anthropic image blocks, also in tool results) go to a model
// with a vision tower (Options.Vision; vision.go): decoded within the
// caps, prepared by its processor, and left in the message as a marker
// holding the server's random nonce, which the rendered prompt's
// tokenization turns into vision start, one pad per image token and
// vision end, as special ids: content that spells those tokens stays
// text. A text-only model refuses images with a 400 naming it (images.go).
//
// # Streaming and cancellation
//
// Streams are written from fasthttp's body stream writer. The first failed
// write or flush means the client is gone and cancels the context given to
// Engine.Generate; keep-alive pings (Anthropic "ping" events, SSE comments
// elsewhere) every Options.KeepAlive make that happen even while the
// engine is silent, e.g. during a long prefill. fasthttp gives no notice
// when the client of a non-streamed request leaves, so such requests peek
// at their connection every 100ms (a non-consuming MSG_PEEK read; unix
// only, elsewhere they run to their max tokens).
package api
