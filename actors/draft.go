package actors

import (
	"github.com/asynkron/protoactor-go/actor"

	"github.com/splash-inference/splash/engine/spec"
)

// DraftActor owns the draft proposer of draft-model speculation (a
// spec.DraftModel, or a spec.Hybrid that also tries n-gram lookup) and
// its own KV cache. The batcher asks it for proposals between Schedule
// and the target's forward pass, and tells it what was accepted and which
// sequences ended.
type DraftActor struct {
	proposer spec.Proposer
}

func (d *DraftActor) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *Propose:
		err := d.proposer.Propose(m.Wants)
		ctx.Respond(&Proposed{Step: m.Step, Err: err})
	case *Observed:
		if o, ok := d.proposer.(spec.Observer); ok {
			o.Observe(m.Seq, m.Proposed, m.Accepted)
		}
	case *FeaturesCommitted:
		if fs, ok := d.proposer.(spec.FeatureSink); ok {
			// An error only costs speculation: the sequence stops drafting.
			_ = fs.AddFeatures(m.Features)
		}
	case *Released:
		if r, ok := d.proposer.(spec.Releaser); ok {
			r.Release(m.Seq)
		}
	}
}
