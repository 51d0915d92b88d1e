package model

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/splash-inference/splash/metal"
	"github.com/splash-inference/splash/metal/cpu"
)

// TestForwardAfterBlockCopyMatchesCold: a sequence that takes the first
// positions of another's block by a copy (Batch.Copies, the prefix cache's
// partial-block hit) and computes the rest of its prompt from there gets
// logits bit-identical to computing the whole prompt cold, for every cache
// type and every offset within the block, although the copied block's later
// positions hold the other sequence's different tokens (in a bfloat16
// cache, the other half of a pair of positions too).
func TestForwardAfterBlockCopyMatchesCold(t *testing.T) {
	be := cpu.New(1)
	defer be.Close()
	cfg := tinyConfig("LlamaForCausalLM", false) // heads of 32: every cache type
	m, _ := buildModel(t, cfg, metal.F32, be)
	const bs = 8
	prompt := randomTokens(3*bs+5, cfg.VocabSize, 21)
	other := randomTokens(3*bs+5, cfg.VocabSize, 22)
	for _, typ := range []metal.KVType{metal.KVF16, metal.KVBF16, metal.KVQ8, metal.KVF32} {
		for k := 2 * bs; k <= 3*bs; k++ {
			t.Run(fmt.Sprintf("%v/hit=%d", typ, k), func(t *testing.T) {
				kv := m.NewKVCache(16, bs, typ)
				cold, err := m.Forward(&Batch{Rows: []Row{{Tokens: prompt, Blocks: []int32{0, 1, 2, 3}, Logits: 1}}}, kv)
				if err != nil {
					t.Fatal(err)
				}
				want := slices.Clone(cold)
				// The first sequence shares the prompt's first k tokens, then differs.
				first := slices.Concat(prompt[:k], other[k:])
				firstBlocks := []int32{4, 5, 6, 7}
				if _, err := m.Forward(&Batch{Rows: []Row{{Tokens: first, Blocks: firstBlocks}}}, kv); err != nil {
					t.Fatal(err)
				}
				// The second shares the first's whole blocks, copies the one it ends in.
				blocks := slices.Concat(firstBlocks[:k/bs], []int32{8, 9, 10})[:4]
				got, err := m.Forward(&Batch{
					Rows:   []Row{{Start: k, Tokens: prompt[k:], Blocks: blocks, Logits: 1}},
					Copies: []metal.BlockCopy{{Src: firstBlocks[k/bs], Dst: blocks[k/bs]}},
				}, kv)
				if err != nil {
					t.Fatal(err)
				}
				for i := range want {
					if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
						t.Fatalf("logit %d: %v after the copy, %v cold", i, got[i], want[i])
					}
				}
			})
		}
	}
}
