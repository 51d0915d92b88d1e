package engine

import (
	"math/rand/v2"
	"testing"
)

func TestPrefillBudgetChunks(t *testing.T) {
	for _, tc := range []struct {
		name                   string
		tokens, cap, breakEven int
		decodes                bool
		later                  prefillNeed
		start, want, chunk     int
	}{
		{"no decode rows: tokens only", 512, 128, 1000, false, prefillNeed{}, 4096, 600, 512},
		{"no cap", 512, 0, 1000, true, prefillNeed{}, 4096, 600, 512},
		{"flat cap", 512, 128, 0, true, prefillNeed{}, 4096, 600, 128},
		{"start of a prompt", 512, 128, 1000, true, prefillNeed{}, 0, 600, 120},         // 120·1.06 ≤ 128 < 121·1.0605
		{"4096 in", 512, 128, 1000, true, prefillNeed{}, 4096, 600, 25},                 // 25·5.1085 ≤ 128 < 26·5.109
		{"too deep for one token", 512, 128, 1000, true, prefillNeed{}, 200000, 600, 1}, // one token costs 201: it still moves
		{"short prompt", 512, 128, 1000, true, prefillNeed{}, 4096, 3, 3},
		{"few tokens left", 10, 128, 1000, true, prefillNeed{}, 0, 600, 10},
		{"later prompts: half the cost", 512, 128, 0, true, prefillNeed{300, 300}, 4096, 600, 64},
		{"later prompts: half the tokens", 512, 0, 0, false, prefillNeed{300, 300}, 0, 600, 256},
		{"later prompts: the last token", 1, 128, 0, true, prefillNeed{300, 300}, 0, 600, 1},
		{"later prompts: what they need", 512, 128, 0, true, prefillNeed{10, 10}, 0, 600, 118},
		{"no tokens left", 0, 128, 1000, true, prefillNeed{}, 0, 600, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &Scheduler{cfg: Config{MaxPrefillWithDecode: tc.cap, AttentionBreakEven: tc.breakEven}}
			pb := s.prefillBudget(tc.tokens, tc.decodes)
			if got := pb.chunk(tc.start, tc.want, tc.later); got != tc.chunk {
				t.Fatalf("chunk(%d, %d) = %d, want %d", tc.start, tc.want, got, tc.chunk)
			}
		})
	}
}

// TestPrefillBudgetSpends takes chunks until none fits: each is the most
// that fits, the first has a token whatever it costs, and the cap is
// overshot by at most that token.
func TestPrefillBudgetSpends(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 1000 {
		cap, c := 1+rng.IntN(512), rng.IntN(3000)
		s := &Scheduler{cfg: Config{MaxPrefillWithDecode: cap, AttentionBreakEven: c}}
		pb := s.prefillBudget(1<<20, true)
		start := rng.IntN(20000)
		for first := true; ; first = false {
			n := pb.chunk(start, 1<<20, prefillNeed{})
			if n == 0 {
				if first {
					t.Fatalf("cap %d C %d start %d: the step's first chunk is empty", cap, c, start)
				}
				break
			}
			if cost := pb.costOf(start, n); !(first && n == 1) && cost > pb.cost {
				t.Fatalf("cap %d C %d start %d: %d tokens cost %g, over the %g left", cap, c, start, n, cost, pb.cost)
			}
			if next := pb.costOf(start, n+1); next <= pb.cost {
				t.Fatalf("cap %d C %d start %d: %d tokens fit (%g ≤ %g) but the chunk is %d", cap, c, start, n+1, next, pb.cost, n)
			}
			before := pb.tokens
			pb.take(start, n)
			if pb.tokens != before-n {
				t.Fatal("tokens not charged")
			}
			start += n
		}
		if pb.cost < -pb.costOf(start, 1)-1e-9 {
			t.Fatalf("cap %d C %d: overshot by %g, more than a token", cap, c, -pb.cost)
		}
	}
}

func TestPrefillChunkAt(t *testing.T) {
	c := Config{MaxBatchTokens: 512, MaxPrefillWithDecode: 128, AttentionBreakEven: 1000}
	for _, tc := range []struct{ context, want int }{{0, 120}, {4096, 25}, {200000, 1}} {
		if got := c.PrefillChunkAt(tc.context); got != tc.want {
			t.Errorf("PrefillChunkAt(%d) = %d, want %d", tc.context, got, tc.want)
		}
	}
	if got := (&Config{MaxBatchTokens: 512}).PrefillChunkAt(4096); got != 512 {
		t.Errorf("uncapped: %d, want the batch's 512", got)
	}
}
