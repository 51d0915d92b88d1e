package cpu

import "github.com/splash-inference/splash/metal"

// runPass is one tokens call: the query heads of KV heads kh0..kh1-1 for
// the tokens of one run, with the worker's scratch laid out for them.
//
// The widened chunk starts a whole number of 64-byte lines past the
// scores' start, so when the scratch is line-aligned (Go allocates slices
// past 32 KiB page-aligned) its vector loads never split a line. Each
// (token, head) has room for the scores of every position of the run's
// context up to a whole group of eight (stride), where its own positions
// end sooner: see each.
type runPass struct {
	t                *attentionTask
	f                *fusedKernels
	hd, bs, group    int
	r0, r1, nmax     int // the run's rows and the positions its context spans
	h0, h1, kh0, kh1 int
	chunk, stride    int
	all              []float32 // every (token, head)'s room, then the widened chunk
	// widened is one KV head's keys or values of one chunk, widened to
	// float32 once for the group's query heads of every token in the run;
	// over a KVBF16 cache, the queries as bfloat16 (qb).
	widened []float32
	// hl lists the query heads of one many-head call, the groups of
	// positions of one in-place call, and the run's segments: a run of
	// several sequences (attention_shared.go) walks the positions their
	// tables share, then each sequence's own, each segment through its
	// table (blocks) up to its end (limit).
	hl     *headLists
	segs   []runSegment
	blocks []int32
	limit  int
}

// newRunPass lays out the worker's scratch for run run's tokens and KV
// heads kh0..kh1-1: the rooms, then a widened chunk, or for a KVBF16 cache
// (bf16) the queries as bfloat16.
func (t *attentionTask) newRunPass(run, kh0, kh1, worker int, bf16 bool) runPass {
	group := t.heads / t.kvHeads
	r0, r1, nmax := t.span(run)
	p := runPass{t: t, f: &t.b.f, hd: t.hd, bs: t.kv.BlockSize, group: group, r0: r0, r1: r1, nmax: nmax,
		h0: kh0 * group, h1: kh1 * group, kh0: kh0, kh1: kh1, chunk: t.chunk(), stride: (nmax + 7) &^ 7}
	nh := (r1 - r0) * (p.h1 - p.h0)
	nscores := (nh*p.stride + 15) &^ 15
	tail := p.chunk * p.hd
	if bf16 {
		tail = (nh*p.hd + 1) / 2
	}
	p.all = t.b.workerScratch(worker, nscores+tail)
	p.widened = p.all[nscores:]
	p.hl = &t.b.heads[worker]
	p.segs = t.segments(p.hl, run)
	p.blocks, p.limit = t.rows[r0].Blocks, nmax
	return p
}

// size is token r's context: its positions 0..Pos.
func (p *runPass) size(r int) int { return int(p.t.rows[r].Pos) + 1 }

// room is token r's scores (then weights) of query head h for every
// position of the run.
func (p *runPass) room(r, h int) []float32 {
	off := ((r-p.r0)*(p.h1-p.h0) + h - p.h0) * p.stride
	return p.all[off : off+p.stride]
}

// scores is token r's scores of query head h over its own positions.
func (p *runPass) scores(r, h int) []float32 { return p.room(r, h)[:p.size(r)] }

func (p *runPass) q(r, h int) []float32 {
	t := p.t
	return t.q[(r*t.heads+h)*p.hd : (r*t.heads+h+1)*p.hd]
}

func (p *runPass) out(r, h int) []float32 {
	t := p.t
	return t.out[(r*t.heads+h)*p.hd : (r*t.heads+h+1)*p.hd]
}

// next is the chunk and KV head read after KV head kh of chunk c. Chunks
// start at whole blocks: position p = j·bs of a chunk is the start of
// block j of the table, whose KV head kh is min(bs, limit−p)·hd contiguous
// elements of K or V from BlockIndex.
func (p *runPass) next(c, kh int) (int, int) {
	if kh+1 == p.kh1 {
		return c + p.chunk, p.kh0
	}
	return c, kh + 1
}

// walk hands positions p0.. of KV head kh of the chunk at c of K or V to
// read a block at a time (positions q..e-1, of block blk), and after each
// block prefetches the same positions of the chunk read next (the next KV
// head's, or the next chunk's first): spread over the reads, the
// prefetches do not stall them the way one burst for the whole next chunk
// does.
func (p *runPass) walk(src []uint16, c, p0, kh int, read func(q, e int, blk int32)) {
	bs, limit := p.bs, p.limit
	cend := min(c+p.chunk, limit)
	nc, nkh := p.next(c, kh)
	for q := p0; q < cend; {
		j := q / bs
		e := min((j+1)*bs, cend)
		read(q, e, p.blocks[j])
		if np := nc + q - c; np < min(nc+p.chunk, limit) {
			p.t.prefetchRows(src, p.blocks[np/bs], nkh, np%bs, min(np+e-q, limit)-np)
		}
		q = e
	}
}

// widen converts positions p0.. of KV head kh of the chunk at c of K or V
// into the scratch.
func (p *runPass) widen(src []uint16, c, p0, kh int) []float32 {
	w := p.widened[:(min(c+p.chunk, p.limit)-p0)*p.hd]
	p.walk(src, c, p0, kh, func(q, e int, blk int32) {
		p.t.widenRows(w[(q-p0)*p.hd:(e-p0)*p.hd], src, blk, kh, q%p.bs)
	})
	return w
}

// groups lists positions c..p1-1 (whole groups of eight in whole blocks)
// of KV head kh of src for the in-place kernels, each group with the same
// positions of the chunk read next to prefetch (itself when there are
// none).
func (p *runPass) groups(src []uint16, c, p1, kh int) []halfGroup {
	nc, nkh := p.next(c, kh)
	return p.t.groupTable(p.hl, src, p.blocks, c, p1, nc-c, nkh, kh, p.limit, false)
}

// fetch prefetches KV head kh of the chunk at c of K or V, if any.
func (p *runPass) fetch(src []uint16, c, kh int) {
	if c >= p.limit {
		return
	}
	for j, q := c/p.bs, c; q < min(c+p.chunk, p.limit); j, q = j+1, q+p.bs {
		p.t.prefetchRows(src, p.blocks[j], kh, 0, min(q+p.bs, p.limit)-q)
	}
}

// fetchFirst points blocks and limit at the first segment and asks for
// its first chunk of src, which each does not.
func (p *runPass) fetchFirst(src []uint16) {
	p.blocks, p.limit = p.segs[0].blocks, p.segs[0].c1
	p.fetch(src, p.segs[0].c0, p.kh0)
}

// softmax turns token r's scores into weights, and clears its outputs for
// the value sums.
func (p *runPass) softmax(r int) {
	for h := p.h0; h < p.h1; h++ {
		s := p.scores(r, h)
		p.f.softmaxRow(s)
		clear(p.room(r, h)[len(s):]) // see each
		clear(p.out(r, h))
	}
}

// chunkVisit is what each does with a chunk of K or V: list(r, kh, c, end)
// lists token r's query heads of KV head kh over positions c..end-1;
// visit takes a widened (or float32, in place) stretch for the listed
// heads; half, when the set reads float16 in place for the listed heads,
// takes whole groups of eight positions, and with whole also the last
// group whole.
type chunkVisit struct {
	list  func(r, kh, c, end int)
	visit func(w []float32)
	half  func(tab []halfGroup)
	whole bool
}

// each hands each chunk of each KV head of src (K or V) to the kernels
// with the query heads of every token of the run that sees the chunk, so
// that one call loads each key or value once for all of them (a SIMD
// set's kernels serve several heads per load). Where the set reads
// float16 in place for that many heads (v.half not nil), half takes every
// whole group of eight positions of the run's context, read in place, and
// only the last few positions are widened for visit; with v.whole, half
// also takes the last group whole, positions past the context and all
// (cache slots no token of the run has written yet: their scores are never
// read).
//
// Every token gets the chunk's positions up to the end of the run's
// context, though the first tokens of a verify row see a few less: one
// call for all of them costs far less than one more per token. A token's
// scores past its own positions are computed but never used: the softmax
// stops at its length and masks them with zero weights (a cached key or
// value there is one of the run's own: written, finite), and adding 0·v
// leaves a sum's bits as they are.
//
// The segments are walked in turn, each with its rows (all of them, for a
// run's shared positions), the first chunk of the first already asked for
// (fetchFirst).
func (p *runPass) each(src []uint16, v chunkVisit) {
	for i, sg := range p.segs {
		p.blocks, p.limit = sg.blocks, sg.c1
		if i > 0 {
			p.fetch(src, sg.c0, p.kh0)
		}
		for c := sg.c0; c < p.limit; c += p.chunk {
			p.eachChunk(src, sg, c, v)
		}
	}
}

// eachChunk is each's work on the chunk at c of segment sg.
func (p *runPass) eachChunk(src []uint16, sg runSegment, c int, v chunkVisit) {
	cend, seen := min(c+p.chunk, p.limit), 0
	for r := sg.r0; r < sg.r1; r++ {
		if p.size(r) > c {
			seen++
		}
	}
	p0 := c // the first position widened
	if heads := seen * p.group; v.half != nil && heads >= 2 && heads%2 == 0 && p.hd%32 == 0 && p.bs%8 == 0 {
		p0 = c + (cend-c)&^7
		if v.whole {
			p0 = c + (cend-c+7)&^7
		}
	}
	for kh := p.kh0; kh < p.kh1; kh++ {
		if p0 > c {
			p.listSeen(sg, c, kh, c, p0, v.list)
			v.half(p.groups(src, c, p0, kh))
		}
		switch {
		case p0 < cend && p.t.kv.Type == metal.KVF32:
			// A float32 cache's blocks are read in place, one call per
			// block: for every run the same calls over the same positions.
			p.walk(src, c, p0, kh, func(q, e int, blk int32) {
				p.listSeen(sg, c, kh, q, e, v.list)
				i := p.t.kv.BlockIndex(blk, kh) + q%p.bs*2*p.hd
				v.visit(metal.Float32s(src[i : i+(e-q)*2*p.hd]))
			})
		case p0 < cend:
			w := p.widen(src, c, p0, kh)
			p.listSeen(sg, c, kh, p0, cend, v.list)
			v.visit(w)
		}
	}
}

// listSeen lists the heads of KV head kh of every token of segment sg
// that sees the chunk at c, over positions from..to-1.
func (p *runPass) listSeen(sg runSegment, c, kh, from, to int, list func(r, kh, c, end int)) {
	p.hl.out, p.hl.in = p.hl.out[:0], p.hl.in[:0]
	for r := sg.r0; r < sg.r1; r++ {
		if p.size(r) > c {
			list(r, kh, from, to)
		}
	}
}

// several computes a run of several tokens (or a decode step the set has
// no in-place kernels for): the scores of every chunk, the softmax, then
// the value sums, reading whole groups of positions in place where the
// set can (see each).
func (p *runPass) several() {
	f, hl, hd, t := p.f, p.hl, p.hd, p.t
	f16 := t.kv.Type == metal.KVF16
	keys := chunkVisit{whole: true,
		list: func(r, kh, c, end int) {
			for h := kh * p.group; h < (kh+1)*p.group; h++ {
				hl.out = append(hl.out, p.room(r, h)[c:end])
				hl.in = append(hl.in, p.q(r, h))
			}
		},
		visit: func(k []float32) { f.scoresHeads(hl.out, hl.in, k, hd, t.scale) },
	}
	values := chunkVisit{
		list: func(r, kh, c, end int) {
			for h := kh * p.group; h < (kh+1)*p.group; h++ {
				hl.out = append(hl.out, p.out(r, h))
				hl.in = append(hl.in, p.room(r, h)[c:end])
			}
		},
		visit: func(v []float32) { f.weightedSumHeads(hl.out, hl.in, v, hd) },
	}
	if f.scoresHeadsHalf != nil && f16 {
		keys.half = func(tab []halfGroup) { f.scoresHeadsHalf(hl.out, hl.in, tab, hd, t.scale) }
	}
	if f.weightedSumHeadsHalf != nil && f16 {
		values.half = func(tab []halfGroup) { f.weightedSumHeadsHalf(hl.out, hl.in, tab, hd) }
	}
	p.fetchFirst(t.kv.K)
	p.each(t.kv.K, keys)
	p.fetchFirst(t.kv.V) // read during the softmax
	for r := p.r0; r < p.r1; r++ {
		p.softmax(r)
	}
	p.each(t.kv.V, values)
}

// decodesInPlace reports whether the run is a decode step (one token) with
// whole pairs of query heads over a cache the set reads in place: float16
// (scoresHalf2, weightedSum2Half) or q8 (its q8 pair kernels).
func (p *runPass) decodesInPlace() bool {
	typ := p.t.kv.Type
	inPlace := (typ == metal.KVF16 && p.f.scoresHalf2 != nil) || (typ == metal.KVQ8 && p.f.scoresQ8Pair != nil)
	return p.r1-p.r0 == 1 && p.group%2 == 0 && inPlace
}

// decode computes a decode step reading the keys and values in place
// instead of widening them: with nobody else to read a widened chunk, its
// stores and reloads cost as much as the products (BenchmarkAttention).
// The cache is walked in the same order as when widening, one block of one
// KV head (a stretch) at a time, and each kernel call prefetches, paced
// with its reads, the stretch that comes next. Sets with kernels over
// tables of stretches take a whole segment of a KV head per call instead
// (decodeByTables).
//
// A float32 cache has no loops of its own: its blocks go in place through
// the float32 kernels every set has (several).
func (p *runPass) decode() {
	t, f, hd, r := p.t, p.f, p.hd, p.r0
	tmp := p.widened[:8*hd]
	if t.byTables() {
		t.decodeByTables(r, p.kh0, p.kh1, p.hl, p.scores, p.q, p.out, p.softmax, tmp)
		return
	}
	firstV := t.kv.V[t.kv.BlockIndex(p.blocks[0], p.kh0):]
	p.fetch(t.kv.K, 0, p.kh0)
	if t.kv.Type == metal.KVF16 {
		p.walkHalf(t.kv.K, firstV, func(k []uint16, q, e, h int, next []uint16) {
			f.scoresHalf2(p.scores(r, h)[q:e], p.scores(r, h+1)[q:e], p.q(r, h), p.q(r, h+1), k, hd, t.scale, tmp, next)
		})
		p.softmax(r)
		p.walkHalf(t.kv.V, firstV, func(v []uint16, q, e, h int, next []uint16) {
			f.weightedSum2Half(p.out(r, h), p.out(r, h+1), v, hd, p.scores(r, h)[q:e], p.scores(r, h+1)[q:e], tmp, next)
		})
		return
	}
	// A q8 stretch is its rows, then their scales (metal.KVLayer); the
	// kernels prefetch the next stretch's rows, and its scales are asked
	// for here.
	rows := p.bs * t.kv.RowElems()
	p.walkHalf(t.kv.K, firstV, func(k []uint16, q, e, h int, next []uint16) {
		prefetch(&next[rows], 2*(len(k[rows:t.kv.HeadElems()])))
		f.scoresQ8Pair(p.scores(r, h)[q:e], p.scores(r, h+1)[q:e], p.q(r, h), p.q(r, h+1), metal.Int8s(k[:rows]), k[rows:], t.scale, tmp, metal.Int8s(next))
	})
	p.softmax(r)
	p.walkHalf(t.kv.V, firstV, func(v []uint16, q, e, h int, next []uint16) {
		prefetch(&next[rows], 2*(len(v[rows:t.kv.HeadElems()])))
		f.weightedSumQ8Pair(p.out(r, h), p.out(r, h+1), metal.Int8s(v[:rows]), v[rows:], p.scores(r, h)[q:e], p.scores(r, h+1)[q:e], tmp, metal.Int8s(next))
	})
}

// walkHalf hands each stretch of src to visit for each pair of query heads
// of a decode step, with the stretch after it (after, past the last), and
// first asks for the first lines of the stretch decodeLead further on.
func (p *runPass) walkHalf(src, after []uint16, visit func(s []uint16, q, e, h int, next []uint16)) {
	t, bs, n := p.t, p.bs, p.size(p.r0)
	step := func(u stretch) stretch { return u.step(bs, p.chunk, n, p.kh1, p.kh0) }
	var prev []uint16
	pp, pe, pkh := 0, 0, 0
	flush := func(next []uint16) {
		for h := pkh * p.group; h < (pkh+1)*p.group; h += 2 {
			visit(prev, pp, pe, h, next)
		}
	}
	lead := stretch{0, p.kh0, 0}
	for range decodeLead {
		lead = step(lead)
	}
	for u := (stretch{0, p.kh0, 0}); u.c < n; u = step(u) {
		if lead.c < n {
			prefetch(&src[t.kv.BlockIndex(p.blocks[lead.p/bs], lead.kh)], decodeLeadBytes)
			lead = step(lead)
		}
		s := src[t.kv.BlockIndex(p.blocks[u.p/bs], u.kh):]
		if prev != nil {
			flush(s)
		}
		prev, pp, pe, pkh = s, u.p, min(u.p+bs, n), u.kh
	}
	flush(after)
}
