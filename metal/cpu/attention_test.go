package cpu

import (
	"math/rand/v2"
	"testing"

	"github.com/splash-inference/splash/metal"
)

// identityTable is the block table 0, 1, ..., n-1.
func identityTable(n int) []int32 {
	t := make([]int32, n)
	for i := range t {
		t[i] = int32(i)
	}
	return t
}

func TestAttentionDoesNotAllocate(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 13))
	be := New(2)
	defer be.Close()
	const heads, kvHeads, hd, bs, nb = 4, 2, 16, 4, 8
	kv := &metal.KVLayer{BlockSize: bs, NumBlocks: nb, Dim: kvHeads * hd,
		K: randVec(rng, nb*bs*kvHeads*hd), V: randVec(rng, nb*bs*kvHeads*hd)}
	rows := []metal.AttnRow{{Pos: 20, Blocks: identityTable(nb)}, {Pos: 31, Blocks: identityTable(nb)}}
	q, out := randVec(rng, len(rows)*heads*hd), make([]float32, len(rows)*heads*hd)
	be.Attention(out, q, kv, rows, heads, kvHeads, hd) // warm up per-worker scratch
	if n := testing.AllocsPerRun(20, func() { be.Attention(out, q, kv, rows, heads, kvHeads, hd) }); n != 0 {
		t.Fatalf("Attention allocates %v times per call", n)
	}
}
