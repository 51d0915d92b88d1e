package model

import (
	"testing"

	"github.com/splash-inference/splash/metal"
)

// declared is a Model that only declares a cache and allocates its paged
// layers, as an architecture does.
type declared struct {
	Model
	spec CacheSpec
}

func (d declared) CacheSpec() CacheSpec { return d.spec }

func (d declared) NewKVCache(numBlocks, blockSize int, t metal.KVType) *metal.KVCache {
	return metal.NewKVCache(t, d.spec.KVLayers(), numBlocks, blockSize, 1, 8)
}

// TestNewCacheAddsStateLayers: NewCache gives each state layer its slots
// of the declared size, in layer order, and a model without state layers
// exactly its NewKVCache.
func TestNewCacheAddsStateLayers(t *testing.T) {
	for _, tc := range []struct {
		name   string
		layers []LayerCache
		paged  int
		states []int
	}{
		{"dense", []LayerCache{PagedLayer(1, 8), PagedLayer(1, 8)}, 2, nil},
		{"hybrid", []LayerCache{StateLayer(6), StateLayer(10), PagedLayer(1, 8)}, 1, []int{6, 10}},
	} {
		kv := NewCache(declared{spec: CacheSpec{Layers: tc.layers}}, 4, 16, 3, metal.KVF16)
		if len(kv.Layers) != tc.paged || len(kv.States) != len(tc.states) {
			t.Fatalf("%s: %d paged and %d state layers, want %d and %d", tc.name, len(kv.Layers), len(kv.States), tc.paged, len(tc.states))
		}
		for i, n := range tc.states {
			if s := kv.States[i]; s.Slots != 3 || s.Elems != n || len(s.Data) != 3*n {
				t.Errorf("%s: state layer %d: %d slots of %d (%d floats), want 3 of %d", tc.name, i, s.Slots, s.Elems, len(s.Data), n)
			}
		}
	}
}
