package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"unsafe"

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

// randKVLayer is a layer of type typ holding random keys and values in
// every slot, stored by WriteKV.
func randKVLayer(rng *rand.Rand, typ metal.KVType, nb, bs, kvHeads, hd int) *metal.KVLayer {
	l := metal.NewKVLayer(typ, nb, bs, kvHeads, hd)
	n := nb * bs * kvHeads * hd
	be := NewWithOptions(Options{Threads: 1, Portable: true})
	defer be.Close()
	be.WriteKV(&l, randVec(rng, n), randVec(rng, n), identityTable(nb*bs))
	return &l
}

// TestAttentionDoesNotAllocate: once a worker's lists and scratch have
// grown, Attention allocates nothing. On one worker: with two, the caller
// sometimes waits for the helper past the pool's spin time and parks on a
// sync.Cond, where the runtime may allocate (10 of 200 runs of this test
// then saw an allocation a call; none with the spin time raised to 10 s),
// which is not this code's to avoid. The workers run the same code.
func TestAttentionDoesNotAllocate(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 13))
	be := New(1)
	defer be.Close()
	// Small heads (widened chunks), and a verify row of Qwen3's shape
	// (keys and values read in place, and one token alone).
	for _, tc := range []struct {
		typ                                metal.KVType
		heads, kvHeads, hd, bs, nb, tokens int
	}{
		{metal.KVF16, 4, 2, 16, 4, 8, 2}, {metal.KVF16, 16, 8, 128, 16, 20, 5}, {metal.KVF16, 16, 8, 128, 16, 20, 1},
		{metal.KVQ8, 16, 8, 128, 16, 20, 5}, {metal.KVQ8, 16, 8, 128, 16, 20, 1},
		{metal.KVBF16, 16, 8, 128, 16, 20, 5}, {metal.KVBF16, 16, 8, 128, 16, 20, 1},
		{metal.KVF32, 16, 8, 128, 16, 20, 5}, {metal.KVF32, 16, 8, 128, 16, 20, 1},
	} {
		kv := randKVLayer(rng, tc.typ, tc.nb, tc.bs, tc.kvHeads, tc.hd)
		var rows []metal.AttnRow
		for i := range tc.tokens {
			rows = append(rows, metal.AttnRow{Pos: int32(tc.nb*tc.bs - tc.tokens - 3 + i), Blocks: identityTable(tc.nb)})
		}
		q, out := randVec(rng, len(rows)*tc.heads*tc.hd), make([]float32, len(rows)*tc.heads*tc.hd)
		be.Attention(out, q, kv, rows, tc.heads, tc.kvHeads, tc.hd) // warm up per-worker scratch
		if n := testing.AllocsPerRun(20, func() { be.Attention(out, q, kv, rows, tc.heads, tc.kvHeads, tc.hd) }); n != 0 {
			t.Fatalf("%+v: Attention allocates %v times per call", tc, n)
		}
	}
}

// TestAttentionRunsMatchSingleTokens: a token's output is bit-identical
// whether it is computed alone or among other tokens of its sequence
// sharing the cache reads (runs longer than attnRunTokens, two sequences
// side by side, positions out of order, a short and a long context; runs
// that read whole groups of positions in place, from one token to
// sixteen, across chunk boundaries and within a block's first eight).
func TestAttentionRunsMatchSingleTokens(t *testing.T) {
	rng := rand.New(rand.NewPCG(14, 14))
	for _, tc := range []struct {
		typ                        metal.KVType
		heads, kvHeads, hd, bs, nb int
		runs                       [][2]int // first position, tokens
	}{
		{metal.KVF16, 4, 2, 32, 4, 16, [][2]int{{29 - attnRunTokens - 3, attnRunTokens + 3}}},
		{metal.KVF16, 4, 2, 32, 16, 24, [][2]int{{3, 5}, {120, 12}, {127, 2}, {250, 5}, {300, 16}, {361, 6}}},
		{metal.KVF16, 16, 8, 128, 16, 20, [][2]int{{251, 5}, {126, 4}, {60, 3}, {300, 2}}},
		{metal.KVF16, 6, 2, 64, 32, 12, [][2]int{{200, 3}, {255, 4}, {5, 7}}},
		{metal.KVQ8, 4, 2, 32, 16, 24, [][2]int{{3, 5}, {120, 12}, {127, 2}, {250, 5}, {300, 16}, {361, 6}}},
		{metal.KVQ8, 16, 8, 128, 16, 20, [][2]int{{251, 5}, {126, 4}, {60, 3}, {300, 2}}},
		{metal.KVQ8, 6, 2, 64, 32, 12, [][2]int{{200, 3}, {255, 4}, {5, 7}}},
		// Heads of 256: two chunks of every set's value sums.
		{metal.KVF16, 4, 2, 256, 16, 12, [][2]int{{150, 3}, {77, 2}}},
		{metal.KVQ8, 4, 2, 256, 16, 12, [][2]int{{150, 3}, {77, 2}}},
		{metal.KVBF16, 4, 2, 32, 16, 24, [][2]int{{3, 5}, {120, 12}, {127, 2}, {250, 5}, {300, 16}, {361, 6}}},
		{metal.KVBF16, 16, 8, 128, 16, 20, [][2]int{{251, 5}, {126, 4}, {60, 3}, {300, 2}}},
		{metal.KVBF16, 6, 2, 64, 32, 12, [][2]int{{200, 3}, {255, 4}, {5, 7}}},
		{metal.KVBF16, 4, 2, 256, 8, 24, [][2]int{{150, 3}, {77, 2}}},
		{metal.KVBF16, 4, 4, 32, 8, 48, [][2]int{{29 - attnRunTokens - 3, attnRunTokens + 3}, {200, 1}}}, // one head per KV head
		{metal.KVF32, 4, 2, 32, 4, 16, [][2]int{{29 - attnRunTokens - 3, attnRunTokens + 3}}},
		{metal.KVF32, 4, 2, 32, 16, 24, [][2]int{{3, 5}, {120, 12}, {127, 2}, {250, 5}, {300, 16}, {361, 6}}},
		{metal.KVF32, 16, 8, 128, 16, 20, [][2]int{{251, 5}, {126, 4}, {60, 3}, {300, 2}}},
		{metal.KVF32, 6, 2, 64, 32, 12, [][2]int{{200, 3}, {255, 4}, {5, 7}}},
	} {
		kv := randKVLayer(rng, tc.typ, tc.nb, tc.bs, tc.kvHeads, tc.hd)
		perm := rng.Perm(tc.nb)
		seqA, seqB := make([]int32, tc.nb), make([]int32, tc.nb)
		for i := range seqA {
			seqA[i], seqB[i] = int32(perm[i]), int32(perm[tc.nb-1-i])
		}
		var rows []metal.AttnRow
		for _, run := range tc.runs {
			for p := run[0]; p < run[0]+run[1]; p++ {
				rows = append(rows, metal.AttnRow{Pos: int32(p), Blocks: seqA})
			}
		}
		for _, p := range []int32{2, 30, 9} {
			rows = append(rows, metal.AttnRow{Pos: p, Blocks: seqB})
		}
		rows = append(rows, metal.AttnRow{Pos: 5, Blocks: seqA})
		heads, kvHeads, hd := tc.heads, tc.kvHeads, tc.hd
		q := randVec(rng, len(rows)*heads*hd)
		// Every kernel set, portable last, and each agrees with it.
		var results [][]float32
		sets := append(availableFused(), portableFused())
		for si, set := range sets {
			be := NewWithOptions(Options{Threads: 2})
			be.f = set
			got := make([]float32, len(q))
			be.Attention(got, q, kv, rows, heads, kvHeads, hd)
			if si == len(sets)-1 {
				for ri, res := range results {
					for i, v := range got {
						if math.Float32bits(res[i]) != math.Float32bits(v) {
							t.Fatalf("%+v: out[%d] = %v with the %s kernels, %v portable", tc, i, res[i], sets[ri].name, v)
						}
					}
				}
			}
			results = append(results, got)
			checkRowsAlone(t, fmt.Sprintf("%+v %s", tc, set.name), be, got, q, kv, rows, heads, kvHeads, hd)
			be.Close()
		}
	}
}

// checkRowsAlone fails t unless each of rows, computed alone by be, is got
// (their batch's outputs) bit for bit.
func checkRowsAlone(t *testing.T, label string, be *Backend, got, q []float32, kv *metal.KVLayer, rows []metal.AttnRow, heads, kvHeads, hd int) {
	t.Helper()
	one := make([]float32, heads*hd)
	for r, row := range rows {
		be.Attention(one, q[r*heads*hd:(r+1)*heads*hd], kv, []metal.AttnRow{row}, heads, kvHeads, hd)
		for i, v := range one {
			if w := got[r*heads*hd+i]; math.Float32bits(w) != math.Float32bits(v) {
				t.Fatalf("%s: row %d (pos %d): out[%d] = %v in the batch, %v alone", label, r, row.Pos, i, w, v)
			}
		}
	}
}

// TestAttentionIgnoresUnwrittenSlots: the slots of a sequence's blocks
// past its last token hold whatever their last owner left, here NaN keys
// and infinite values; a run of tokens reads whole groups of eight keys
// in place, some of them past its context, and must come out as the
// portable kernels compute it (which read no slot past the context):
// finite, and the same bits. (In a bf16 cache the values of the slot
// after an odd context are zero: WriteKV cleared them with the pair's
// first slot. Its keys are not.)
func TestAttentionIgnoresUnwrittenSlots(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 15))
	const heads, kvHeads, hd, bs, nb = 16, 8, 128, 16, 20
	for _, typ := range []metal.KVType{metal.KVF16, metal.KVQ8, metal.KVBF16, metal.KVF32} {
		for _, run := range [][2]int{{256, 5}, {251, 5}, {3, 5}, {130, 1}, {121, 9}, {300, 16}, {250, 3}} {
			kv := randKVLayer(rng, typ, nb, bs, kvHeads, hd)
			table := identityTable(nb)
			for s := run[0] + run[1]; s < nb*bs; s++ {
				for h := range kvHeads {
					k, v := kv.K[kv.KVIndex(int32(s), h):], kv.V[kv.VIndex(int32(s), h):]
					n, vstep := hd, 1
					nan, inf := uint16(0x7e00), uint16(0x7c00) // float16 NaN, +Inf
					switch typ {
					case metal.KVQ8:
						k, v, n = kv.K[kv.ScaleIndex(int32(s), h):], kv.V[kv.ScaleIndex(int32(s), h):], hd/metal.KVGroup
					case metal.KVBF16:
						nan, inf, vstep = 0x7fc0, 0x7f80, 2
						if s%2 == 1 && s == run[0]+run[1] {
							inf = 0
						}
					case metal.KVF32:
						kf, vf := metal.Float32s(k[:2*hd]), metal.Float32s(v[:2*hd])
						for i := range hd {
							kf[i], vf[i] = float32(math.NaN()), float32(math.Inf(1))
						}
						continue
					}
					for i := range n {
						k[i], v[i*vstep] = nan, inf
					}
				}
			}
			var rows []metal.AttnRow
			for p := run[0]; p < run[0]+run[1]; p++ {
				rows = append(rows, metal.AttnRow{Pos: int32(p), Blocks: table})
			}
			q := randVec(rng, len(rows)*heads*hd)
			want := make([]float32, len(q))
			ref := NewWithOptions(Options{Threads: 1, Portable: true})
			ref.Attention(want, q, kv, rows, heads, kvHeads, hd)
			ref.Close()
			for i, v := range want {
				if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
					t.Fatalf("%v run %v: portable out[%d] = %v", typ, run, i, v)
				}
			}
			for _, set := range availableFused() {
				be := NewWithOptions(Options{Threads: 2})
				be.f = set
				got := make([]float32, len(q))
				be.Attention(got, q, kv, rows, heads, kvHeads, hd)
				be.Close()
				for i := range got {
					if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
						t.Fatalf("%v run %v %s: out[%d] = %v, portable %v", typ, run, set.name, i, got[i], want[i])
					}
				}
			}
		}
	}
}

// TestAttentionInterleavedCache: a layer of a cache whose layers are
// interleaved block by block (metal.NewKVCacheIn, as models lay out the
// KV memory a backend provides) stores and attends exactly as a layer of
// its own holding the same keys and values, with every kernel set, for
// decode rows and for runs read in place or widened.
func TestAttentionInterleavedCache(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 15))
	for _, tc := range []struct {
		typ                        metal.KVType
		heads, kvHeads, hd, bs, nb int
	}{{metal.KVF16, 16, 8, 128, 16, 12}, {metal.KVF16, 4, 2, 32, 4, 16}, {metal.KVQ8, 16, 8, 128, 16, 12}, {metal.KVQ8, 4, 2, 32, 4, 16},
		{metal.KVBF16, 16, 8, 128, 16, 12}, {metal.KVBF16, 4, 2, 32, 8, 16}, {metal.KVF32, 16, 8, 128, 16, 12}, {metal.KVF32, 4, 2, 32, 4, 16}} {
		const layers, layer = 3, 1
		own := metal.NewKVLayer(tc.typ, tc.nb, tc.bs, tc.kvHeads, tc.hd)
		shared := metal.NewKVCacheIn(make([]uint16, metal.KVCacheElems(tc.typ, layers, tc.nb, tc.bs, tc.kvHeads, tc.hd)), tc.typ, layers, tc.nb, tc.bs, tc.kvHeads, tc.hd)
		inter := &shared.Layers[layer]
		slots := make([]int32, tc.nb*tc.bs)
		for i := range slots {
			slots[i] = int32(i)
		}
		dim := tc.kvHeads * tc.hd
		k, v := randVec(rng, len(slots)*dim), randVec(rng, len(slots)*dim)
		table := make([]int32, tc.nb)
		for i, p := range rng.Perm(tc.nb) {
			table[i] = int32(p)
		}
		var rows []metal.AttnRow
		for _, p := range []int{tc.nb*tc.bs - 1, 37, 5} { // decode rows, each its own sequence
			rows = append(rows, metal.AttnRow{Pos: int32(p), Blocks: slices.Clone(table)})
		}
		for p := 40; p < 45; p++ { // a verify row's run
			rows = append(rows, metal.AttnRow{Pos: int32(p), Blocks: table})
		}
		q := randVec(rng, len(rows)*tc.heads*tc.hd)
		for _, set := range append(availableFused(), portableFused()) {
			be := NewWithOptions(Options{Threads: 2})
			be.f = set
			be.WriteKV(&own, k, v, slots)
			be.WriteKV(inter, k, v, slots)
			want, got := make([]float32, len(q)), make([]float32, len(q))
			be.Attention(want, q, &own, rows, tc.heads, tc.kvHeads, tc.hd)
			be.Attention(got, q, inter, rows, tc.heads, tc.kvHeads, tc.hd)
			for i := range want {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					t.Fatalf("%+v %s: out[%d] = %v from the interleaved cache, %v from a layer of its own", tc, set.name, i, got[i], want[i])
				}
			}
			be.Close()
		}
		for l := range shared.Layers { // the other layers' stretches untouched
			if l == layer {
				continue
			}
			for _, s := range [][]uint16{shared.Layers[l].K, shared.Layers[l].V} {
				for slot := range slots {
					for h := range tc.kvHeads {
						i := shared.Layers[l].KVIndex(int32(slot), h)
						if slices.ContainsFunc(s[i:i+shared.Layers[l].RowElems()], func(x uint16) bool { return x != 0 }) {
							t.Fatalf("%+v: writing layer %d changed layer %d", tc, layer, l)
						}
					}
				}
			}
		}
	}
}

// TestAttentionScratchBytesBounds: after decode steps and a run of
// tokens at a context of n positions, in blocks as small as each set's
// tables allow, the workers' scores scratch and decode tables fit in
// AttentionScratchBytes for that context.
func TestAttentionScratchBytesBounds(t *testing.T) {
	const heads, kvHeads, hd, n = 4, 2, 128, 203
	rng := rand.New(rand.NewPCG(15, 15))
	for _, set := range append(availableFused(), portableFused()) {
		for _, typ := range []metal.KVType{metal.KVF16, metal.KVQ8, metal.KVBF16, metal.KVF32} {
			bs := max(set.tabs.group, 4)
			if typ == metal.KVBF16 {
				bs = metal.BF16Positions
			}
			nb := (n + bs - 1) / bs
			kv := randKVLayer(rng, typ, nb, bs, kvHeads, hd)
			be := NewWithOptions(Options{Threads: 2})
			be.f = set
			q, out := randVec(rng, attnRunTokens*heads*hd), make([]float32, attnRunTokens*heads*hd)
			var run []metal.AttnRow
			for i := range attnRunTokens {
				run = append(run, metal.AttnRow{Pos: int32(n - attnRunTokens + i), Blocks: identityTable(nb)})
			}
			for p := n - 3; p < n; p++ {
				be.Attention(out[:heads*hd], q[:heads*hd], kv, []metal.AttnRow{{Pos: int32(p), Blocks: identityTable(nb)}}, heads, kvHeads, hd)
			}
			be.Attention(out, q, kv, run, heads, kvHeads, hd)
			var scratch, tables int64
			for w := range be.Threads() {
				scratch += 4 * int64(cap(be.scratch[w]))
				tables += int64(unsafe.Sizeof(decodeStretch{})) * int64(cap(be.heads[w].stretches))
			}
			if set.tabs.group > 0 && tables == 0 && typ != metal.KVBF16 && typ != metal.KVF32 {
				t.Errorf("%s %v: no decode tables were made", set.name, typ)
			}
			bound := be.AttentionScratchBytes(heads, hd, n)
			if scratch+tables > bound {
				t.Errorf("%s %v: scratch %d + tables %d bytes, more than AttentionScratchBytes %d", set.name, typ, scratch, tables, bound)
			}
			if g := set.tabs.group; g > 0 {
				if share := int64(be.Threads()) * 2 * heads * int64((n+g-1)/g) * int64(unsafe.Sizeof(decodeStretch{})); tables > share {
					t.Errorf("%s %v: tables %d bytes, more than their share of the bound %d", set.name, typ, tables, share)
				}
			}
			be.Close()
		}
	}
}
