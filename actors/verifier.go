package actors

import (
	"fmt"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/splash-inference/splash/engine"
	"github.com/splash-inference/splash/metal"
	"github.com/splash-inference/splash/model"
)

// VerifierActor owns the target model and its KV memory and runs one
// forward pass per Verify. A restart reuses both: the KV contents of
// sequences outside the failed step stay valid, since a pass writes only
// the slots of its own batch.
type VerifierActor struct {
	model model.Model
	kv    *metal.KVCache
	// images holds the vision tower's embeddings by image (nil without a
	// tower); a restart keeps it.
	images  *engine.ImageCache
	metrics *metricsBox
	// fault, when set, is called before each pass; tests use it to inject
	// panics.
	fault func(step uint64)
}

func (v *VerifierActor) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *Verify:
		if v.fault != nil {
			v.fault(m.Step)
		}
		if m.Images != nil {
			err := m.Images(v.images)
			if v.images != nil {
				v.metrics.observeImages(v.images.Stats())
			}
			if err != nil {
				ctx.Respond(&Verified{Step: m.Step, Err: fmt.Errorf("actors: images: %w", err)})
				return
			}
		}
		logits, err := v.model.Forward(m.Batch, v.kv)
		if err != nil {
			err = fmt.Errorf("actors: forward pass: %w", err)
		}
		ctx.Respond(&Verified{Step: m.Step, Logits: logits, Err: err})
	}
}
