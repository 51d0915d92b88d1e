package metal

import "fmt"

// KVLayer is one layer's paged key/value storage: NumBlocks blocks of
// BlockSize token slots, each slot holding Dim = kvHeads·headDim keys and as
// many values, as float16 bits (attention widens them to float32 and
// accumulates in float32, as llama.cpp's default f16 cache does): half the
// memory and half the reads of float32 per cached token.
type KVLayer struct {
	BlockSize, NumBlocks, Dim int
	K, V                      []uint16 // NumBlocks·BlockSize·Dim each, float16
}

// KVCache holds the paged key/value storage of every layer of a model. Block
// b of a sequence is the same block index in every layer, so one block table
// serves all layers.
type KVCache struct {
	BlockSize, NumBlocks int
	Layers               []KVLayer
}

// NewKVCache allocates a cache of numBlocks blocks of blockSize slots for
// layers layers of dim keys (and values) per token.
func NewKVCache(layers, numBlocks, blockSize, dim int) *KVCache {
	c := &KVCache{BlockSize: blockSize, NumBlocks: numBlocks, Layers: make([]KVLayer, layers)}
	n := numBlocks * blockSize * dim
	for i := range c.Layers {
		c.Layers[i] = KVLayer{BlockSize: blockSize, NumBlocks: numBlocks, Dim: dim,
			K: make([]uint16, n), V: make([]uint16, n)}
	}
	return c
}

// Slot returns the cache slot of position pos of a sequence with the given
// block table, or an error if the table does not reach pos.
func (c *KVCache) Slot(blocks []int32, pos int) (int32, error) {
	b := pos / c.BlockSize
	if pos < 0 || b >= len(blocks) {
		return 0, fmt.Errorf("metal: position %d is beyond the %d blocks of the table", pos, len(blocks))
	}
	blk := blocks[b]
	if blk < 0 || int(blk) >= c.NumBlocks {
		return 0, fmt.Errorf("metal: block %d out of range [0, %d)", blk, c.NumBlocks)
	}
	return blk*int32(c.BlockSize) + int32(pos%c.BlockSize), nil
}

// BytesPerToken is the KV memory one token takes across all layers.
func (c *KVCache) BytesPerToken() int {
	if len(c.Layers) == 0 {
		return 0
	}
	return len(c.Layers) * 2 * 2 * c.Layers[0].Dim // keys and values, float16
}
