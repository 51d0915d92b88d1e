package model

import (
	"errors"
	"strings"
	"testing"

	"github.com/splash-inference/splash/metal"
)

// TestPlanMemory: the budget pays weights, packed copies and scratch first,
// then a state per running sequence (lowering the running cap to what
// fits beside one context's KV cache) and the state snapshots wanted (as
// many as fit beside those), then KV blocks up to the cap; the
// plan never exceeds the budget, and too small a budget is ErrPlanTooSmall.
func TestPlanMemory(t *testing.T) {
	const mib = 1 << 20
	dense := CacheSpec{Layers: []LayerCache{PagedLayer(2, 64), PagedLayer(2, 64)}}
	f16Token := int64(2 * metal.KVF16.TokenBytes(2, 64)) // two layers
	// hybrid: three state layers of 64 KiB per sequence, one paged layer
	hybrid := CacheSpec{Layers: []LayerCache{StateLayer(1 << 14), StateLayer(1 << 14), StateLayer(1 << 14), PagedLayer(2, 64)}}
	hybridToken, hybridState := int64(metal.KVF16.TokenBytes(2, 64)), int64(3*4<<14)
	base := PlanInput{Cache: dense, Weights: 10 * mib, ScratchPerToken: 1000, Packed: mib, AttentionScratch: 5000,
		KVType: metal.KVF16, BlockSize: 16, Context: 1024, Budget: 64 * mib, MaxBatchTokens: 64, MaxRunning: 8}
	fixed := base.Weights + base.Packed + 64*1000 + 5000
	for _, tc := range []struct {
		name        string
		edit        func(*PlanInput)
		perToken    int64
		state       int64
		blocks      int
		running     int
		slots       int
		wantTooSmal bool
	}{
		{"dense", func(*PlanInput) {}, f16Token, 0, int((64*mib - fixed) / (f16Token * 16)), 8, 0, false},
		{"dense capped", func(in *PlanInput) { in.KVCap = 2 * mib }, f16Token, 0, int(2 * mib / (f16Token * 16)), 8, 0, false},
		{"draft", func(in *PlanInput) {
			in.DraftCache, in.DraftWeights = CacheSpec{Layers: []LayerCache{PagedLayer(1, 64)}}, 2*mib
		}, f16Token + int64(metal.KVF16.TokenBytes(1, 64)), 0,
			int((64*mib - fixed - 2*mib) / ((f16Token + int64(metal.KVF16.TokenBytes(1, 64))) * 16)), 8, 0, false},
		{"dflash draft: context cache and scratch", func(in *PlanInput) {
			in.DraftCache, in.DraftWeights, in.DraftScratch = CacheSpec{Layers: []LayerCache{PagedLayer(2, 16), PagedLayer(2, 16)}}, 2*mib, 3*mib
		}, f16Token + 2*int64(metal.KVF16.TokenBytes(2, 16)), 0,
			int((64*mib - fixed - 5*mib) / ((f16Token + 2*int64(metal.KVF16.TokenBytes(2, 16))) * 16)), 8, 0, false},
		{"dflash draft beside q8: its context in f16", func(in *PlanInput) {
			in.KVType, in.DFlash, in.DraftCache = metal.KVQ8, true, CacheSpec{Layers: []LayerCache{PagedLayer(2, 64)}}
		}, int64(2*metal.KVQ8.TokenBytes(2, 64) + metal.KVF16.TokenBytes(2, 64)), 0,
			int((64*mib - fixed) / (int64(2*metal.KVQ8.TokenBytes(2, 64)+metal.KVF16.TokenBytes(2, 64)) * 16)), 8, 0, false},
		{"hybrid, every state fits", func(in *PlanInput) { in.Cache = hybrid }, hybridToken, hybridState,
			int((64*mib - fixed - 8*hybridState) / (hybridToken * 16)), 8, 8, false},
		{"hybrid, states lower running", func(in *PlanInput) {
			in.Cache, in.Budget = hybrid, fixed+1024*hybridToken+3*hybridState+100
		}, hybridToken, hybridState, 1024 / 16, 3, 3, false},
		{"hybrid, no room for a state", func(in *PlanInput) {
			in.Cache, in.Budget = hybrid, fixed+1024*hybridToken+hybridState-1
		}, hybridToken, hybridState, 0, 0, 0, true},
		{"hybrid with snapshots", func(in *PlanInput) { in.Cache, in.Snapshots = hybrid, 5 }, hybridToken, hybridState,
			int((64*mib - fixed - 13*hybridState) / (hybridToken * 16)), 8, 8, false},
		{"hybrid, spares", func(in *PlanInput) { in.Cache, in.Spares = hybrid, true }, hybridToken, hybridState,
			int((64*mib - fixed - 16*hybridState) / (hybridToken * 16)), 8, 8, false},
		{"hybrid, spares lower running", func(in *PlanInput) {
			in.Cache, in.Spares, in.Budget = hybrid, true, fixed+1024*hybridToken+6*hybridState+100
		}, hybridToken, hybridState, 1024 / 16, 3, 3, false},
		{"dense ignores spares", func(in *PlanInput) { in.Spares = true }, f16Token, 0, int((64*mib - fixed) / (f16Token * 16)), 8, 0, false},
		{"hybrid, snapshots lowered", func(in *PlanInput) {
			in.Cache, in.Snapshots, in.Budget = hybrid, 5, fixed+1024*hybridToken+10*hybridState+100
		}, hybridToken, hybridState, 1024 / 16, 8, 8, false},
		{"dense ignores snapshots", func(in *PlanInput) { in.Snapshots = 5 }, f16Token, 0, int((64*mib - fixed) / (f16Token * 16)), 8, 0, false},
		{"state only", func(in *PlanInput) { in.Cache = CacheSpec{Layers: []LayerCache{StateLayer(1 << 14)}} }, 0, 4 << 14, 8 * 1024 / 16, 8, 8, false},
		{"dense, under one context", func(in *PlanInput) { in.KVCap = 1023 * f16Token }, f16Token, 0, 1023 / 16, 8, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := base
			tc.edit(&in)
			p, err := PlanMemory(in)
			if tc.wantTooSmal {
				if !errors.Is(err, ErrPlanTooSmall) {
					t.Fatalf("PlanMemory: %v, want ErrPlanTooSmall", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if p.KVPerToken != tc.perToken || p.StatePerSeq != tc.state || p.Blocks != tc.blocks || p.MaxRunning != tc.running || p.StateSlots != tc.slots {
				t.Errorf("KV %d B/token, state %d B, %d blocks, running %d, %d slots; want %d, %d, %d, %d, %d",
					p.KVPerToken, p.StatePerSeq, p.Blocks, p.MaxRunning, p.StateSlots, tc.perToken, tc.state, tc.blocks, tc.running, tc.slots)
			}
			if spares := p.StateSlots * btoi(in.Spares); p.SpareSlots != spares {
				t.Errorf("%d spare slots, want %d", p.SpareSlots, spares)
			}
			if want := min(in.Snapshots, int(in.Budget-fixed-int64(p.Blocks*16)*p.KVPerToken)/max(int(tc.state), 1)-p.StateSlots-p.SpareSlots); tc.state > 0 && p.Snapshots != want {
				t.Errorf("%d snapshots, want %d", p.Snapshots, want)
			} else if tc.state == 0 && p.Snapshots != 0 {
				t.Errorf("%d snapshots without state layers", p.Snapshots)
			}
			if p.Total() > in.Budget {
				t.Errorf("plan of %d B exceeds the budget of %d", p.Total(), in.Budget)
			}
		})
	}
}

// TestPlanMemoryRefuses: bad limits, malformed declarations, a KV type the
// heads cannot take and a draft model with state are errors naming what.
func TestPlanMemoryRefuses(t *testing.T) {
	ok := PlanInput{Cache: CacheSpec{Layers: []LayerCache{PagedLayer(2, 16)}}, KVType: metal.KVF16, BlockSize: 16,
		Context: 64, Budget: 1 << 30, MaxBatchTokens: 8, MaxRunning: 2}
	if _, err := PlanMemory(ok); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		edit func(*PlanInput)
		want string
	}{
		{"no block size", func(in *PlanInput) { in.BlockSize = 0 }, "positive block size"},
		{"mixed paged layers", func(in *PlanInput) {
			in.Cache.Layers = append(in.Cache.Layers, PagedLayer(4, 16))
		}, "layer 1"},
		{"empty state", func(in *PlanInput) { in.Cache.Layers = append(in.Cache.Layers, StateLayer(0)) }, "state of 0"},
		{"q8 of heads of 16", func(in *PlanInput) { in.KVType = metal.KVQ8 }, "KV cache type q8"},
		{"draft with state", func(in *PlanInput) {
			in.DraftCache = CacheSpec{Layers: []LayerCache{PagedLayer(1, 16), StateLayer(8)}}
		}, "draft model with state"},
	} {
		in := ok
		in.Cache.Layers = append([]LayerCache(nil), ok.Cache.Layers...)
		tc.edit(&in)
		if _, err := PlanMemory(in); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}

// TestCacheSpecCounts: the declaration's sums over its layers.
func TestCacheSpecCounts(t *testing.T) {
	s := CacheSpec{Layers: []LayerCache{StateLayer(10), PagedLayer(2, 8), StateLayer(6), PagedLayer(2, 8)}}
	if s.KVLayers() != 2 || s.StateLayers() != 2 || !s.HasState() {
		t.Fatalf("%d paged, %d state layers", s.KVLayers(), s.StateLayers())
	}
	if got, want := s.KVBytesPerToken(metal.KVF16), int64(2*2*2*2*8); got != want {
		t.Errorf("KV per token %d, want %d (keys and values, 2 heads of 8, 2 layers, f16)", got, want)
	}
	if got := s.StateBytes(); got != 4*16 {
		t.Errorf("state bytes %d, want 64", got)
	}
	cfg := &Config{NumHiddenLayers: 3, NumKeyValueHeads: 4, HeadDim: 32}
	if d := DenseCache(cfg); d.KVLayers() != 3 || d.HasState() || d.KVBytesPerToken(metal.KVF16) != 3*int64(metal.KVF16.TokenBytes(4, 32)) {
		t.Errorf("DenseCache: %+v", d)
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
