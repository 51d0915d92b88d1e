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
// of run run.
func (t *attentionTask) tokens(run, kh0, kh1, worker int) {
	f, hd, bs := &t.b.f, t.hd, t.kv.BlockSize
	group := t.heads / t.kvHeads
	r0, r1, nmax := t.span(run)
	h0, h1 := kh0*group, kh1*group
	chunk := t.chunk()
	// The widened chunk starts a whole number of 64-byte lines past the
	// scores' start, so when the scratch is line-aligned (Go allocates
	// slices past 32 KiB page-aligned) its vector loads never split a line.
	//
	// Each (token, head) has room for the scores of every position of the
	// run's context up to a whole group of eight (stride), where its own
	// positions end sooner: see each.
	stride := (nmax + 7) &^ 7
	nscores := ((r1-r0)*(h1-h0)*stride + 15) &^ 15
	all := t.b.workerScratch(worker, nscores+chunk*hd)
	// One KV head's keys or values of one chunk, widened to float32 once
	// for the group's query heads of every token in the run.
	widened := all[nscores:]
	size := func(r int) int { return int(t.rows[r].Pos) + 1 }
	// room is token r's scores (then weights) of query head h for every
	// position; scores, those of its own positions.
	room := func(r, h int) []float32 {
		off := ((r-r0)*(h1-h0) + h - h0) * stride
		return all[off : off+stride]
	}
	scores := func(r, h int) []float32 { return room(r, h)[:size(r)] }
	q := func(r, h int) []float32 { return t.q[(r*t.heads+h)*hd : (r*t.heads+h+1)*hd] }
	out := func(r, h int) []float32 { return t.out[(r*t.heads+h)*hd : (r*t.heads+h+1)*hd] }
	// hl lists the query heads of one many-head call, the groups of
	// positions of one in-place call, and the run's segments: a run of
	// several sequences (attention_shared.go) walks the positions their
	// tables share, then each sequence's own, each segment through its
	// table (blocks) up to its end (limit).
	hl := &t.b.heads[worker]
	segs := t.segments(hl, run)
	blocks, limit := t.rows[r0].Blocks, nmax
	f32 := t.kv.Type == metal.KVF32

	// Chunks start at whole blocks: position p = j·bs of a chunk is the
	// start of block j of the table, whose KV head kh is min(bs, limit−p)·hd
	// contiguous elements of K or V from BlockIndex.
	//
	// next is the chunk and KV head read after KV head kh of chunk c.
	next := func(c, kh int) (int, int) {
		if kh+1 == kh1 {
			return c + chunk, kh0
		}
		return c, kh + 1
	}
	// walk hands positions p0.. of KV head kh of the chunk at c of K or V
	// to read a block at a time (positions p..e-1, of block blk), and
	// after each block prefetches the same positions of the chunk read
	// next (the next KV head's, or the next chunk's first): spread over
	// the reads, the prefetches no longer stall them the way one burst for
	// the whole next chunk did (five tokens at context 1024: 0.88 of the
	// time).
	walk := func(src []uint16, c, p0, kh int, read func(p, e int, blk int32)) {
		cend := min(c+chunk, limit)
		nc, nkh := next(c, kh)
		for p := p0; p < cend; {
			j := p / bs
			e := min((j+1)*bs, cend)
			read(p, e, blocks[j])
			if np := nc + p - c; np < min(nc+chunk, limit) {
				t.prefetchRows(src, blocks[np/bs], nkh, np%bs, min(np+e-p, limit)-np)
			}
			p = e
		}
	}
	// widen converts positions p0.. of KV head kh of the chunk at c of K
	// or V into the scratch.
	widen := func(src []uint16, c, p0, kh int) []float32 {
		w := widened[:(min(c+chunk, limit)-p0)*hd]
		walk(src, c, p0, kh, func(p, e int, blk int32) {
			t.widenRows(w[(p-p0)*hd:(e-p0)*hd], src, blk, kh, p%bs)
		})
		return w
	}
	// groups lists positions c..p1-1 (whole groups of eight in whole
	// blocks) of KV head kh of src for the in-place kernels, each group
	// with the same positions of the chunk read next to prefetch (itself
	// when there are none).
	groups := func(src []uint16, c, p1, kh int) []halfGroup {
		nc, nkh := next(c, kh)
		return t.groupTable(hl, src, blocks, c, p1, nc-c, nkh, kh, limit, false)
	}
	// fetch prefetches KV head kh of the chunk at c of K or V, if any.
	fetch := func(src []uint16, c, kh int) {
		if c >= limit {
			return
		}
		for j, p := c/bs, c; p < min(c+chunk, limit); j, p = j+1, p+bs {
			t.prefetchRows(src, blocks[j], kh, 0, min(p+bs, limit)-p)
		}
	}
	// each hands each chunk of each KV head of src (K or V) to the
	// kernels with the query heads of every token of the run that sees
	// the chunk, listed by list(r, kh, c, end) over positions c..end-1, so
	// that one call loads each key or value once for all of them (a SIMD
	// set's kernels serve several heads per load). Where the set reads
	// float16 in place for that many heads (half not nil), half takes
	// every whole group of eight positions of the run's context, read in
	// place, and only the last few positions are widened for visit; with
	// whole set, half also takes the last group whole, positions past the
	// context and all (cache slots no token of the run has written yet:
	// their scores are never read).
	//
	// Every token gets the chunk's positions up to the end of the run's
	// context, though the first tokens of a verify row see a few less:
	// one call for all of them costs far less than one more per token.
	// A token's scores past its own positions are computed but never
	// used: the softmax stops at its length and masks them with zero
	// weights (a cached key or value there is one of the run's own:
	// written, finite), and adding 0·v leaves a sum's bits as they are.
	//
	// The segments are walked in turn, each with its rows (all of them,
	// for a run's shared positions), the first chunk of the first already
	// asked for (fetch).
	each := func(src []uint16, list func(r, kh, c, end int), visit func(w []float32), half func(tab []halfGroup), whole bool) {
		var sg runSegment
		// all lists the heads of every token of the segment that sees
		// chunk c, positions from..to-1.
		all := func(c, kh, from, to int) {
			hl.out, hl.in = hl.out[:0], hl.in[:0]
			for r := sg.r0; r < sg.r1; r++ {
				if size(r) > c {
					list(r, kh, from, to)
				}
			}
		}
		for i := range segs {
			sg = segs[i]
			blocks, limit = sg.blocks, sg.c1
			if i > 0 {
				fetch(src, sg.c0, kh0)
			}
			for c := sg.c0; c < limit; c += chunk {
				cend, seen := min(c+chunk, limit), 0
				for r := sg.r0; r < sg.r1; r++ {
					if size(r) > c {
						seen++
					}
				}
				p0 := c // the first position widened
				if heads := seen * group; half != nil && heads >= 2 && heads%2 == 0 && hd%32 == 0 && bs%8 == 0 {
					p0 = c + (cend-c)&^7
					if whole {
						p0 = c + (cend-c+7)&^7
					}
				}
				for kh := kh0; kh < kh1; kh++ {
					if p0 > c {
						all(c, kh, c, p0)
						half(groups(src, c, p0, kh))
					}
					switch {
					case p0 < cend && f32:
						// A float32 cache's blocks are read in place, one
						// call per block: for every run the same calls
						// over the same positions.
						walk(src, c, p0, kh, func(p, e int, blk int32) {
							all(c, kh, p, e)
							i := t.kv.BlockIndex(blk, kh) + p%bs*2*hd
							visit(metal.Float32s(src[i : i+(e-p)*2*hd]))
						})
					case p0 < cend:
						w := widen(src, c, p0, kh)
						all(c, kh, p0, cend)
						visit(w)
					}
				}
			}
		}
	}
	// fetchFirst points blocks and limit at the first segment and asks
	// for its first chunk of src, which each does not.
	fetchFirst := func(src []uint16) {
		blocks, limit = segs[0].blocks, segs[0].c1
		fetch(src, segs[0].c0, kh0)
	}

	// softmax turns token r's scores into weights, and clears its outputs
	// for the value sums.
	softmax := func(r int) {
		for h := h0; h < h1; h++ {
			s := scores(r, h)
			f.softmaxRow(s)
			clear(room(r, h)[len(s):]) // see each
			clear(out(r, h))
		}
	}

	// A run of one token (a decode step) with whole pairs of query heads
	// reads the keys and values as float16 in place (scoresHalf2,
	// weightedSum2Half) instead of widening them: with nobody else to read a
	// widened chunk, its stores and reloads cost as much as the products
	// (BenchmarkAttention). The cache is
	// walked in the same order as when widening, one block of one KV head (a
	// stretch) at a time, and each kernel call prefetches, paced with its
	// reads, the stretch that comes next.
	//
	// A q8 cache is read the same way, by the set's q8 pair kernels, where
	// it has them. Sets with kernels over tables of stretches take a whole
	// segment of a KV head per call instead (decodeByTables).
	//
	// A float32 cache has no loops of its own: its blocks go in place
	// through the float32 kernels every set has (scoresHeads,
	// weightedSumHeads; see each).
	f16, q8 := t.kv.Type == metal.KVF16, t.kv.Type == metal.KVQ8
	if inPlace := (f16 && f.scoresHalf2 != nil) || (q8 && f.scoresQ8Pair != nil); r1-r0 == 1 && group%2 == 0 && inPlace {
		r, n := r0, size(r0)
		tmp := widened[:8*hd]
		if t.byTables() {
			t.decodeByTables(r, kh0, kh1, hl, scores, q, out, softmax, tmp)
			return
		}
		step := func(u stretch) stretch { return u.step(bs, chunk, n, kh1, kh0) }
		// walkHalf hands each stretch of src to visit for each pair of
		// query heads, with the stretch after it (after, past the last),
		// and first asks for the first lines of the stretch decodeLead
		// further on.
		walkHalf := func(src, after []uint16, visit func(s []uint16, p, e, h int, next []uint16)) {
			var prev []uint16
			pp, pe, pkh := 0, 0, 0
			flush := func(next []uint16) {
				for h := pkh * group; h < (pkh+1)*group; h += 2 {
					visit(prev, pp, pe, h, next)
				}
			}
			lead := stretch{0, kh0, 0}
			for range decodeLead {
				lead = step(lead)
			}
			for u := (stretch{0, kh0, 0}); u.c < n; u = step(u) {
				if lead.c < n {
					prefetch(&src[t.kv.BlockIndex(blocks[lead.p/bs], lead.kh)], decodeLeadBytes)
					lead = step(lead)
				}
				s := src[t.kv.BlockIndex(blocks[u.p/bs], u.kh):]
				if prev != nil {
					flush(s)
				}
				prev, pp, pe, pkh = s, u.p, min(u.p+bs, n), u.kh
			}
			flush(after)
		}
		firstV := t.kv.V[t.kv.BlockIndex(blocks[0], kh0):]
		fetch(t.kv.K, 0, kh0)
		if f16 {
			walkHalf(t.kv.K, firstV, func(k []uint16, p, e, h int, next []uint16) {
				f.scoresHalf2(scores(r, h)[p:e], scores(r, h+1)[p:e], q(r, h), q(r, h+1), k, hd, t.scale, tmp, next)
			})
			softmax(r)
			walkHalf(t.kv.V, firstV, func(v []uint16, p, e, h int, next []uint16) {
				f.weightedSum2Half(out(r, h), out(r, h+1), v, hd, scores(r, h)[p:e], scores(r, h+1)[p:e], tmp, next)
			})
			return
		}
		// A q8 stretch is its rows, then their scales (metal.KVLayer); the
		// kernels prefetch the next stretch's rows, and its scales are
		// asked for here.
		rows := bs * t.kv.RowElems()
		walkHalf(t.kv.K, firstV, func(k []uint16, p, e, h int, next []uint16) {
			prefetch(&next[rows], 2*(len(k[rows:t.kv.HeadElems()])))
			f.scoresQ8Pair(scores(r, h)[p:e], scores(r, h+1)[p:e], q(r, h), q(r, h+1), metal.Int8s(k[:rows]), k[rows:], t.scale, tmp, metal.Int8s(next))
		})
		softmax(r)
		walkHalf(t.kv.V, firstV, func(v []uint16, p, e, h int, next []uint16) {
			prefetch(&next[rows], 2*(len(v[rows:t.kv.HeadElems()])))
			f.weightedSumQ8Pair(out(r, h), out(r, h+1), metal.Int8s(v[:rows]), v[rows:], scores(r, h)[p:e], scores(r, h+1)[p:e], tmp, metal.Int8s(next))
		})
		return
	}

	// A run of several tokens reads whole groups of positions in place
	// where the set can (see each).
	var scoresHalf, sumsHalf func(tab []halfGroup)
	if f.scoresHeadsHalf != nil && f16 {
		scoresHalf = func(tab []halfGroup) { f.scoresHeadsHalf(hl.out, hl.in, tab, hd, t.scale) }
	}
	if f.weightedSumHeadsHalf != nil && f16 {
		sumsHalf = func(tab []halfGroup) { f.weightedSumHeadsHalf(hl.out, hl.in, tab, hd) }
	}
	fetchFirst(t.kv.K)
	each(t.kv.K, func(r, kh, c, end int) {
		for h := kh * group; h < (kh+1)*group; h++ {
			hl.out = append(hl.out, room(r, h)[c:end])
			hl.in = append(hl.in, q(r, h))
		}
	}, func(k []float32) { f.scoresHeads(hl.out, hl.in, k, hd, t.scale) }, scoresHalf, true)
	fetchFirst(t.kv.V) // read during the softmax
	for r := r0; r < r1; r++ {
		softmax(r)
	}
	each(t.kv.V, func(r, kh, c, end int) {
		for h := kh * group; h < (kh+1)*group; h++ {
			hl.out = append(hl.out, out(r, h))
			hl.in = append(hl.in, room(r, h)[c:end])
		}
	}, func(v []float32) { f.weightedSumHeads(hl.out, hl.in, v, hd) }, sumsHalf, false)
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
