// Package tokenizer loads a Hugging Face tokenizer.json (with its
// tokenizer_config.json) and encodes and decodes exactly as the Hugging
// Face tokenizers library does, for the two BPE families:
//
//   - byte-level BPE (GPT-2, Qwen2 and Qwen3, Llama 3): the Split
//     pre-tokenizer with the GPT-2 / Qwen / Llama 3 regular expressions,
//     ByteLevel mapping and decoding;
//   - SentencePiece-style BPE (Llama 2, Mistral, Gemma): the text's own
//     characters with "▁" for spaces, put there by the Prepend and Replace
//     normalizers or by the Metaspace pre-tokenizer (prepend_scheme always,
//     first or never; split or not), the Split pre-tokenizer (a literal, or
//     a regular expression Go reads as the reference does; any behavior),
//     the word-level pre-tokenizers (Whitespace, WhitespaceSplit, Digits,
//     Punctuation, BertPreTokenizer), byte fallback to "<0xXX>" tokens or the
//     unknown token (fused or not), and the Replace, ByteFallback, Fuse,
//     Strip and Metaspace decoders (no decoder: tokens joined by spaces).
//
// Common to both: the normalizers NFC, NFD, NFKC, NFKD, Lowercase, Strip,
// StripAccents, Prepend, Replace (literal, or a regular expression Go reads
// as the reference does) and Sequence; BPE merges written as "a b" strings or
// ["a", "b"] pairs, with or without ignore_merges; added and special tokens
// (lstrip, rstrip, single_word, and normalized ones matched on normalized
// text); the TemplateProcessing post-processor, which tokenizer_config.json's
// add_bos_token and add_eos_token override for the Llama and Gemma tokenizer
// classes, as transformers does.
//
// The Split patterns use look-ahead (\s+(?!\S)), which Go's regexp lacks;
// they are matched by a hand-written scanner (pretokenize.go) that follows
// the reference's leftmost-alternative, backtracking semantics for exactly
// these patterns. A tokenizer.json using anything else — another pattern,
// model type, normalizer, pre-tokenizer or decoder — fails at Load with an
// error naming it, never a silently different tokenization.
//
// SentencePiece-style BPE sees a whole text (between added tokens) as one
// word when there is no splitting pre-tokenizer; merging uses a heap
// (spbpe.go) so that long prompts cost O(n log n).
//
// EncodePrompt encodes a rendered chat prompt given the byte ranges that
// came from the request: special and added tokens are parsed only outside
// them, so request text is always ordinary text.
//
// Decoding turns invalid UTF-8 into U+FFFD as the reference does: per
// maximal ill-formed subpart for byte-level BPE, one per byte for a run of
// byte-fallback tokens that is not valid UTF-8. StreamDecoder, fed one
// token at a time, emits text only once it is final, and the concatenation
// of what it emits equals Decode of the whole sequence; for SentencePiece
// tokenizers a run of byte-fallback tokens is held until the next other
// token, since a later byte could still invalidate it.
package tokenizer
