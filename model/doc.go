// Package model loads causal language models and runs their forward pass
// over a paged KV cache that the caller owns.
//
// # Architectures
//
// Qwen3ForCausalLM and LlamaForCausalLM (Llama 2 and 3, with the llama3
// rope_scaling) share one dense transformer (transformer.go); Qwen3 adds an
// RMSNorm over each query and key head. Architectures().Build checks every
// weight against the config and names the first missing or misshapen tensor.
// A model declares what each layer caches per sequence (CacheSpec, cache.go):
// paged keys and values (attention) or a fixed-size state (linear
// attention); the engine allocates (NewCache) and manages the cache, and
// PlanMemory (plan.go) sizes it, from that declaration alone.
//
// Hybrid models (Qwen3NextForCausalLM, Qwen3_5ForConditionalGeneration,
// Qwen3_5MoeForConditionalGeneration and their *ForCausalLM text models)
// have their config.json parsed and checked into Config.Hybrid
// (hybridconfig.go) and run in HybridModel (hybrid*.go): gated attention
// and Gated DeltaNet layers, dense or mixture-of-experts MLPs. Its cache
// declaration gives each full-attention layer paged KV and each Gated
// DeltaNet layer a state slot (its convolution window and recurrent
// matrices), which Forward clears for a row at position 0. A state cannot
// be rewound, and the delta rule's chunked form rounds differently from
// its token-by-token loop, so results are bit-identical however a
// sequence is split into calls only when the splits fall at multiples of
// metal.DeltaChunk from position 0, or the calls are short
// (metal.DeltaShortRows): CacheSpec says so, and the scheduler cuts such
// models' prompt chunks accordingly. A batch's StateCopies copy states
// between slots before its rows run: the engine keeps snapshots of
// sequences' states in slots of their own and restores one into the slot
// of a sequence that resumes from a cached prefix. Package hybridref holds
// the tests' float64 reference of these models and random checkpoints of
// each layout.
//
// DFlash and DFlash2 block-diffusion drafts (DFlashDraftModel,
// DFlash2DraftModel; dflashconfig.go, dflash*.go) have no embeddings or
// head: DFlashDraft binds one to its dense target, whose Forward captures
// the configured layers' hidden states (Batch.Features, Row.Capture); the
// draft fuses them into its own paged context K/V (AddContext) and
// proposes BlockSize−1 tokens per sequence in one batched pass (Propose).
// Sliding-window and attention-sink drafts, interleaved RoPE, hybrid
// targets and sampling from the draft's distribution are not supported.
//
// # Sources
//
// Open reads either a Hugging Face checkpoint directory (config.json plus
// model.safetensors, or shards listed in model.safetensors.index.json; f32,
// f16 and bf16 tensors, memory-mapped and used in place, a 3-D tensor as
// the matrix of its stacked rows) or a Splash package.
//
// # Splash package format (format_version 1)
//
// A package is a directory:
//
//	splash.json             the manifest (below)
//	target/weights.bin      the target model's tensors
//	draft/weights.bin       optional draft model's tensors
//	tokenizer.json          copied from the checkpoint
//	tokenizer_config.json   copied (holds the chat template), when present
//	generation_config.json  copied, when present
//
// Each weights.bin is the concatenation of its tensors in name order, each
// starting at a 64-byte aligned offset, each exactly in the metal package's
// layout (see package metal: f32, bf16, or q8/q4 groups of 32 with float16
// scales after the quants), so loading is mmap plus slicing — no copy, no
// conversion. Norm vectors are always f32; a matrix whose width is not a
// multiple of 32 is stored as bf16 in a q8/q4 package.
//
// splash.json holds: format_version; name; quant (f32, bf16, q8, q4);
// context_length; draft_block_size; draft_kind ("model", absent in older
// packages, or "dflash"/"dflash2", whose draft also holds its dflash
// config); target and draft, each with the model
// config (HF field names), the weights file and, per tensor, name, dtype,
// rows, cols, offset and size; tokenizer and chat_template file names; and
// files, the size and SHA-256 of every file. OpenPackage checks the format
// version, every size and (unless asked not to) every checksum, and every
// tensor's bounds and byte count, so a truncated or corrupted package fails
// with an error naming the file instead of producing garbage.
//
// Measured on a random test model (TestPackRoundTrip: hidden 128, fixed
// 8-token prompt, relative to the f32 checkpoint; weights N(0, 1/hidden),
// so the logits are flat and top-1 is fragile): bf16 max|Δlogit|/max|logit|
// ≈ 0.002, q8 ≈ 0.026 with top-1 agreement 100%, q4 ≈ 0.28 with top-1
// agreement 38%. The test bounds are 0.05, 0.05 and 0.4 (top-1 ≥ 75%, 75%,
// 25%). Random weights lack the structure of trained ones; real-model
// numbers belong to the fast-kernels work.
package model
