package cpu

import (
	"math"
	"unsafe"

	"github.com/splash-inference/splash/metal"
)

// Attention over a KVBF16 cache (metal.KVBF16). Its arithmetic is
// VDPBF16PS's, which on AVX512_BF16 CPUs does two multiply-adds per
// float32 lane per instruction (about twice VFMADD231PS's rate in a
// register loop) and needs no conversion of the
// cached keys and values: one lane takes two bfloat16 products, the odd
// element's first, each a fused multiply-add rounded to nearest even with
// subnormal results (and a subnormal accumulator) flushed to zero (dpBF16;
// Intel's definition, which Zen 5 computes bit for bit). So:
//
//   - queries are rounded to bfloat16 once per call (narrow), and a
//     score is the dot product of 16-dimension blocks in eight lanes, lane
//     l taking dimensions 2l+1 then 2l of each block, folded as scoresRef
//     folds them (dotBF16Ref);
//   - softmax weights are rounded to bfloat16 in place after the softmax,
//     and a value sum takes positions in pairs 2m, 2m+1 (the cache stores
//     them interleaved, metal.KVLayer.VIndex): for each dimension, the
//     pair's weight 2m+1 times its value, then weight 2m's (sumPairsRef).
//
// As in vLLM and FlashAttention for bf16 models, products see bfloat16
// inputs and accumulate in float32.
//
// A pair whose second position is past the context has weight zero
// there, and its value slot is zero or finite: WriteKV clears a slot's
// partner when it writes the first of a pair, so nobody's old value (an
// Inf, say) can meet a zero weight and make a NaN.

// bf16Kernels are a set's loops over a KVBF16 cache.
type bf16Kernels struct {
	// simd says the loops are a SIMD set's, not the portable ones.
	simd bool
	// narrow sets dst[i] = metal.F32ToBF16DAZ(src[i]). dst may start at
	// src's first byte (in place: each store lands on bytes already read).
	narrow func(dst []uint16, src []float32)
	// narrowPairs sets dst[2i+odd] = metal.F32ToBF16DAZ(src[i]): one
	// slot's values into its pair's interleaved words.
	narrowPairs func(dst []uint16, src []float32, odd int)
	// scoresHeads sets out[i][p] = dotBF16Ref(q[i], key p)·scale for the
	// 8·len(tab) positions of tab's groups of eight rows of hd keys, for
	// every head i (each q[i] hd bfloat16).
	scoresHeads func(out [][]float32, q [][]uint16, tab []halfGroup, hd int, scale float32)
	// sumsHeads adds to each o[i] (hd floats) the value pairs of tab's
	// groups (four pairs of positions a group, each pair hd 32-bit words),
	// pairs of them, weighted by w[i][2m] and w[i][2m+1] (sumPairsRef).
	sumsHeads func(o [][]float32, w [][]uint16, tab []halfGroup, pairs, hd int)
	// tabScores and tabSums are a decode step's pair kernels over tables
	// of stretches (attention_tables.go): the scores of two heads against
	// every group of eight positions of each stretch (the last one
	// whole), one stretch after another, and the value sums of every pair
	// of each stretch, over chunks×128 dimensions (stride bytes a pair).
	// nil where the set has none.
	tabScores func(out0, out1 *float32, q0, q1 *uint16, tab *decodeStretch, n, blocks int, scale float32)
	tabSums   func(o0, o1 *float32, tab *decodeStretch, n int, w0, w1 *uint16, chunks, stride int)
}

// SIMDAttention reports whether the kernel set attends over a cache of
// type t with SIMD loops (every set but the portable one has them for
// every type; a bf16 cache's portable loops are many times slower).
func (b *Backend) SIMDAttention(t metal.KVType) bool {
	if t == metal.KVBF16 {
		return b.f.bf16.simd
	}
	return b.f.name != portableFused().name
}

func portableBF16() bf16Kernels {
	return bf16Kernels{narrow: narrowBF16Ref, narrowPairs: narrowPairsRef, scoresHeads: scoresHeadsBF16Ref, sumsHeads: sumsHeadsBF16Ref}
}

// flushSubnormal is x, or zero of its sign when x is below float32's
// normal range.
func flushSubnormal(x float32) float32 {
	if b := math.Float32bits(x); b&0x7f800000 == 0 {
		return math.Float32frombits(b & 0x80000000)
	}
	return x
}

// dpBF16 is one lane of VDPBF16PS: acc + a1·b1, then + a0·b0.
func dpBF16(acc float32, a0, a1, b0, b1 uint16) float32 {
	acc = flushSubnormal(fma32(metal.BF16ToF32(a1), metal.BF16ToF32(b1), flushSubnormal(acc)))
	return flushSubnormal(fma32(metal.BF16ToF32(a0), metal.BF16ToF32(b0), acc))
}

// dotBF16Ref is q·k for bfloat16 rows of a multiple of 16 elements.
func dotBF16Ref(q, k []uint16) float32 {
	var s [8]float32
	for i := 0; i+16 <= len(q); i += 16 {
		for l := range s {
			s[l] = dpBF16(s[l], q[i+2*l], q[i+2*l+1], k[i+2*l], k[i+2*l+1])
		}
	}
	return ((s[0] + s[4]) + (s[2] + s[6])) + ((s[1] + s[5]) + (s[3] + s[7]))
}

// sumPairsRef adds to o[j] the pairs of v (len(o) interleaved words a
// pair: v[2(m·len(o)+j)+i] is position 2m+i's element j) weighted by w.
func sumPairsRef(o []float32, v, w []uint16) {
	hd := len(o)
	for m := 0; 2*m < len(w); m++ {
		pair := v[2*m*hd : 2*(m+1)*hd]
		for j := range o {
			o[j] = dpBF16(o[j], w[2*m], w[2*m+1], pair[2*j], pair[2*j+1])
		}
	}
}

func narrowBF16Ref(dst []uint16, src []float32) {
	for i, x := range src[:len(dst)] {
		dst[i] = metal.F32ToBF16DAZ(x)
	}
}

func narrowPairsRef(dst []uint16, src []float32, odd int) {
	for i, x := range src {
		dst[2*i+odd] = metal.F32ToBF16DAZ(x)
	}
}

func scoresHeadsBF16Ref(out [][]float32, q [][]uint16, tab []halfGroup, hd int, scale float32) {
	for g, grp := range tab {
		k := unsafe.Slice(grp.k, 8*hd)
		for i := range out {
			for p := range 8 {
				out[i][8*g+p] = dotBF16Ref(q[i], k[p*hd:(p+1)*hd]) * scale
			}
		}
	}
}

func sumsHeadsBF16Ref(o [][]float32, w [][]uint16, tab []halfGroup, pairs, hd int) {
	for m := 0; m < pairs; m += 4 {
		v, n := unsafe.Slice(tab[m/4].k, 8*hd), min(4, pairs-m)
		for i := range o {
			sumPairsRef(o[i][:hd], v, w[i][2*m:2*(m+n)])
		}
	}
}

// checkSumsBF16 reports whether a value-sums call has any work, and
// panics unless its arguments fit one another (checkHeadsBF16, and pairs
// within tab's groups).
func checkSumsBF16(o [][]float32, w [][]uint16, tab []halfGroup, pairs, hd int) bool {
	if pairs == 0 || len(o) == 0 {
		return false
	}
	if pairs > 4*len(tab) {
		panic("cpu: bf16 value pairs beyond their table")
	}
	checkHeadsBF16(o, w, hd, 2*pairs)
	return true
}

// checkHeadsBF16 panics unless every out[i] holds m floats and every
// in[i] n bfloat16, for a head size the kernels take.
func checkHeadsBF16(out [][]float32, in [][]uint16, m, n int) {
	if len(in) != len(out) {
		panic("cpu: bf16 attention heads and inputs of unequal counts")
	}
	for i := range out {
		if len(out[i]) != m || len(in[i]) != n {
			panic("cpu: bf16 attention heads of unequal lengths")
		}
	}
}

// bf16View is the memory of f as twice as many uint16.
func bf16View(f []float32) []uint16 {
	if len(f) == 0 {
		return nil
	}
	return unsafe.Slice((*uint16)(unsafe.Pointer(&f[0])), 2*len(f))
}

// tokensBF16 is tokens for a KVBF16 cache: the query heads of KV heads
// kh0..kh1-1 for the tokens of run run, every token's keys and values
// read in place, chunk by chunk and KV head by KV head as tokens walks
// them, a group of eight positions (of keys) or four pairs (of values)
// at a time for all the heads of the tokens that see it. Block sizes are
// multiples of eight (metal.KVType.Check), so a group never leaves its
// block; scores past a token's context are computed from the cache's
// slots there and never used (the softmax stops at its length).
//
// Each (token, head) has room for the scores of whole groups of eight up
// to the run's context (runPass.stride floats), then its weights as
// bfloat16 in place; the queries as bfloat16 follow.
func (t *attentionTask) tokensBF16(run, kh0, kh1, worker int) {
	p := t.newRunPass(run, kh0, kh1, worker, true)
	k, hl, hd := &p.f.bf16, p.hl, p.hd
	for r := p.r0; r < p.r1; r++ {
		for h := p.h0; h < p.h1; h++ {
			k.narrow(p.qb(r, h), p.q(r, h))
		}
	}
	if p.r1-p.r0 == 1 && p.group%2 == 0 && hd%128 == 0 && k.tabScores != nil {
		t.decodeBF16(p.r0, kh0, kh1, hl, p.room, p.qb, p.out, p.weightsBF16)
		return
	}
	p.walkBF16(t.kv.K, func(r, h, c, end int) {
		hl.out = append(hl.out, p.room(r, h)[c:c+(end-c+7)&^7])
		hl.q16 = append(hl.q16, p.qb(r, h))
	}, func(tab []halfGroup, _, _ int) { k.scoresHeads(hl.out, hl.q16, tab, hd, t.scale) })
	for r := p.r0; r < p.r1; r++ {
		p.weightsBF16(r)
	}
	p.walkBF16(t.kv.V, func(r, h, c, end int) {
		hl.out = append(hl.out, p.out(r, h))
		hl.q16 = append(hl.q16, bf16View(p.room(r, h))[c:c+(end-c+1)&^1])
	}, func(tab []halfGroup, c, end int) { k.sumsHeads(hl.out, hl.q16, tab, (end-c+1)/2, hd) })
}

// qb is token r's query of head h as bfloat16.
func (p *runPass) qb(r, h int) []uint16 {
	at := (r-p.r0)*(p.h1-p.h0) + h - p.h0
	return bf16View(p.widened)[at*p.hd : (at+1)*p.hd]
}

// walkBF16 hands each chunk of each KV head of src to visit with its
// table of groups (positions c..end-1 rounded up to a whole group),
// having listed the heads of every token that sees it (list). As a
// decode step's walk does (decodeLead), it asks for the first lines of
// the block decodeLead blocks on as it starts each block, which long runs
// gain from (BenchmarkAttention).
//
// A run of several sequences (attention_shared.go) walks its segments in
// turn, each with its table: the shared positions, then each sequence's
// own.
func (p *runPass) walkBF16(src []uint16, list func(r, h, c, end int), visit func(tab []halfGroup, c, end int)) {
	for _, sg := range p.segs {
		p.walkSegmentBF16(src, sg, list, visit)
	}
}

// walkSegmentBF16 is walkBF16 over segment sg.
func (p *runPass) walkSegmentBF16(src []uint16, sg runSegment, list func(r, h, c, end int), visit func(tab []halfGroup, c, end int)) {
	t, hl, bs, chunk := p.t, p.hl, p.bs, p.chunk
	blocks, n := sg.blocks, sg.c1
	t.prefetchHead(src, blocks, sg.c0, min(sg.c0+chunk, n), p.kh0)
	lead := stretch{sg.c0, p.kh0, sg.c0}
	for range decodeLead {
		lead = lead.step(bs, chunk, n, p.kh1, p.kh0)
	}
	for c := sg.c0; c < n; c += chunk {
		end := min(c+chunk, n)
		for kh := p.kh0; kh < p.kh1; kh++ {
			for q := c; q < end && lead.c < n; q += bs {
				prefetch(&src[t.kv.BlockIndex(blocks[lead.p/bs], lead.kh)], decodeLeadBytes)
				lead = lead.step(bs, chunk, n, p.kh1, p.kh0)
			}
			nc, nkh := p.next(c, kh)
			tab := t.groupTable(hl, src, blocks, c, c+(end-c+7)&^7, nc-c, nkh, kh, n, sg.r1-sg.r0 == 1)
			hl.out, hl.q16 = hl.out[:0], hl.q16[:0]
			for r := sg.r0; r < sg.r1; r++ {
				if p.size(r) > c {
					for h := kh * p.group; h < (kh+1)*p.group; h++ {
						list(r, h, c, end)
					}
				}
			}
			visit(tab, c, end)
		}
	}
}

// weightsBF16 turns token r's scores into its softmax weights as bfloat16
// in place, zero past its context up to the run's (the one past an odd
// context cleared with the room's floats, the rest after narrowing), and
// clears its outputs for the value sums.
func (p *runPass) weightsBF16(r int) {
	k := &p.f.bf16
	n, even := p.size(r), (p.size(r)+1)&^1
	for h := p.h0; h < p.h1; h++ {
		s := p.room(r, h)
		p.f.softmaxRow(s[:n])
		clear(s[n:even])
		k.narrow(bf16View(s)[:even], s[:even])
		clear(bf16View(s)[even : (p.nmax+1)&^1])
		clear(p.out(r, h))
	}
}

// decodeBF16 is a decode step (token r alone) over KV heads kh0..kh1-1 by
// the set's table kernels, as decodeByTables walks a float16 or q8 cache:
// for each pair of query heads, one scores call and one value-sums call
// per segment of a KV head. room, qb and out are tokensBF16's views of the
// token's scores (then weights), bfloat16 queries and outputs; weights
// turns its scores into weights.
func (t *attentionTask) decodeBF16(r, kh0, kh1 int, hl *headLists, room func(r, h int) []float32, qb func(r, h int) []uint16, out func(r, h int) []float32, weights func(r int)) {
	k, kv, hd := &t.b.f.bf16, t.kv, t.hd
	bs, group := kv.BlockSize, t.heads/t.kvHeads
	n, blocks := int(t.rows[r].Pos)+1, t.rows[r].Blocks
	tabK, tabV, seg, ahead := t.decodeTables(hl, blocks, kh0, kh1, n)
	prefetchFirst(tabK, ahead, 2*kv.HeadElems())
	segments(n, seg, bs, kh0, kh1, func(c, e, kh, i, nst int) {
		for h := kh * group; h < (kh+1)*group; h += 2 {
			k.tabScores(&room(r, h)[c], &room(r, h+1)[c], &qb(r, h)[0], &qb(r, h+1)[0], &tabK[i], nst, hd/16, t.scale)
		}
	})
	prefetchFirst(tabV, ahead, 2*kv.HeadElems())
	weights(r)
	segments(n, seg, bs, kh0, kh1, func(c, e, kh, i, nst int) {
		for h := kh * group; h < (kh+1)*group; h += 2 {
			w0, w1 := bf16View(room(r, h)), bf16View(room(r, h+1))
			k.tabSums(&out(r, h)[0], &out(r, h+1)[0], &tabV[i], nst, &w0[c], &w1[c], hd/128, 4*hd)
		}
	})
}

// groupTable lists positions c..p1-1 (whole groups of eight in whole
// blocks) of KV head kh of src in hl.tab for the in-place kernels, each
// group with the same positions of the chunk read next to prefetch: d
// positions on, in KV head nkh (itself when there are none). With near,
// the group a block later in the walk instead (the next block of the
// same KV head, or the first of the chunk read next): a decode step reads
// the cache faster so, but a run of several tokens slower
// (BenchmarkAttention).
func (t *attentionTask) groupTable(hl *headLists, src []uint16, blocks []int32, c, p1, d, nkh, kh, nmax int, near bool) []halfGroup {
	bs, hd, he := t.kv.BlockSize, t.hd, t.kv.HeadElems()
	stride := t.kv.BlockStride
	if stride == 0 {
		stride = t.kv.KVHeads * he
	}
	// at is the index of position off of block j of the table in KV head
	// h. Chunks start at whole blocks (c and d are multiples of bs), so a
	// group and the one it prefetches sit at the same offset of their
	// blocks: no divisions per group.
	at := func(j, h, off int) int {
		i := int(blocks[j])*stride + h*he + off*hd
		_ = src[i+8*hd-1]
		return i
	}
	tab := hl.tab[:0]
	for p, j, off := c, c/bs, 0; p < p1; p += 8 {
		i := at(j, kh, off)
		g := halfGroup{k: &src[i], pf: &src[i]}
		np, nj, pkh := p+d, j+d/bs, nkh
		if near {
			np, nj = c+d+off, (c+d)/bs
			if p+bs < p1 {
				np, nj, pkh = p+bs, j+1, kh
			}
		}
		if np < nmax {
			g.pf = &src[at(nj, pkh, off)]
		}
		tab = append(tab, g)
		if off += 8; off == bs {
			j, off = j+1, 0
		}
	}
	hl.tab = tab
	return tab
}

// prefetchHead asks for positions start..end-1 (start a whole block) of
// KV head kh of src.
func (t *attentionTask) prefetchHead(src []uint16, blocks []int32, start, end, kh int) {
	bs := t.kv.BlockSize
	for p := start; p < end; p += bs {
		t.prefetchRows(src, blocks[p/bs], kh, 0, min(bs, end-p))
	}
}

// writeBF16 is WriteKV for a KVBF16 cache: keys as rows, values into
// their pair's interleaved words, after clearing the partner of each slot
// that starts a pair (written later, if at all, by the same sequence)
// unless the next slot written is that partner.
func (b *Backend) writeBF16(kv *metal.KVLayer, k, v []float32, slots []int32) {
	d, hd := kv.Dim(), kv.HeadDim
	for i, s := range slots {
		if s%2 == 1 || (i+1 < len(slots) && slots[i+1] == s+1) {
			continue
		}
		for h := range kv.KVHeads {
			o := kv.VIndex(s+1, h)
			pair := kv.V[o : o+2*hd-1]
			for j := 0; j < len(pair); j += 2 {
				pair[j] = 0
			}
		}
	}
	for i, s := range slots {
		for h := range kv.KVHeads {
			x := i*d + h*hd
			o := kv.KVIndex(s, h)
			b.f.bf16.narrow(kv.K[o:o+hd], k[x:x+hd])
			o = kv.VIndex(s, h) &^ 1 // the pair's first word
			b.f.bf16.narrowPairs(kv.V[o:o+2*hd], v[x:x+hd], int(s%2))
		}
	}
}

// stretch is one block of one KV head in the order attention walks the
// cache: its chunk, KV head and first position.
type stretch struct{ c, kh, p int }

// step returns the stretch walked after u (its chunk at or past n at the
// end), in blocks of bs positions, chunks of chunk, KV heads kh0..kh1-1.
func (u stretch) step(bs, chunk, n, kh1, kh0 int) stretch {
	if u.p += bs; u.p < min(u.c+chunk, n) {
		return u
	}
	if u.kh++; u.kh < kh1 {
		u.p = u.c
		return u
	}
	return stretch{c: u.c + chunk, kh: kh0, p: u.c + chunk}
}
