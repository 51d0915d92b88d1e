package actors

import (
	"slices"
	"testing"

	"github.com/splash-inference/splash/engine/sample"
)

func TestRequestSequence(t *testing.T) {
	seed := uint64(7)
	eos := []int32{2}
	tests := []struct {
		name       string
		req        Request
		choice     int
		wantSeed   *uint64
		wantLogp   int
		wantStops  []int32
		wantPrompt bool
	}{
		{"plain", Request{StopTokens: []int32{5}}, 0, nil, -1, []int32{5, 2}, false},
		{"ignore eos", Request{StopTokens: []int32{5}, IgnoreEOS: true}, 0, nil, -1, []int32{5}, false},
		{"seed per choice", Request{Sampling: sample.Params{Seed: &seed}}, 3, &[]uint64{10}[0], -1, []int32{2}, false},
		{"sampled logprobs", Request{Logprobs: true}, 0, nil, 0, []int32{2}, false},
		{"top logprobs", Request{Logprobs: true, TopLogprobs: 4}, 1, nil, 4, []int32{2}, false},
		{"prompt logprobs", Request{PromptLogprobs: true, TopLogprobs: 2}, 0, nil, 2, []int32{2}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.req.Sequence(tt.choice, eos)
			if got.Sampling.Logprobs != tt.wantLogp {
				t.Errorf("Logprobs = %d, want %d", got.Sampling.Logprobs, tt.wantLogp)
			}
			if !slices.Equal(got.StopTokens, tt.wantStops) {
				t.Errorf("StopTokens = %v, want %v", got.StopTokens, tt.wantStops)
			}
			if got.PromptLogprobs != tt.wantPrompt {
				t.Errorf("PromptLogprobs = %v, want %v", got.PromptLogprobs, tt.wantPrompt)
			}
			switch {
			case (got.Sampling.Seed == nil) != (tt.wantSeed == nil):
				t.Errorf("Seed = %v, want %v", got.Sampling.Seed, tt.wantSeed)
			case got.Sampling.Seed != nil && *got.Sampling.Seed != *tt.wantSeed:
				t.Errorf("Seed = %d, want %d", *got.Sampling.Seed, *tt.wantSeed)
			}
			if tt.req.Sampling.Seed != nil && *tt.req.Sampling.Seed != seed {
				t.Errorf("Sequence changed the request's seed to %d", *tt.req.Sampling.Seed)
			}
		})
	}
}
