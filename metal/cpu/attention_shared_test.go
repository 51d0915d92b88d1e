package cpu

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/splash-inference/splash/metal"
)

// TestAttentionSharedPrefixMatchesAlone: rows of sequences whose block
// tables share a prompt prefix, batched together (one run reading the
// shared positions once), come out bit for bit as each row alone, with
// every kernel set and cache type; the batch did form shared runs.
// The rows: decode rows of six sequences sharing 512 positions (two more
// than a run holds, so two runs), a verify row of five tokens among them,
// rows whose shared part is too short to be worth a run, and a sequence
// with no shared blocks.
func TestAttentionSharedPrefixMatchesAlone(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 15))
	for _, tc := range []struct {
		typ                    metal.KVType
		heads, kvHeads, hd, bs int
	}{
		{metal.KVBF16, 16, 8, 128, 32},
		{metal.KVBF16, 4, 2, 64, 16},
		{metal.KVBF16, 6, 2, 32, 8},
		{metal.KVF16, 4, 2, 64, 16},
		{metal.KVF16, 16, 8, 128, 32},
		{metal.KVF16, 6, 2, 32, 8},
		{metal.KVQ8, 16, 8, 128, 32},
		{metal.KVQ8, 4, 2, 64, 16},
		{metal.KVF32, 16, 8, 128, 32},
		{metal.KVF32, 4, 2, 64, 16},
	} {
		const shared, own = 512, 256 // positions
		nbShared, nbOwn := shared/tc.bs, own/tc.bs
		const seqs = 9
		kv := randKVLayer(rng, tc.typ, nbShared+seqs*(nbShared+nbOwn), tc.bs, tc.kvHeads, tc.hd)
		prefix := rng.Perm(nbShared)
		table := func(s, sharedBlocks int) []int32 {
			t := make([]int32, 0, nbShared+nbOwn)
			for _, b := range prefix[:sharedBlocks] {
				t = append(t, int32(b))
			}
			for j := sharedBlocks; j < nbShared+nbOwn; j++ { // own blocks
				t = append(t, int32(nbShared+s*(nbShared+nbOwn)+j-sharedBlocks))
			}
			return t
		}
		var rows []metal.AttnRow
		for s := range seqs {
			blocks := table(s, nbShared)
			switch {
			case s == 6: // too little shared
				blocks = table(s, 4*16/tc.bs)
			case s == 8: // nothing shared
				blocks = table(s, 0)
			}
			n := 1
			if s == 2 {
				n = 5 // a verify row
			}
			for i := range n {
				rows = append(rows, metal.AttnRow{Pos: int32(shared + 20*s + i + rng.IntN(40)), Blocks: blocks})
			}
		}
		heads, kvHeads, hd := tc.heads, tc.kvHeads, tc.hd
		q := randVec(rng, len(rows)*heads*hd)
		for _, set := range append(availableFused(), portableFused()) {
			be := NewWithOptions(Options{Threads: 2})
			be.f = set
			got := make([]float32, len(q))
			be.Attention(got, q, kv, rows, heads, kvHeads, hd)
			if sharedRuns := slices.ContainsFunc(be.attnShared, func(s int32) bool { return s > 0 }); !sharedRuns {
				t.Fatalf("%+v %s: shared runs %v (runs %v, shared %v)", tc, set.name, sharedRuns, be.attnRuns, be.attnShared)
			}
			checkRowsAlone(t, fmt.Sprintf("%+v %s", tc, set.name), be, got, q, kv, rows, heads, kvHeads, hd)
			be.Close()
		}
	}
}
