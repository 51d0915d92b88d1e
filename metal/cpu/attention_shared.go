package cpu

import "github.com/splash-inference/splash/metal"

// Sequences that share a prompt prefix (a fleet of agents with one system
// prompt, the prefix cache handing them the same blocks) read the same
// keys and values for it in every decode step. Attention puts the rows of
// such sequences in one run, as it does the tokens of one sequence: the
// run reads the shared positions once for all of them, a group of eight
// positions at a time for every query head that sees it, and then each
// sequence's own positions through its own table. A token's arithmetic is
// unchanged (its scores are independent dot products and its value sums
// add the positions in order, the shared ones first), so its result is
// the same bits as when it is computed alone. Runs over a float16 or q8
// cache (tokens) walk segments the same way. The shared positions are
// read once for the run rather than once per sequence, which pays most
// when they do not stay in the last-level cache between the rows that
// read them; q8, whose decode rows alone read the cache in place and in a
// run widen it, comes out about even (BenchmarkAttention's doc has the
// numbers).

const (
	// attnShareMin is the fewest shared positions worth a shared run: a
	// decode row in a run goes through the many-head loops rather than a
	// decode step's tables, which are faster on its own positions.
	attnShareMin = 256
)

// sharedPositions returns the positions, a whole number of chunks, that
// the tables of rows (a run's rows so far, then a candidate) all share,
// when that is worth one run for all of them (at least attnShareMin, and
// at least half of every row's context); else 0. prev is what the run's
// rows already share (0: they are one sequence's).
func sharedPositions(kv *metal.KVLayer, rows []metal.AttnRow, prev int32) int32 {
	first, last := rows[0].Blocks, rows[len(rows)-1].Blocks
	n := 0
	for n < len(first) && n < len(last) && first[n] == last[n] {
		n++
	}
	s := n * kv.BlockSize
	if prev > 0 {
		s = min(s, int(prev))
	}
	longest := 0
	for _, r := range rows {
		s = min(s, int(r.Pos)) // never a row's own position's block
		longest = max(longest, int(r.Pos)+1)
	}
	chunk := max(1, attnChunk/kv.BlockSize) * kv.BlockSize
	s -= s % chunk
	if s < attnShareMin || 2*s < longest {
		return 0
	}
	return int32(s)
}

// runSegment is a stretch of positions [c0, c1) that rows r0..r1-1 of a
// run read through one block table.
type runSegment struct {
	r0, r1, c0, c1 int
	blocks         []int32
}

// segments lists run run's segments in hl.segs: its rows' shared
// positions for all of them, then each sequence's own (its consecutive
// rows with one table); or, for a run of one sequence, all of it.
func (t *attentionTask) segments(hl *headLists, run int) []runSegment {
	r0, r1, nmax := t.span(run)
	segs := hl.segs[:0]
	s := int(t.shared[run])
	if s == 0 {
		segs = append(segs, runSegment{r0, r1, 0, nmax, t.rows[r0].Blocks})
		hl.segs = segs
		return segs
	}
	segs = append(segs, runSegment{r0, r1, 0, s, t.rows[r0].Blocks})
	for a := r0; a < r1; {
		b, n := a, 0
		for ; b < r1 && sameTable(t.rows[b].Blocks, t.rows[a].Blocks); b++ {
			n = max(n, int(t.rows[b].Pos)+1)
		}
		if n > s {
			segs = append(segs, runSegment{a, b, s, n, t.rows[a].Blocks})
		}
		a = b
	}
	hl.segs = segs
	return segs
}
