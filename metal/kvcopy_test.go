package metal

import (
	"slices"
	"testing"
)

// TestCopyBlocks: in a cache laid out block by block (NewKVCacheIn), a copy
// makes the destination block's stretch, all layers' keys and values,
// equal to the source's and changes nothing else, for every cache type;
// copies apply in order; a block out of range is an error.
func TestCopyBlocks(t *testing.T) {
	for _, tc := range []struct {
		typ                     KVType
		layers, bs, kvHeads, hd int
		copies                  []BlockCopy
		want                    []int // source of each block's contents afterwards
	}{
		{KVF16, 2, 4, 2, 8, []BlockCopy{{1, 3}}, []int{0, 1, 2, 1}},
		{KVQ8, 3, 4, 2, 32, []BlockCopy{{0, 2}}, []int{0, 1, 0, 3}},
		{KVBF16, 2, 8, 1, 32, []BlockCopy{{3, 0}}, []int{3, 1, 2, 3}},
		{KVF32, 2, 4, 2, 16, []BlockCopy{{1, 3}, {3, 0}}, []int{1, 1, 2, 1}},
		{KVF16, 1, 4, 1, 4, []BlockCopy{{1, 2}, {2, 0}, {3, 3}}, []int{1, 1, 1, 3}}, // in order; onto itself
	} {
		const blocks = 4
		n := KVCacheElems(tc.typ, tc.layers, blocks, tc.bs, tc.kvHeads, tc.hd)
		buf := make([]uint16, n)
		for i := range buf {
			buf[i] = uint16(i)
		}
		orig := slices.Clone(buf)
		c := NewKVCacheIn(buf, tc.typ, tc.layers, blocks, tc.bs, tc.kvHeads, tc.hd)
		if err := c.CopyBlocks(tc.copies); err != nil {
			t.Fatal(err)
		}
		be := n / blocks
		for b, src := range tc.want {
			if !slices.Equal(buf[b*be:(b+1)*be], orig[src*be:(src+1)*be]) {
				t.Fatalf("%v %v: block %d does not hold block %d's contents", tc.typ, tc.copies, b, src)
			}
		}
	}
	c := NewKVCache(KVF16, 1, 2, 4, 1, 4)
	for _, cp := range []BlockCopy{{0, 2}, {-1, 0}} {
		if err := c.CopyBlocks([]BlockCopy{cp}); err == nil {
			t.Fatalf("copy %v in a cache of 2 blocks: no error", cp)
		}
	}
}

// TestCopyBlocksSeparateLayers: in a cache of one allocation per layer
// (NewKVCache), every slot's keys and values of the destination block equal
// the source's.
func TestCopyBlocksSeparateLayers(t *testing.T) {
	c := NewKVCache(KVF16, 2, 3, 4, 2, 8)
	for li := range c.Layers {
		for i := range c.Layers[li].K {
			c.Layers[li].K[i], c.Layers[li].V[i] = uint16(i+li), uint16(3*i+li)
		}
	}
	if err := c.CopyBlocks([]BlockCopy{{Src: 2, Dst: 0}}); err != nil {
		t.Fatal(err)
	}
	for li := range c.Layers {
		l := &c.Layers[li]
		for i := range int32(c.BlockSize) {
			for h := range l.KVHeads {
				d, s := l.KVIndex(i, h), l.KVIndex(2*int32(c.BlockSize)+i, h)
				if !slices.Equal(l.K[d:d+l.HeadDim], l.K[s:s+l.HeadDim]) || !slices.Equal(l.V[d:d+l.HeadDim], l.V[s:s+l.HeadDim]) {
					t.Fatalf("layer %d slot %d head %d: not copied", li, i, h)
				}
			}
		}
	}
}
