package metal

import (
	"fmt"
	"unsafe"
)

// KVLayer is one layer's paged key/value storage: NumBlocks blocks of
// BlockSize token slots, each slot holding Dim() = KVHeads·HeadDim keys and as
// many values, as float16 bits (Type KVF16: attention widens them to float32
// and accumulates in float32, as llama.cpp's default f16 cache does), half
// the memory and half the reads of float32 per cached token; or as int8 in
// groups of KVGroup with a float16 scale each (KVQ8), about a quarter; or
// as float32, two elements a value (KVF32, Float32s), twice the memory.
//
// A block stores its KV heads one after another (as vLLM's
// [blocks, heads, block size, head size]): element j of KV head h of slot
// s = b·BlockSize + i is at b·BlockStride + (h·BlockSize + i)·HeadDim + j
// (KVIndex). In a KVBF16 cache the keys are laid out so, and the values
// of each pair of slots 2m, 2m+1 of a block are interleaved: element j of
// slot 2m+i (i = 0, 1) at 2·(m·HeadDim + j) + i past the head's start
// (VIndex), so that one 32-bit word holds both positions' element j.
// In a KVQ8 cache a head of a block is its BlockSize rows of
// HeadDim int8 (RowElems uint16 elements each, Int8s), then the rows'
// scales, HeadDim/KVGroup float16 a row (ScaleIndex). Attention reads one
// KV head of a block at a time, so it reads one contiguous stretch (4 KiB
// at Qwen3's head size of 128 and 16-token blocks) that hardware
// prefetchers follow, not HeadDim values out of every Dim().
//
// Blocks are BlockStride elements apart in K and in V. NewKVCache's are
// adjacent (BlockStride zero stands for KVHeads·HeadElems(), BlockSize·Dim()
// in float16); NewKVCacheIn interleaves the layers, so that K and V are
// windows onto a buffer they share with the other layers, and only the
// elements BlockIndex reaches are theirs.
type KVLayer struct {
	BlockSize, NumBlocks int
	KVHeads, HeadDim     int
	BlockStride          int      // elements from block b to block b+1; 0: KVHeads·HeadElems
	Type                 KVType   // what the elements hold
	K, V                 []uint16 // float16 or int8 pairs, up to the last element of the last block
}

// RowElems is the number of elements of one slot's keys of one KV head.
func (l *KVLayer) RowElems() int { return l.Type.RowElems(l.HeadDim) }

// HeadElems is the number of elements of one KV head of one block.
func (l *KVLayer) HeadElems() int { return l.Type.HeadElems(l.BlockSize, l.HeadDim) }

// ScaleIndex is, in a KVQ8 cache, the index in K and V of the first of
// HeadDim/KVGroup float16 scales of slot s's keys (values) of KV head h.
func (l *KVLayer) ScaleIndex(s int32, h int) int {
	b, i := int(s)/l.BlockSize, int(s)%l.BlockSize
	return l.BlockIndex(int32(b), h) + l.BlockSize*l.RowElems() + i*(l.HeadDim/KVGroup)
}

// Int8s views elements of a KVQ8 cache's K or V as the int8 they hold, two
// to an element: Int8s(K[KVIndex(s, h):])[:HeadDim] are slot s's keys of
// KV head h.
func Int8s(u []uint16) []int8 {
	if len(u) == 0 {
		return nil
	}
	return unsafe.Slice((*int8)(unsafe.Pointer(&u[0])), 2*len(u))
}

// Float32s views elements of a KVF32 cache's K or V as the float32 they
// hold, one to two elements: Float32s(K[KVIndex(s, h):])[:HeadDim] are
// slot s's keys of KV head h. Every index a KVF32 layer hands out is
// even, and its buffers are at least 4-byte aligned (Go's allocations and
// a backend's KVMemory are), so each float32 is aligned.
func Float32s(u []uint16) []float32 {
	if len(u) < 2 {
		return nil
	}
	return unsafe.Slice((*float32)(unsafe.Pointer(&u[0])), len(u)/2)
}

// Dim is the width of one token's keys (and of its values).
func (l *KVLayer) Dim() int { return l.KVHeads * l.HeadDim }

// KVIndex is the index in K and V of element 0 of KV head h of slot s.
func (l *KVLayer) KVIndex(s int32, h int) int {
	b, i := int(s)/l.BlockSize, int(s)%l.BlockSize
	return l.BlockIndex(int32(b), h) + i*l.RowElems()
}

// VIndex is, in a KVBF16 cache, the index in V of element 0 of KV head h
// of slot s; element j is 2j further (the slot's pair interleaved). In
// other caches it is KVIndex.
func (l *KVLayer) VIndex(s int32, h int) int {
	if l.Type != KVBF16 {
		return l.KVIndex(s, h)
	}
	b, i := int(s)/l.BlockSize, int(s)%l.BlockSize
	return l.BlockIndex(int32(b), h) + (i&^1)*l.HeadDim + i&1
}

// BlockIndex is KVIndex of the first slot of block b: where KV head h of
// the block starts, BlockSize·HeadDim contiguous elements.
func (l *KVLayer) BlockIndex(b int32, h int) int {
	he := l.HeadElems()
	stride := l.BlockStride
	if stride == 0 {
		stride = l.KVHeads * he
	}
	return int(b)*stride + h*he
}

// KVCache holds the paged key/value storage of every layer of a model. Block
// b of a sequence is the same block index in every layer, so one block table
// serves all layers. A model with per-sequence state layers (recurrent or
// linear attention) keeps their states in States, one StateLayer each, a
// sequence's in the same slot of every one; it is empty for attention-only
// models.
type KVCache struct {
	BlockSize, NumBlocks int
	Layers               []KVLayer
	States               []StateLayer
}

// NewKVCache allocates a cache of type t of numBlocks blocks of blockSize
// slots for layers layers of kvHeads heads of headDim keys (and values)
// per token, in ordinary Go memory. It panics when t cannot hold the heads
// (KVType.Check).
func NewKVCache(t KVType, layers, numBlocks, blockSize, kvHeads, headDim int) *KVCache {
	c := &KVCache{BlockSize: blockSize, NumBlocks: numBlocks, Layers: make([]KVLayer, layers)}
	for i := range c.Layers {
		c.Layers[i] = NewKVLayer(t, numBlocks, blockSize, kvHeads, headDim)
	}
	return c
}

// KVCacheElems is the number of uint16 elements of a NewKVCache of these
// dimensions: every layer's keys and values.
func KVCacheElems(t KVType, layers, numBlocks, blockSize, kvHeads, headDim int) int {
	return 2 * layers * numBlocks * kvHeads * t.HeadElems(blockSize, headDim)
}

// NewKVCacheIn is NewKVCache laid out in buf, zeroed memory of at least
// KVCacheElems elements that a backend provides (KVMemory), block by
// block: block b holds layer 0's keys, layer 0's values, layer 1's keys
// and so on, so that a block is one stretch of memory for all layers. A
// sequence that grows into a new block, or a prefill that fills some,
// first writes a few pages (a few huge pages), where with each layer's
// keys and values apart it would write two in every layer: 56 for a
// 28-layer model, each a page fault the first time. Attention then reads
// one layer's blocks a whole block of all layers apart, which costs it
// nothing measurable (BenchmarkDecode0_6BQ4 at 256, BenchmarkDecodeLong0_6BQ4
// at 4096).
func NewKVCacheIn(buf []uint16, t KVType, layers, numBlocks, blockSize, kvHeads, headDim int) *KVCache {
	if err := t.Check(blockSize, headDim); err != nil {
		panic(err)
	}
	be := kvHeads * t.HeadElems(blockSize, headDim) // one layer's keys (or values) of one block
	stride := 2 * layers * be
	if len(buf) < numBlocks*stride {
		panic(fmt.Sprintf("metal: a KV cache of %d elements in a buffer of %d", numBlocks*stride, len(buf)))
	}
	c := &KVCache{BlockSize: blockSize, NumBlocks: numBlocks, Layers: make([]KVLayer, layers)}
	span := max(numBlocks-1, 0)*stride + be // from a layer's first block to the end of its last
	for i := range c.Layers {
		k, v := 2*i*be, (2*i+1)*be
		c.Layers[i] = KVLayer{BlockSize: blockSize, NumBlocks: numBlocks, KVHeads: kvHeads, HeadDim: headDim, BlockStride: stride, Type: t,
			K: buf[k : k+span : k+span], V: buf[v : v+span : v+span]}
	}
	return c
}

// NewKVLayer allocates one layer of NewKVCache.
func NewKVLayer(t KVType, numBlocks, blockSize, kvHeads, headDim int) KVLayer {
	if err := t.Check(blockSize, headDim); err != nil {
		panic(err)
	}
	n := numBlocks * kvHeads * t.HeadElems(blockSize, headDim)
	return KVLayer{BlockSize: blockSize, NumBlocks: numBlocks, KVHeads: kvHeads, HeadDim: headDim, Type: t,
		K: make([]uint16, n), V: make([]uint16, n)}
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
	l := &c.Layers[0]
	return len(c.Layers) * l.Type.TokenBytes(l.KVHeads, l.HeadDim)
}
