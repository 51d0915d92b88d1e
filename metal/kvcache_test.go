package metal

import (
	"testing"
	"unsafe"
)

// TestNewKVCacheIn checks the layout of a cache in a provided buffer: every
// element of the buffer is exactly one (layer, keys or values, block, KV
// head, slot, dimension) as KVIndex addresses them, and each block is one
// stretch of the buffer holding all its layers.
func TestNewKVCacheIn(t *testing.T) {
	for _, tc := range []struct {
		typ                                    KVType
		layers, blocks, bs, kvHeads, hd, extra int
	}{
		{KVF16, 1, 1, 1, 1, 1, 0},
		{KVF16, 3, 5, 4, 2, 8, 0},
		{KVF16, 2, 4, 4, 3, 16, 100}, // a buffer longer than needed
		{KVQ8, 1, 1, 1, 1, 32, 0},
		{KVQ8, 3, 5, 4, 2, 64, 0},
		{KVQ8, 2, 4, 16, 3, 128, 100},
		{KVF32, 1, 1, 1, 1, 1, 0},
		{KVF32, 3, 5, 4, 2, 8, 0},
	} {
		n := KVCacheElems(tc.typ, tc.layers, tc.blocks, tc.bs, tc.kvHeads, tc.hd)
		buf := make([]uint16, n+tc.extra)
		c := NewKVCacheIn(buf, tc.typ, tc.layers, tc.blocks, tc.bs, tc.kvHeads, tc.hd)
		if c.BlockSize != tc.bs || c.NumBlocks != tc.blocks || len(c.Layers) != tc.layers {
			t.Fatalf("%+v: a cache of %d layers, %d blocks of %d", tc, len(c.Layers), c.NumBlocks, c.BlockSize)
		}
		blockElems := n / tc.blocks // one block of every layer
		seen := make([]int, len(buf))
		for li := range c.Layers {
			l := &c.Layers[li]
			if l.Type != tc.typ {
				t.Fatalf("%+v: layer %d of type %v", tc, li, l.Type)
			}
			for _, s := range [][]uint16{l.K, l.V} {
				for slot := range tc.blocks * tc.bs {
					for h := range tc.kvHeads {
						// the slot's row, then for q8 its scales
						elems := []int{}
						for j := range l.RowElems() {
							elems = append(elems, l.KVIndex(int32(slot), h)+j)
						}
						if tc.typ == KVQ8 {
							for j := range tc.hd / KVGroup {
								elems = append(elems, l.ScaleIndex(int32(slot), h)+j)
							}
						}
						for _, e := range elems {
							at := int((uintptr(unsafe.Pointer(&s[e])) - uintptr(unsafe.Pointer(&buf[0]))) / 2)
							seen[at]++
							if b := slot / tc.bs; at < b*blockElems || at >= (b+1)*blockElems {
								t.Fatalf("%+v: layer %d slot %d head %d element %d is element %d, outside block %d's [%d, %d)",
									tc, li, slot, h, e, at, b, b*blockElems, (b+1)*blockElems)
							}
						}
					}
				}
			}
		}
		for i, k := range seen {
			want := 1
			if i >= n {
				want = 0 // the buffer's unused tail
			}
			if k != want {
				t.Fatalf("%+v: element %d of the buffer is addressed %d times, want %d", tc, i, k, want)
			}
		}
	}
}

func TestNewKVCacheInShortBuffer(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("NewKVCacheIn took a buffer one element short")
		}
	}()
	NewKVCacheIn(make([]uint16, KVCacheElems(KVF16, 2, 3, 4, 5, 6)-1), KVF16, 2, 3, 4, 5, 6)
}

// TestNewKVCacheLayout checks that NewKVCache's blocks are adjacent in each
// layer's own keys and values.
func TestNewKVCacheLayout(t *testing.T) {
	c := NewKVCache(KVF16, 2, 3, 4, 5, 6)
	for _, l := range c.Layers {
		if len(l.K) != 3*4*5*6 || len(l.V) != len(l.K) {
			t.Fatalf("a layer of %d keys and %d values, want %d each", len(l.K), len(l.V), 3*4*5*6)
		}
		if got, want := l.KVIndex(int32(2*4+3), 4), (2*5+4)*4*6+3*6; got != want {
			t.Errorf("KVIndex(slot 11, head 4) = %d, want %d", got, want)
		}
	}
}
