package metal

import (
	"fmt"
	"unsafe"
)

// BlockBytes is the size of one block's keys and values of every layer:
// what ReadBlock appends and WriteBlock takes.
func (c *KVCache) BlockBytes() int {
	n := 0
	for i := range c.Layers {
		n += 2 * 2 * c.Layers[i].KVHeads * c.Layers[i].HeadElems()
	}
	return n
}

// ReadBlock appends block b's keys and values, layer by layer (keys, then
// values), to dst as the cache holds them, in the host's byte order: the
// bytes WriteBlock puts back into any block of a cache of the same shape
// and type. A prefix cache's disk tier saves evicted blocks so.
func (c *KVCache) ReadBlock(dst []byte, b int32) ([]byte, error) {
	if b < 0 || int(b) >= c.NumBlocks {
		return dst, fmt.Errorf("metal: block %d out of range [0, %d)", b, c.NumBlocks)
	}
	for i := range c.Layers {
		k, v := c.Layers[i].block(b)
		dst = append(dst, bytesOf(k)...)
		dst = append(dst, bytesOf(v)...)
	}
	return dst, nil
}

// WriteBlock sets block b's keys and values from src, as ReadBlock gave
// them; src must be exactly BlockBytes long.
func (c *KVCache) WriteBlock(b int32, src []byte) error {
	if b < 0 || int(b) >= c.NumBlocks {
		return fmt.Errorf("metal: block %d out of range [0, %d)", b, c.NumBlocks)
	}
	if len(src) != c.BlockBytes() {
		return fmt.Errorf("metal: a block of %d bytes for a cache whose blocks hold %d", len(src), c.BlockBytes())
	}
	for i := range c.Layers {
		k, v := c.Layers[i].block(b)
		src = src[copy(bytesOf(k), src):]
		src = src[copy(bytesOf(v), src):]
	}
	return nil
}

// block returns block b's keys and values: KVHeads·HeadElems elements each.
func (l *KVLayer) block(b int32) (k, v []uint16) {
	n := l.KVHeads * l.HeadElems()
	i := l.BlockIndex(b, 0)
	return l.K[i : i+n], l.V[i : i+n]
}

// bytesOf views elements as their bytes.
func bytesOf(u []uint16) []byte {
	if len(u) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&u[0])), 2*len(u))
}
