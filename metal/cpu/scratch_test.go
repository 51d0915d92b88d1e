package cpu

import (
	"math/rand/v2"
	"testing"

	"github.com/splash-inference/splash/metal"
)

// TestReservedAttentionDoesNotGrow runs a long prompt's attention chunk by
// chunk, its context growing each time, after ReserveAttention for the
// whole context: no chunk grows the worker's scratch (before, each grew it
// to its context exactly, a trail of buffers quadratic in the prompt).
func TestReservedAttentionDoesNotGrow(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 21))
	for _, tc := range []struct {
		typ                                metal.KVType
		heads, kvHeads, hd, bs, nb, chunks int
	}{
		{metal.KVF16, 4, 2, 16, 16, 64, 16}, {metal.KVBF16, 16, 8, 128, 16, 32, 8}, {metal.KVQ8, 16, 8, 128, 16, 32, 8},
	} {
		be := New(1)
		context := tc.nb * tc.bs
		be.ReserveAttention(tc.heads, tc.hd, context)
		kv := randKVLayer(rng, tc.typ, tc.nb, tc.bs, tc.kvHeads, tc.hd)
		chunk := context / tc.chunks
		q, out := randVec(rng, chunk*tc.heads*tc.hd), make([]float32, chunk*tc.heads*tc.hd)
		rows := make([]metal.AttnRow, chunk)
		table := identityTable(tc.nb)
		reserved := &be.scratch[0][:1][0]
		for start := 0; start < context; start += chunk {
			for i := range rows {
				rows[i] = metal.AttnRow{Pos: int32(start + i), Blocks: table}
			}
			be.Attention(out, q, kv, rows, tc.heads, tc.kvHeads, tc.hd)
			if &be.scratch[0][:1][0] != reserved {
				t.Errorf("%+v: the chunk at %d grew the scratch reserved for a context of %d", tc, start, context)
				break
			}
		}
		be.Close()
	}
}
