// Command fakellm serves the benchtest fake LLM on a local port, so that
// `splash bench` can be tried end to end without a model:
//
//	go run ./bench/benchtest/fakellm --addr 127.0.0.1:8099 --ttft 50ms --itl 10ms &
//	go run ./cmd/splash bench --base-url http://127.0.0.1:8099 --concurrency 1,2,4 --requests 16
//
// Every request gets the scripted delays and max_tokens tokens (or
// --tokens), streamed --tokens-per-chunk at a time, with a usage report
// unless --no-usage, on benchtest's endpoints: /v1/chat/completions,
// /v1/completions, /v1/messages and /v1/models. The address defaults to
// loopback, and should stay there.
//
// Flags:
//
//	--addr              address to listen on (127.0.0.1:8099)
//	--ttft              time to first token (50ms)
//	--itl               time between chunks (10ms)
//	--tokens            tokens per response (0: the request's max_tokens)
//	--tokens-per-chunk  tokens per streamed chunk (1)
//	--no-usage          leave out usage reports
package main
