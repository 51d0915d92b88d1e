// Package fake provides a deterministic Engine, Tokenizer and ChatTemplate
// for testing the HTTP frontend without a model.
//
// The Tokenizer is byte-level (token i is byte i; 256 is BOS). The Template
// renders "<|role|>content" lines and, with thinking on, ends the prompt
// with "<think>\n" the way reasoning models' templates do. The Engine
// replays a fixed script, one word per token: when the prompt ends inside
// <think> it first emits the Thoughts (capped by the thinking budget) and
// "</think>", then the Words. It honours MaxTokens, stop strings, stop
// token ids, N (choice i starts i words into the script), logprobs,
// prompt logprobs and cancellation, and reports usage. It refuses
// logit_bias ids at or above VocabSize with api.ErrInvalidRequest.
package fake
