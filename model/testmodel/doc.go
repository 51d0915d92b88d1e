// Package testmodel writes deterministic random-weight Hugging Face
// checkpoints of any dimensions (Qwen3 and Llama), with the real Qwen3 (or
// Llama 3) tokenizer vendored in the repository's testdata/, so any test can
// build a working model in milliseconds.
//
// A Spec gives the dimensions; Tiny is a two-layer model for tests and
// Qwen3_0_6B the real Qwen3-0.6B shape for benchmarks. The same Spec and
// Seed always give the same weights:
//
//	dir := t.TempDir()
//	err := testmodel.Write(dir, testmodel.Tiny("qwen3")) // config, safetensors, tokenizer
//	src, err := model.Open(dir, model.OpenOptions{})
//	m, err := src.Build(cpu.New(2))
//
// Random builds the config and tensors in memory instead, with no file
// written; Package builds a quantized Splash package once under a cache
// directory and reuses it, for full-size benchmark models. TouchKV,
// DecodeBatch and KVTypeFromEnv set up what a forward-pass benchmark
// measures: a warmed KV cache, a batch of decode rows over prefilled
// prompts, and the KV cache type the server would pick.
package testmodel
