package cpu

import (
	"fmt"
	"math"
	"unsafe"

	"github.com/splash-inference/splash/metal"
)

// WriteKV stores keys and values as float16, rounded to nearest even, or
// for a KVQ8 cache as int8 with a float16 scale per group of 32
// (metal.QuantizeKV), or for a KVF32 cache as they are, each KV head
// where the layout puts it (metal.KVLayer).
//
// A decode step's slots are cold: the whole model's weights stream through
// the caches between one step's writes and the next, and each slot's KV
// heads are 2·KVHeads short stretches far apart, each stored only once its
// lines came from memory. So the lines of the next writeKVLead slots are
// asked for before the current one is written (BenchmarkWriteKV).
func (b *Backend) WriteKV(kv *metal.KVLayer, k, v []float32, slots []int32) {
	if kv.Type == metal.KVBF16 {
		b.writeBF16(kv, k, v, slots)
		return
	}
	d, hd, row := kv.Dim(), kv.HeadDim, kv.RowElems()
	ask := func(s int32) {
		for h := range kv.KVHeads {
			o := kv.KVIndex(s, h)
			prefetch(&kv.K[o], 2*row)
			prefetch(&kv.V[o], 2*row)
		}
	}
	for _, s := range slots[:min(len(slots), writeKVLead)] {
		ask(s)
	}
	for i, s := range slots {
		if i+writeKVLead < len(slots) {
			ask(slots[i+writeKVLead])
		}
		for h := range kv.KVHeads {
			o, x := kv.KVIndex(s, h), i*d+h*hd
			switch kv.Type {
			case metal.KVF32:
				copy(metal.Float32s(kv.K[o:o+row]), k[x:x+hd])
				copy(metal.Float32s(kv.V[o:o+row]), v[x:x+hd])
				continue
			case metal.KVQ8:
				sc, ns := kv.ScaleIndex(s, h), hd/metal.KVGroup
				b.f.quantizeKV(metal.Int8s(kv.K[o:o+row]), kv.K[sc:sc+ns], k[x:x+hd])
				b.f.quantizeKV(metal.Int8s(kv.V[o:o+row]), kv.V[sc:sc+ns], v[x:x+hd])
				continue
			}
			b.f.toF16(kv.K[o:o+hd], k[x:x+hd])
			b.f.toF16(kv.V[o:o+hd], v[x:x+hd])
		}
	}
}

// writeKVLead is how many slots ahead of its stores WriteKV asks for their
// lines.
const writeKVLead = 16

// attentionTask computes (run, KV head) pairs, where a run is up to
// attnRunTokens consecutive query tokens of one sequence (a verify row's
// k+1 tokens, a prefill chunk), or of sequences whose tables share a long
// prefix (attention_shared.go): for each pair, every query head of the KV
// head's group for every token of the run, with a two-pass softmax over
// each token's cached positions 0..Pos, scores kept in the worker's
// scratch. The tokens of a run share their keys and values, so each cache
// block is read from memory once for all of them, not once per token.
//
// A run walks chunks of cache blocks in the outer loop and its KV heads
// and tokens in the inner ones. One KV head of a block is one contiguous
// stretch of float16 (metal.KVLayer); a chunk of them is widened once into
// the worker's scratch and then serves every query head of the group for
// every token of the run from the core's caches, while the next chunk is
// prefetched. The scores and the value sums of all those query heads are
// each one call (scoresHeads, weightedSumHeads), so that a SIMD set's
// kernels load each key or value block into a register once for several
// heads and tokens, rather than streaming the chunk from L2 once per
// head pair.
//
// Each (token, head)'s arithmetic, and so its result, is the same whatever
// run it is in (batch invariance): its scores are independent dot
// products, and its value sum adds the positions in order either way.
type attentionTask struct {
	b                  *Backend
	out, q             []float32
	kv                 *metal.KVLayer
	rows               []metal.AttnRow
	runs               []int32 // first row of each run, then len(rows)
	shared             []int32 // per run: positions all its rows' tables share (0: one table)
	heads, kvHeads, hd int
	scale              float32
}

const (
	// attnGrain is the number of KV heads a worker takes at a time: a
	// balance between long reads (a block's KV heads are adjacent) and
	// spreading one token over workers.
	attnGrain = 4
	// attnRunTokens bounds a run: each run widens every chunk of the
	// context once, and its scores (tokens × the worker's query heads ×
	// context floats) are the worker's scratch. Longer runs widen each
	// chunk fewer times, but past 16 the gain is small and the scratch
	// doubles again (8 MiB per worker at context 8192 for 32).
	attnRunTokens = 16
	// attnChunk is the number of positions (whole cache blocks, at least
	// one) of one KV head widened to float32 at a time, or for a decode
	// step read in place before moving to the next KV head: each kernel
	// call covers a chunk (or a block of it). Longer chunks mean fewer
	// calls and longer runs in each KV head's stretch of the cache, and
	// the widened chunk (64 KiB at a head size of 128) is still read from
	// L2. Walking one block of all the worker's KV heads at a time
	// (sequential reads) instead is slower on two threads.
	attnChunk = 128
	// decodeLead and decodeLeadBytes: a decode step, as it starts on a
	// stretch of the cache, asks for the first decodeLeadBytes of the
	// stretch decodeLead further on. Each kernel call prefetches the whole
	// next stretch as it reads, but a stretch (a block of one KV head,
	// 4 KiB at 16 positions of 128) takes less time to compute than memory
	// takes to answer; the first lines, asked for early, start the
	// hardware's stream through the rest of its page. A whole stretch
	// asked for early gains nothing: it is the stream's start that
	// counts.
	decodeLead      = 3
	decodeLeadBytes = 128
)

// AttentionScratchBytes bounds the scratch Attention grows its workers'
// buffers to for contexts of up to context positions: each holds one
// run's scores for up to every query head and a widened chunk, and, where
// the set has kernels over tables of stretches, a decode step's tables:
// keys and values of at most every head, a stretch per block, and a block
// at least a group of the kernels' positions.
func (b *Backend) AttentionScratchBytes(heads, headDim, context int) int64 {
	// After the scores: a widened chunk, or a KVBF16 run's queries.
	per := 4 * int64(attnScratchFloats(heads, headDim, context))
	if g := b.f.tabs.group; g > 0 {
		per += 2 * int64(heads) * int64((context+g-1)/g) * int64(unsafe.Sizeof(decodeStretch{}))
	}
	return int64(b.Threads()) * per
}

func (b *Backend) Attention(out, q []float32, kv *metal.KVLayer, rows []metal.AttnRow, heads, kvHeads, headDim int) {
	if kv.KVHeads != kvHeads || kv.HeadDim != headDim {
		panic(fmt.Sprintf("cpu: attention over %d KV heads of %d, but the cache layer holds %d of %d", kvHeads, headDim, kv.KVHeads, kv.HeadDim))
	}
	runs, shared := b.attnRuns[:0], b.attnShared[:0]
	for r := range rows {
		if r > 0 && r-int(runs[len(runs)-1]) < attnRunTokens {
			if sameTable(rows[r].Blocks, rows[r-1].Blocks) {
				continue
			}
			if s := sharedPositions(kv, rows[runs[len(runs)-1]:r+1], shared[len(shared)-1]); s > 0 {
				shared[len(shared)-1] = s
				continue
			}
		}
		runs, shared = append(runs, int32(r)), append(shared, 0)
	}
	runs = append(runs, int32(len(rows)))
	b.attnRuns, b.attnShared = runs, shared
	t := &b.attn
	*t = attentionTask{b: b, out: out, q: q, kv: kv, rows: rows, runs: runs, shared: shared, heads: heads, kvHeads: kvHeads, hd: headDim,
		scale: float32(1 / math.Sqrt(float64(headDim)))}
	b.pool.run(t, (len(runs)-1)*kvHeads, attnGrain)
	*t = attentionTask{}
}

// headLists are the query heads of one scoresHeads call (their scores and
// queries) or weightedSumHeads call (their outputs and weights), and the
// groups of positions of an in-place call, kept per worker so that
// listing them allocates only the first time.
type headLists struct {
	out, in   [][]float32
	q16       [][]uint16 // a KVBF16 call's queries or weights (tokensBF16)
	tab       []halfGroup
	stretches []decodeStretch // a decode step's tables (decodeByTables)
	segs      []runSegment    // a run's segments (tokensBF16)
}

// sameTable reports whether two rows read the same block table (the rows
// of one sequence in a batch share its slice).
func sameTable(a, b []int32) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

func (t *attentionTask) run(lo, hi, worker int) {
	for lo < hi {
		// The pairs [lo, end) of one run: KV heads kh0..kh1-1.
		run := lo / t.kvHeads
		end := min(hi, (run+1)*t.kvHeads)
		if t.kv.Type == metal.KVBF16 {
			t.tokensBF16(run, lo-run*t.kvHeads, end-run*t.kvHeads, worker)
		} else {
			t.tokens(run, lo-run*t.kvHeads, end-run*t.kvHeads, worker)
		}
		lo = end
	}
}

// span is run run's rows r0..r1-1 and the positions their context spans
// (the largest Pos, plus one).
func (t *attentionTask) span(run int) (r0, r1, nmax int) {
	r0, r1 = int(t.runs[run]), int(t.runs[run+1])
	for r := r0; r < r1; r++ {
		nmax = max(nmax, int(t.rows[r].Pos)+1)
	}
	return r0, r1, nmax
}

// chunk is the positions of a chunk: the whole blocks of about attnChunk
// positions.
func (t *attentionTask) chunk() int {
	bs := t.kv.BlockSize
	return max(1, attnChunk/bs) * bs
}

// tokens computes the query heads of KV heads kh0..kh1-1 for the tokens
// of run run (runPass).
func (t *attentionTask) tokens(run, kh0, kh1, worker int) {
	p := t.newRunPass(run, kh0, kh1, worker, false)
	if p.decodesInPlace() {
		p.decode()
		return
	}
	p.several()
}

// widenRows widens len(dst)/HeadDim consecutive positions of KV head kh of
// block blk of src (the layer's K or V), from position i0 of the block,
// into dst: float16 or q8 values, exactly, as float32.
func (t *attentionTask) widenRows(dst []float32, src []uint16, blk int32, kh, i0 int) {
	kv, hd := t.kv, t.hd
	base := kv.BlockIndex(blk, kh)
	if kv.Type != metal.KVQ8 {
		t.b.f.widen(dst, hd, src[base+i0*hd:], hd)
		return
	}
	n, row, ns := len(dst)/hd, kv.RowElems(), hd/metal.KVGroup
	sc := base + kv.BlockSize*row + i0*ns
	t.b.f.dequantKV(dst, metal.Int8s(src[base+i0*row:base+(i0+n)*row]), src[sc:sc+n*ns])
}

// prefetchRows asks for n consecutive positions of KV head kh of block blk
// of src from position i0 of the block: their rows, and a q8 cache's
// scales.
func (t *attentionTask) prefetchRows(src []uint16, blk int32, kh, i0, n int) {
	kv := t.kv
	base, row := kv.BlockIndex(blk, kh), kv.RowElems()
	i, e := base+i0*row, base+(i0+n)*row
	_ = src[e-1]
	prefetch(&src[i], 2*(e-i))
	if kv.Type == metal.KVQ8 {
		ns := t.hd / metal.KVGroup
		i, e = base+kv.BlockSize*row+i0*ns, base+kv.BlockSize*row+(i0+n)*ns
		_ = src[e-1]
		prefetch(&src[i], 2*(e-i))
	}
}
