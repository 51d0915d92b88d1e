package cpu

import (
	"math"
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
	kv := &metal.KVLayer{BlockSize: bs, NumBlocks: nb, KVHeads: kvHeads, HeadDim: hd,
		K: randF16(rng, nb*bs*kvHeads*hd), V: randF16(rng, nb*bs*kvHeads*hd)}
	rows := []metal.AttnRow{{Pos: 20, Blocks: identityTable(nb)}, {Pos: 31, Blocks: identityTable(nb)}}
	q, out := randVec(rng, len(rows)*heads*hd), make([]float32, len(rows)*heads*hd)
	be.Attention(out, q, kv, rows, heads, kvHeads, hd) // warm up per-worker scratch
	if n := testing.AllocsPerRun(20, func() { be.Attention(out, q, kv, rows, heads, kvHeads, hd) }); n != 0 {
		t.Fatalf("Attention allocates %v times per call", n)
	}
}

// TestAttentionRunsMatchSingleTokens: a token's output is bit-identical
// whether it is computed alone or among other tokens of its sequence
// sharing the cache reads (runs longer than attnRunTokens, two sequences
// side by side, positions out of order, a short and a long context).
func TestAttentionRunsMatchSingleTokens(t *testing.T) {
	rng := rand.New(rand.NewPCG(14, 14))
	const heads, kvHeads, hd, bs, nb = 4, 2, 32, 4, 16
	kv := &metal.KVLayer{BlockSize: bs, NumBlocks: nb, KVHeads: kvHeads, HeadDim: hd,
		K: randF16(rng, nb*bs*kvHeads*hd), V: randF16(rng, nb*bs*kvHeads*hd)}
	seqA, seqB := []int32{3, 1, 4, 0, 5, 9, 2, 6}, []int32{15, 14, 13, 12, 11, 10, 8, 7}
	var rows []metal.AttnRow
	for p := 29 - attnRunTokens - 3; p < 29; p++ { // a full run and a partial one
		rows = append(rows, metal.AttnRow{Pos: int32(p), Blocks: seqA})
	}
	for _, p := range []int32{2, 30, 9} {
		rows = append(rows, metal.AttnRow{Pos: p, Blocks: seqB})
	}
	rows = append(rows, metal.AttnRow{Pos: 5, Blocks: seqA})
	q := randVec(rng, len(rows)*heads*hd)
	for _, portable := range []bool{false, true} {
		be := NewWithOptions(Options{Threads: 2, Portable: portable})
		got := make([]float32, len(q))
		be.Attention(got, q, kv, rows, heads, kvHeads, hd)
		one := make([]float32, heads*hd)
		for r, row := range rows {
			be.Attention(one, q[r*heads*hd:(r+1)*heads*hd], kv, []metal.AttnRow{row}, heads, kvHeads, hd)
			for i, v := range one {
				if w := got[r*heads*hd+i]; math.Float32bits(w) != math.Float32bits(v) {
					t.Fatalf("portable=%v row %d (pos %d): out[%d] = %v in the batch, %v alone", portable, r, row.Pos, i, w, v)
				}
			}
		}
		be.Close()
	}
}
