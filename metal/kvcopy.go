package metal

import "fmt"

// BlockCopy asks for the keys and values of cache block Src, in every
// layer, to be copied into block Dst: how a sequence gets its own copy of a
// cached block whose first positions it shares but whose later ones it
// will write (the prefix cache's partial-block hits).
type BlockCopy struct{ Src, Dst int32 }

// CopyBlocks makes the copies in order, so a block may be copied from
// after an earlier copy has filled it. Whole blocks are copied whatever the
// cache type (a bfloat16 cache interleaves pairs of positions, an int8 one
// keeps a head's scales after its rows): the receiver treats only the
// positions it knows to be valid as such and overwrites the rest.
func (c *KVCache) CopyBlocks(copies []BlockCopy) error {
	for _, cp := range copies {
		for _, b := range [2]int32{cp.Src, cp.Dst} {
			if b < 0 || int(b) >= c.NumBlocks {
				return fmt.Errorf("metal: block copy %d → %d: block %d out of range [0, %d)", cp.Src, cp.Dst, b, c.NumBlocks)
			}
		}
		if cp.Src == cp.Dst {
			continue
		}
		for i := range c.Layers {
			c.Layers[i].copyBlock(cp.Dst, cp.Src)
		}
	}
	return nil
}

// copyBlock copies block src's keys and values to block dst: a block's KV
// heads are adjacent, one stretch of KVHeads·HeadElems elements in K and
// in V.
func (l *KVLayer) copyBlock(dst, src int32) {
	n := l.KVHeads * l.HeadElems()
	d, s := l.BlockIndex(dst, 0), l.BlockIndex(src, 0)
	copy(l.K[d:d+n], l.K[s:s+n])
	copy(l.V[d:d+n], l.V[s:s+n])
}
