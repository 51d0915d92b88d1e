package engine

import (
	"github.com/splash-inference/splash/engine/kvcache"
	"github.com/splash-inference/splash/engine/spec"
	"github.com/splash-inference/splash/engine/stop"
	"github.com/splash-inference/splash/model"
)

// Request is one generation request as the scheduler sees it: token ids and
// limits. Sampling settings stay with the caller's sample.Sampler.
type Request struct {
	ID         uint64
	Prompt     []int32
	MaxTokens  int     // generated tokens; 0: up to the context limit
	StopTokens []int32 // EOS and stop token ids
	// PromptLogprobs asks for logits at every prompt position on the first
	// pass. Such a request does not reuse cached prefixes, whose logits were
	// never computed.
	PromptLogprobs bool
	// NoDraft keeps speculation off for the request: a constrained request
	// (grammar mask) samples one position at a time, so drafts for it would
	// be proposed, reserved for and thrown away.
	NoDraft bool
	// Images are the prompt's images, in order (images.go; CheckImages
	// checks them against the model): the model reads their embeddings in
	// place of their pad tokens, Plan.EncodeImages fills them in, and
	// the prefix cache names their tokens by their hashes (CacheKeys).
	Images []Image
}

// SeqState is where a sequence is in its life.
type SeqState uint8

const (
	Waiting    SeqState = iota // queued, no blocks; new or preempted
	Prefilling                 // running; last scheduled as a prompt (or recompute) chunk
	Decoding                   // running; last scheduled as a decode or verify row
	Finished                   // done or cancelled; blocks freed
)

func (s SeqState) String() string {
	return [...]string{"waiting", "prefilling", "decoding", "finished"}[s]
}

// sequence is the scheduler's state for one request.
type sequence struct {
	id          uint64
	arrival     uint64 // admission order; preemption keeps it, which is the fairness rule
	state       SeqState
	tokens      []int32 // prompt then accepted output
	promptLen   int
	computed    int // leading tokens whose keys and values are in blocks
	blocks      kvcache.Blocks
	cond        stop.Conditions
	draftK      spec.AdaptiveK
	wantPrompt  bool // prompt logprobs still to produce
	promptDone  int  // prompt positions whose logits were delivered (kept across preemption)
	scheduledAt uint64
	reason      stop.Reason
	preemptions int
	// cachedPrompt is how many prompt tokens the prefix cache served at the
	// first admission (a re-admission after preemption does not count);
	// -1 until then. reported is set once an Output has carried it.
	cachedPrompt int
	reported     bool
	// warm marks the scheduler's own sequence that recomputes a finished
	// answer's tokens as a prompt (Config.WarmAnswers): it asks for no
	// logits and ends, with no Output, once its prompt is computed.
	warm bool
	// warmFrom is the least prefix hit a warming sequence runs from (its
	// answer's prompt's last chunk boundary): from less, it would redo more
	// than the answer, and is dropped.
	warmFrom int
	// images are the request's; spans their model view (Plan.Batch), and
	// keys the tokens as the prefix cache names them (CacheKeys), grown
	// with tokens; all nil without images.
	images []Image
	spans  []model.ImageSpan
	keys   []int32
}

// cacheKeys is q's tokens as the prefix cache names them.
func (q *sequence) cacheKeys() []int32 {
	if q.keys != nil {
		return q.keys
	}
	return q.tokens
}

// pending is how many tokens still need their keys and values computed.
func (q *sequence) pending() int { return len(q.tokens) - q.computed }

// cachedTokens is what q looks up in the prefix cache when admitted: its
// tokens, or none when it wants prompt logprobs (cached blocks have no
// logits to report).
func (q *sequence) cachedTokens() []int32 {
	if q.wantPrompt {
		return nil
	}
	return q.cacheKeys()
}

func (q *sequence) generated() int { return len(q.tokens) - q.promptLen }

// draftRoom bounds k so a verify row can neither overshoot max tokens nor
// the context limit: it can emit k+1 tokens.
func (q *sequence) draftRoom() int {
	room := q.cond.MaxContext - len(q.tokens) - 1
	if q.cond.MaxTokens > 0 {
		room = min(room, q.cond.MaxTokens-q.generated()-1)
	}
	return max(room, 0)
}
