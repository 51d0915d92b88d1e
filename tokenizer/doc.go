// Package tokenizer loads a Hugging Face tokenizer.json (with its
// tokenizer_config.json) and encodes and decodes exactly as the Hugging
// Face tokenizers library does, for the byte-level BPE family (GPT-2, Qwen2
// and Qwen3, Llama 3): NFC normalisation, the Split pre-tokenizer with the
// GPT-2 / Qwen / Llama 3 regular expressions, ByteLevel mapping, BPE merges
// (with or without ignore_merges), added and special tokens (lstrip, rstrip,
// single_word), and ByteLevel decoding.
//
// The Split patterns use look-ahead (\s+(?!\S)), which Go's regexp lacks;
// they are matched by a hand-written scanner (pretokenize.go) that follows
// the reference's leftmost-alternative, backtracking semantics for exactly
// these patterns. A tokenizer.json using anything else — another pattern,
// model type, normalizer, pre-tokenizer or decoder — fails at Load with an
// error naming it, never a silently different tokenization.
//
// Decoding turns invalid UTF-8 into U+FFFD per maximal ill-formed subpart,
// as the reference does. StreamDecoder, fed one token at a time, emits text
// only once it is complete UTF-8, and the concatenation of what it emits
// equals Decode of the whole sequence.
//
// Not yet supported: SentencePiece-style BPE (Metaspace, byte fallback)
// used by Llama 2, Mistral and Gemma; NFKC and Lowercase normalizers.
package tokenizer
