// Package bench measures LLM inference servers that speak the OpenAI (Chat
// Completions, Completions) or Anthropic (Messages) HTTP APIs with streaming:
// Splash, llama.cpp's server, vLLM, Ollama, LM Studio. It is what `splash
// bench` runs. It imports no other Splash package, so it treats Splash like
// any other server.
//
// # Runs
//
// A run is a sweep of steps. A concurrency step keeps N requests in flight
// (each client takes the next job as soon as its last one ends); a rate step
// starts jobs at Poisson arrival times (seeded exponential gaps), optionally
// capped at MaxConcurrency in flight. Each step stops issuing requests at
// Load.Requests or Load.Duration, whichever comes first; requests in flight
// then finish or hit the per-request timeout, so every run ends by itself.
// Step i draws its jobs from a source seeded with Seed+i, so one command sends
// the same requests to every server it is pointed at.
//
// Workloads: Synthetic (single requests, prompt and output lengths fixed or
// drawn from distributions), AgentSessions (multi-turn conversations whose
// prompt grows each turn by the server's answer and a new user message, which
// is what prefix caching serves) and FileRequests (JSONL). Synthetic prompts
// are made of common English words from a seeded list; each is one token in
// the usual BPE vocabularies, so N words ≈ N tokens without a tokenizer. The
// exact count is taken from the server's usage report when there is one.
// Output length is set with max_tokens, plus "ignore_eos": true (IgnoreEOS
// "auto" stops sending it if the server rejects the field).
//
// # Metrics
//
// As vLLM's serving benchmark (benchmark_serving.py) defines them:
//
//   - TTFT: from sending the request to the first stream event that carries
//     generated text (content, or reasoning for thinking models).
//   - ITL: the gaps between successive events that carry text, pooled over
//     all requests of a step. A server that streams several tokens per event
//     (speculative decoding) shows fewer, longer gaps.
//   - TPOT: per request, (E2E − TTFT) / (output tokens − 1), for requests
//     with at least two output tokens.
//   - E2E: from sending the request to reading the end of its stream.
//   - Request throughput, output tokens/s and total (prompt + output)
//     tokens/s: completed requests and their tokens divided by the step's wall
//     time (first send to last response end).
//   - Goodput: completed requests per second that meet every bound of the SLO
//     (ttft, tpot, e2e); with no SLO every completed request counts.
//   - Errors: requests that did not complete, by kind: connect, timeout,
//     disconnect (the stream broke or ended without its end marker),
//     stream_error (the server sent an error event), bad_response, no_output,
//     cancelled and http_<status>.
//
// Latencies are summarised as mean, p50, p90 and p99 in milliseconds; the
// percentiles interpolate linearly between ranks, like numpy's default.
// Output tokens come from the server's usage report (the client asks for it
// with stream_options.include_usage); without one they are counted as
// streamed chunks with text, and the report says so.
//
// # JSON report (schema_version 1)
//
// WriteReport writes, and ReadReport reads, this document. Every key is
// always present; the key set is pinned by TestSchemaIsStable
// (testdata/schema_keys.txt). Renaming or removing a key bumps SchemaVersion.
//
//	schema_version        1
//	tool                  "splash bench"
//	started_at            RFC 3339 time the run started
//	config                how the run was made:
//	  base_url, model, api ("chat", "completions", "messages"),
//	  workload ("synthetic", "agent", "file"), file, input_len, output_len,
//	  turns, turn_len (length specs as given), shared_prefix (words),
//	  load ("concurrency" or "rate"), requests and duration_s (step bounds,
//	  0 = none), timeout_s (per request), seed, ignore_eos ("auto", "on",
//	  "off"), slo {ttft_ms, tpot_ms, e2e_ms} (0 = not checked)
//	steps[]               one per load level, in sweep order:
//	  summary:
//	    concurrency         requests kept in flight (0 in a rate step)
//	    rate                arrivals per second (0 in a concurrency step)
//	    mean_concurrency    observed: sum of request latencies / duration
//	    duration_s          wall time of the step
//	    requests            issued
//	    completed           finished with a whole stream
//	    errors              requests − completed
//	    error_kinds         {kind: count}
//	    input_tokens        prompt tokens of completed requests
//	    output_tokens       output tokens of completed requests
//	    prompt_tokens_source   "usage", "estimate", "mixed" or "none"
//	    output_tokens_source   "usage", "chunks", "mixed" or "none"
//	    request_throughput  completed requests/s
//	    output_tokens_per_s
//	    total_tokens_per_s  (input + output tokens)/s
//	    goodput             requests/s meeting the SLO
//	    ttft_ms, tpot_ms, itl_ms, e2e_ms   each {mean, p50, p90, p99}
//	  samples[]: one per request, in issue order:
//	    id, session, turn   issue order; job (agent session) index; turn in it
//	    start_ms            send time from the step's start
//	    ok, error_kind, error, http_status (0 if no response)
//	    ttft_ms, tpot_ms, e2e_ms, itl_ms (array of gaps)
//	    max_tokens          requested
//	    prompt_tokens, prompt_tokens_source ("usage" or "estimate")
//	    output_tokens, output_tokens_source ("usage" or "chunks")
//	    chunks              stream events that carried text
//
// Plots of a report (throughput and latency against concurrency or rate) are
// drawn by the bench/plot package; benchtest is a scripted fake server for
// tests.
package bench
