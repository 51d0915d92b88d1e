package metal

import (
	"slices"
	"testing"
)

// TestReadWriteBlock: a block read from a cache laid out block by block
// (NewKVCacheIn) and written into another block of a cache of one
// allocation per layer (NewKVCache) holds the same keys and values there,
// for every cache type, and no other block changes; a wrong length or a
// block out of range is an error.
func TestReadWriteBlock(t *testing.T) {
	for _, tc := range []struct {
		typ                     KVType
		layers, bs, kvHeads, hd int
	}{
		{KVF16, 2, 4, 2, 8},
		{KVQ8, 3, 4, 2, 32},
		{KVBF16, 2, 8, 1, 32},
		{KVF32, 2, 4, 2, 16},
	} {
		const blocks = 3
		buf := make([]uint16, KVCacheElems(tc.typ, tc.layers, blocks, tc.bs, tc.kvHeads, tc.hd))
		for i := range buf {
			buf[i] = uint16(i*7 + 1)
		}
		src := NewKVCacheIn(buf, tc.typ, tc.layers, blocks, tc.bs, tc.kvHeads, tc.hd)
		dst := NewKVCache(tc.typ, tc.layers, blocks, tc.bs, tc.kvHeads, tc.hd)
		b, err := src.ReadBlock(nil, 1)
		if err != nil {
			t.Fatal(err)
		}
		if len(b) != src.BlockBytes() || src.BlockBytes() != dst.BlockBytes() || len(b) != 2*len(buf)/blocks {
			t.Fatalf("%v: read %d bytes, BlockBytes %d and %d, a block is %d elements", tc.typ, len(b), src.BlockBytes(), dst.BlockBytes(), len(buf)/blocks)
		}
		if err := dst.WriteBlock(2, b); err != nil {
			t.Fatal(err)
		}
		for li := range dst.Layers {
			sk, sv := src.Layers[li].block(1)
			dk, dv := dst.Layers[li].block(2)
			if !slices.Equal(sk, dk) || !slices.Equal(sv, dv) {
				t.Fatalf("%v: layer %d of the written block differs from the read one", tc.typ, li)
			}
			for _, other := range []int32{0, 1} {
				k, v := dst.Layers[li].block(other)
				if slices.ContainsFunc(k, func(e uint16) bool { return e != 0 }) || slices.ContainsFunc(v, func(e uint16) bool { return e != 0 }) {
					t.Fatalf("%v: writing block 2 changed block %d", tc.typ, other)
				}
			}
		}
		if err := dst.WriteBlock(0, b[1:]); err == nil {
			t.Fatalf("%v: a short block was written", tc.typ)
		}
		if err := dst.WriteBlock(blocks, b); err == nil {
			t.Fatalf("%v: block %d of %d was written", tc.typ, blocks, blocks)
		}
		if _, err := dst.ReadBlock(nil, -1); err == nil {
			t.Fatalf("%v: block -1 was read", tc.typ)
		}
	}
}
