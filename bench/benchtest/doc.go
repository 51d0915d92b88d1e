// Package benchtest is a fake streaming LLM server for testing benchmark
// clients. It speaks the streamed OpenAI Chat Completions and Completions
// APIs and the Anthropic Messages API on an httptest server bound to
// 127.0.0.1, generates each response on a script (time to first token, gap
// between chunks, token count, failures), and records the times at which it
// actually flushed each chunk, so tests compare a client's measurements with
// what the server really did rather than with the delays it was asked for.
package benchtest
