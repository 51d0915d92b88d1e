package cpu

import "github.com/splash-inference/splash/metal"

// A decode step's attention reads each KV head's keys and values as a run
// of stretches, one per cache block, in position order. Handing the
// kernels one stretch per call costs a Go walk, a call and the kernel's
// set-up per stretch, a large share of the step's attention at the
// default 32-token blocks with everything in cache. Sets with
// stretchKernels instead take a table
// of stretches (decodeStretch), a segment of a KV head at a time
// (decodeSegmentBytes), and walk it themselves: the scores run on from
// stretch to stretch, the value sums stay in registers through the
// segment, and each stretch is read exactly as the one-stretch kernels
// read it, so the results are theirs bit for bit (BenchmarkAttention's doc
// has the gain). The AVX-512, AVX2 and NEON sets have them (NEON tested
// under qemu; not timed on Apple hardware).

// decodeStretch is one stretch of a table: the first element of a cache
// block's rows of one KV head (a q8 stretch: its int8 rows, then their
// scales), a stretch read later (pf: prefetched as this one is read, as
// the one-stretch kernels' next; decodeAheadBytes), the one decodeLead
// further on (its first decodeLeadBytes asked for as this one starts), and
// its positions. 32 bytes: the kernels step through the table by that.
type decodeStretch struct {
	p, pf, lead *uint16
	n           int
}

// stretchKernels are a set's pair kernels over tables of stretches: float16
// and q8 scores of the whole groups of group positions of each stretch,
// written one after another (the caller scores a table's last few
// positions), and value sums of every position in order, for head sizes
// of a multiple of chunk. Their arguments are those of the set's
// one-stretch kernels, with the table and its length where those take a
// stretch. nil fields: the set has none, and a decode step hands over one
// stretch at a time.
type stretchKernels struct {
	group, chunk int
	halfScores   func(out0, out1, q0, q1 *float32, tab *decodeStretch, n, blocks int, scale float32)
	halfSums     func(o0, o1 *float32, tab *decodeStretch, n int, w0, w1 *float32, chunks, stride int)
	q8Scores     func(out0, out1, q0, q1 *float32, tab *decodeStretch, n, blocks int, scale float32, soff int)
	q8Sums       func(o0, o1 *float32, tab *decodeStretch, n int, w0, w1 *float32, chunks, stride, soff, sstride int)
}

// byTables reports whether a decode step over kv can go by tables with
// the set's kernels.
func (t *attentionTask) byTables() bool {
	k, kv := &t.b.f.tabs, t.kv
	if k.chunk == 0 || t.hd%k.chunk != 0 || kv.BlockSize%k.group != 0 {
		return false
	}
	if kv.Type == metal.KVQ8 {
		return k.q8Scores != nil && k.q8Sums != nil
	}
	return kv.Type == metal.KVF16 && k.halfScores != nil && k.halfSums != nil
}

// stretchTable appends to tab the stretches of positions 0..n-1 of KV
// heads kh0..kh1-1 of src (the layer's K or V) with block table blocks, in
// the order a decode step reads them: segments of seg positions (whole
// blocks), each segment for every KV head before the next; each stretch's
// pf is the stretch ahead places after it and its lead the one decodeLead
// places after it (after, past the end).
func (t *attentionTask) stretchTable(tab []decodeStretch, src []uint16, blocks []int32, kh0, kh1, n, seg, ahead int, after *uint16) []decodeStretch {
	kv := t.kv
	bs, he := kv.BlockSize, kv.HeadElems()
	first := len(tab)
	for c := 0; c < n; c += seg {
		for kh := kh0; kh < kh1; kh++ {
			for p := c; p < min(c+seg, n); p += bs {
				i := kv.BlockIndex(blocks[p/bs], kh)
				_ = src[i+he-1] // the whole stretch, a q8 one's scales too: every read
				tab = append(tab, decodeStretch{p: &src[i], n: min(bs, n-p)})
			}
		}
	}
	for i := first; i < len(tab); i++ {
		tab[i].pf, tab[i].lead = after, after
		if i+ahead < len(tab) {
			tab[i].pf = tab[i+ahead].p
		}
		if i+decodeLead < len(tab) {
			tab[i].lead = tab[i+decodeLead].p
		}
	}
	return tab
}

// decodeByTables is a decode step (token r alone) over KV heads kh0..kh1-1
// by the set's stretchKernels (byTables): for each pair of query heads, one
// scores call and one value-sums call per segment of a KV head. scores, q
// and out are attentionTask.tokens' views of the token's scores, queries
// and outputs; softmax turns its scores into weights and clears its
// outputs; tmp is scratch for widening the last few positions.
func (t *attentionTask) decodeByTables(r, kh0, kh1 int, hl *headLists, scores, q, out func(r, h int) []float32, softmax func(r int), tmp []float32) {
	f, kv, hd := &t.b.f, t.kv, t.hd
	bs, group := kv.BlockSize, t.heads/t.kvHeads
	n := int(t.rows[r].Pos) + 1
	blocks := t.rows[r].Blocks
	whole := n - n%f.tabs.group // the positions the score kernels take
	q8 := kv.Type == metal.KVQ8
	rows := bs * kv.RowElems()           // elements of a stretch's rows
	soff, ns := 2*rows, hd/metal.KVGroup // a q8 stretch's scales: bytes on, per row
	tabK, tabV, seg, ahead := t.decodeTables(hl, blocks, kh0, kh1, n)
	first := func(tab []decodeStretch) { prefetchFirst(tab, ahead, 2*kv.HeadElems()) }
	first(tabK)

	segments(n, seg, bs, kh0, kh1, func(c, e, kh, i, nst int) {
		tab := tabK[i : i+nst]
		for h := kh * group; h < (kh+1)*group; h += 2 {
			s0, s1, q0, q1 := scores(r, h)[c:e], scores(r, h+1)[c:e], q(r, h), q(r, h+1)
			if q8 {
				f.tabs.q8Scores(&s0[0], &s1[0], &q0[0], &q1[0], &tab[0], nst, hd/8, t.scale, soff)
			} else {
				f.tabs.halfScores(&s0[0], &s1[0], &q0[0], &q1[0], &tab[0], nst, hd/8, t.scale)
			}
			if e <= whole {
				continue
			}
			// The last few positions, fewer than a group, in the last
			// stretch: the one-stretch kernels widen them.
			k := kv.K[kv.BlockIndex(blocks[whole/bs], kh):]
			w, j := whole-c, whole%bs
			if q8 {
				f.scoresQ8Pair(s0[w:], s1[w:], q0, q1, metal.Int8s(k[:rows])[j*hd:], k[rows+j*ns:], t.scale, tmp, metal.Int8s(k))
			} else {
				f.scoresHalf2(s0[w:], s1[w:], q0, q1, k[j*hd:], hd, t.scale, tmp, k)
			}
		}
	})
	first(tabV)
	softmax(r)
	segments(n, seg, bs, kh0, kh1, func(c, e, kh, i, nst int) {
		tab := tabV[i : i+nst]
		for h := kh * group; h < (kh+1)*group; h += 2 {
			o0, o1, w0, w1 := out(r, h), out(r, h+1), scores(r, h)[c:e], scores(r, h+1)[c:e]
			if q8 {
				f.tabs.q8Sums(&o0[0], &o1[0], &tab[0], nst, &w0[0], &w1[0], hd/f.tabs.chunk, hd, soff, 2*ns)
			} else {
				f.tabs.halfSums(&o0[0], &o1[0], &tab[0], nst, &w0[0], &w1[0], hd/f.tabs.chunk, 2*hd)
			}
		}
	})
}

// decodeTables are a decode step's tables of stretches of positions
// 0..n-1 of KV heads kh0..kh1-1 (stretchTable), keys and values, in
// hl.stretches (grown to exactly their size the first time it is too
// small: AttentionScratchBytes counts it), with their segments' positions
// and how many stretches ahead the kernels prefetch.
func (t *attentionTask) decodeTables(hl *headLists, blocks []int32, kh0, kh1, n int) (tabK, tabV []decodeStretch, seg, ahead int) {
	kv := t.kv
	bs := kv.BlockSize
	seg = max(1, decodeSegmentBytes/(2*kv.HeadElems())) * bs
	ahead = (decodeAheadBytes + 2*kv.HeadElems() - 1) / (2 * kv.HeadElems())
	firstV := &kv.V[kv.BlockIndex(blocks[0], kh0)]
	if need := 2 * (kh1 - kh0) * ((n + bs - 1) / bs); cap(hl.stretches) < need {
		hl.stretches = make([]decodeStretch, 0, need)
	}
	both := t.stretchTable(hl.stretches[:0], kv.K, blocks, kh0, kh1, n, seg, ahead, firstV)
	m := len(both)
	both = t.stretchTable(both, kv.V, blocks, kh0, kh1, n, seg, ahead, firstV)
	hl.stretches = both
	return both[:m], both[m:], seg, ahead
}

// prefetchFirst asks for the stretches of tab no kernel call prefetches:
// the first ahead ones (bytes each).
func prefetchFirst(tab []decodeStretch, ahead, bytes int) {
	for _, u := range tab[:min(ahead, len(tab))] {
		prefetch(u.p, bytes)
	}
}

// segments calls visit for each segment of a decode step's tables, in
// their order (stretchTable): positions c..e-1 of KV head kh, stretches
// i..i+nst-1 of the table.
func segments(n, seg, bs, kh0, kh1 int, visit func(c, e, kh, i, nst int)) {
	for c, i := 0, 0; c < n; c += seg {
		e := min(c+seg, n)
		nst := (e - c + bs - 1) / bs
		for kh := kh0; kh < kh1; kh, i = kh+1, i+nst {
			visit(c, e, kh, i, nst)
		}
	}
}

// decodeSegmentBytes is how much of one KV head's keys (values) a decode
// step reads before it moves to the next KV head: whole blocks, at least
// one. Longer segments mean fewer calls; q8 gains a little from longer
// ones, but float16, bound by memory, is slower with segments past 32 KiB
// (128 positions of 128, the one-stretch walk's chunks).
const decodeSegmentBytes = 32 << 10

// decodeAheadBytes is how far ahead of its reads a decode step's kernels
// prefetch, in whole stretches: the stretch at least this many bytes on
// (the one after a float16 stretch of 32 positions of 128, two after a q8
// one): q8's short stretches gain from the second one ahead, float16's do
// not (BenchmarkAttention).
const decodeAheadBytes = 8 << 10
