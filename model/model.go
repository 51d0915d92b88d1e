package model

import (
	"fmt"
	"sort"

	"github.com/splash-inference/splash/metal"
)

// Tensors is a set of named weight tensors in the kernels' layout: an open
// Hugging Face checkpoint or Splash package. The tensors' Data may point into
// memory-mapped files, valid until Close.
type Tensors interface {
	// Tensor returns the named tensor, or an error naming it when absent.
	Tensor(name string) (*metal.Tensor, error)
	// Names lists every tensor, sorted.
	Names() []string
	Close() error
}

// Model is a causal language model whose forward pass reads and writes a
// paged KV cache it does not own: the caller (the scheduler and KV manager)
// decides which blocks each sequence uses.
type Model interface {
	Config() *Config
	// CacheSpec declares what each layer caches per sequence (cache.go):
	// the engine sizes, allocates and manages the cache from it.
	CacheSpec() CacheSpec
	// NewKVCache allocates a paged cache of type t sized for this model's
	// PagedKV layers. It panics when t cannot hold the model's heads
	// (t.Check(HeadDim)). NewCache adds the state layers' slots.
	NewKVCache(numBlocks, blockSize int, t metal.KVType) *metal.KVCache
	// Forward evaluates one batch and returns the logits it asked for (see
	// Batch). The returned slice is reused by the next call.
	// Forward is not safe for concurrent use.
	Forward(b *Batch, kv *metal.KVCache) ([]float32, error)
}

// Batch is one forward pass over rows of different sequences: a prompt chunk,
// a single decode token, or a block of draft tokens to verify can all sit in
// the same batch.
type Batch struct {
	Rows []Row
	// Copies are KV cache block copies Forward makes, in order, before the
	// rows run: a row may read positions a copy brought into its blocks.
	Copies []metal.BlockCopy
	// Features, when not nil, receives the hidden states of chosen layers
	// at every position of the rows that set Capture (dflash_features.go);
	// nil costs nothing.
	Features *FeatureCapture

	// StateCopies are state slot copies (metal.CopyStates) Forward makes,
	// in order, before Copies and the rows: state snapshots taken and
	// restored. Only a model with state layers can get any.
	StateCopies []metal.StateCopy
}

// Row is a run of consecutive tokens of one sequence.
type Row struct {
	Start  int     // position of Tokens[0] in the sequence; positions before it are already in the cache
	Tokens []int32 // tokens at positions Start, Start+1, ...
	Blocks []int32 // the sequence's block table, covering positions 0..Start+len(Tokens)-1
	// State is the sequence's state slot in every SeqState layer
	// (CacheSpec); meaningless for a model without state layers.
	State int32
	// Logits is how many of the row's last positions need logits: 0 for
	// none (a prefill chunk that is not the prompt's last), 1 for the next
	// token, len(Tokens) for every position (verification, prompt logprobs).
	Logits int
	// Capture asks for the row's hidden states in Batch.Features.
	Capture bool
	// Images are the images of the row's sequence, in order: every one
	// that starts before the row's end, since each moves the rotary
	// positions of the tokens after it (mrope.go). The row's tokens inside
	// a span must be the image pad token, and that span's Embeds are then
	// fed in their place. Only a model with a vision tower (Config.Vision)
	// takes images.
	Images []ImageSpan
}

// NumLogits returns the number of logit vectors Forward returns for b; they
// come in row order, each row's positions in order, VocabSize floats each.
func (b *Batch) NumLogits() int {
	n := 0
	for _, r := range b.Rows {
		n += r.Logits
	}
	return n
}

// Builder constructs an architecture's model from its config and weights.
type Builder func(cfg *Config, w Tensors, be metal.Backend) (Model, error)

// Registry maps Hugging Face architecture names ("Qwen3ForCausalLM") to
// builders. It is filled once, by Architectures, and never mutated after.
type Registry map[string]Builder

// Architectures returns the registry of every supported architecture.
func Architectures() Registry {
	return Registry{
		"Qwen3ForCausalLM": newQwen3,
		"LlamaForCausalLM": newLlama,
		// Hybrid models (Config.Hybrid, hybridconfig.go).
		"Qwen3NextForCausalLM":               newHybrid,
		"Qwen3_5ForConditionalGeneration":    newHybrid,
		"Qwen3_5ForCausalLM":                 newHybrid,
		"Qwen3_5MoeForConditionalGeneration": newHybrid,
		"Qwen3_5MoeForCausalLM":              newHybrid,
	}
}

// Build constructs the model for cfg.Architecture.
func (r Registry) Build(cfg *Config, w Tensors, be metal.Backend) (Model, error) {
	b, ok := r[cfg.Architecture]
	if !ok {
		names := make([]string, 0, len(r))
		for n := range r {
			names = append(names, n)
		}
		sort.Strings(names)
		return nil, fmt.Errorf("model: architecture %q is not supported (supported: %v)", cfg.Architecture, names)
	}
	if err := cfg.Check(); err != nil {
		return nil, err
	}
	return b(cfg, w, be)
}
