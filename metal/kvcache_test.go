package metal

import "testing"

func TestNewKVCacheIn(t *testing.T) {
	for _, tc := range []struct{ layers, blocks, bs, kvHeads, hd, extra int }{
		{1, 1, 1, 1, 1, 0},
		{3, 5, 16, 2, 8, 0},
		{2, 4, 4, 8, 128, 100}, // a buffer longer than needed
	} {
		n := KVCacheElems(tc.layers, tc.blocks, tc.bs, tc.kvHeads, tc.hd)
		buf := make([]uint16, n+tc.extra)
		c := NewKVCacheIn(buf, tc.layers, tc.blocks, tc.bs, tc.kvHeads, tc.hd)
		want := NewKVCache(tc.layers, tc.blocks, tc.bs, tc.kvHeads, tc.hd)
		if c.BlockSize != want.BlockSize || c.NumBlocks != want.NumBlocks || len(c.Layers) != len(want.Layers) {
			t.Fatalf("%+v: cache %+v, want the shape of %+v", tc, c, want)
		}
		// Every element of buf up to n belongs to exactly one layer's K or
		// V, in order, each as long as NewKVCache's.
		next := 0
		for i, l := range c.Layers {
			w := want.Layers[i]
			if l.BlockSize != w.BlockSize || l.NumBlocks != w.NumBlocks || l.KVHeads != w.KVHeads || l.HeadDim != w.HeadDim {
				t.Errorf("%+v: layer %d is %+v, want %+v", tc, i, l, w)
			}
			for _, s := range [][]uint16{l.K, l.V} {
				if len(s) != len(w.K) || cap(s) != len(w.K) || &s[0] != &buf[next] {
					t.Fatalf("%+v: layer %d: a stretch of %d (cap %d) at the wrong place, want %d elements from %d", tc, i, len(s), cap(s), len(w.K), next)
				}
				next += len(s)
			}
		}
		if next != n {
			t.Errorf("%+v: the layers cover %d elements, want %d", tc, next, n)
		}
	}
}

func TestNewKVCacheInShortBuffer(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("NewKVCacheIn took a buffer one element short")
		}
	}()
	NewKVCacheIn(make([]uint16, KVCacheElems(2, 3, 4, 5, 6)-1), 2, 3, 4, 5, 6)
}
