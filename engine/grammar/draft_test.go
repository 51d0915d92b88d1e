package grammar

import "testing"

func TestCheckDraft(t *testing.T) {
	q := qwen(t)
	g := mustCompile(t, schemaCases[0].schema)
	valid := greedyTokens(q.vocab, []byte(`{"city":"Paris","days":3}`))
	bad := greedyTokens(q.vocab, []byte(`]]`))
	eos := q.eos[0]
	tests := []struct {
		name   string
		prefix int   // tokens of valid accepted before the draft
		draft  []int // proposed tokens
		want   int
	}{
		{"whole document and EOS", 0, append(append([]int{}, valid...), eos), len(valid) + 1},
		{"nothing after EOS", 0, append(append([]int{}, valid...), eos, valid[0]), len(valid) + 1},
		{"bad suffix", 0, append(append([]int{}, valid[:5]...), bad...), 5}, // ]] where a key must start
		{"bad first token", 0, bad, 0},
		{"EOS too early", 0, append(append([]int{}, valid[:3]...), eos), 3},
		{"from the middle", 3, valid[3:], len(valid) - 3},
		{"empty draft", 2, nil, 0},
		{"out of range id", 0, []int{-1}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := NewMatcher(g)
			for _, id := range valid[:tt.prefix] {
				if !q.vocab.AcceptToken(m, id) {
					t.Fatalf("prefix token %q rejected", q.tokens[id])
				}
			}
			before := m.Snapshot()
			if got := q.vocab.CheckDraft(m, tt.draft); got != tt.want {
				t.Errorf("CheckDraft = %d, want %d", got, tt.want)
			}
			if !statesEqual(m.Snapshot().states, before.states) {
				t.Error("CheckDraft moved the matcher")
			}
		})
	}
}

// TestSpeculativeRollback replays the verifier's use: accept a draft token
// by token with snapshots, reject a suffix, roll back, and continue with
// the correct tokens; the masks must match a matcher that never saw the draft.
func TestSpeculativeRollback(t *testing.T) {
	q := qwen(t)
	g := mustCompile(t, schemaCases[1].schema)
	doc := greedyTokens(q.vocab, []byte(`{"user":{"name":"Ada","age":36,"tags":["x"]},"scores":[1.5,2]}`))
	wrong := greedyTokens(q.vocab, []byte(`"name":"Bob"`))
	const at = 5
	m := NewMatcher(g)
	for _, id := range doc[:at] {
		q.vocab.AcceptToken(m, id)
	}
	snaps := []Snapshot{m.Snapshot()}
	for _, id := range wrong {
		if !q.vocab.AcceptToken(m, id) {
			break
		}
		snaps = append(snaps, m.Snapshot())
	}
	m.Restore(snaps[0])
	ref := NewMatcher(g)
	for _, id := range doc[:at] {
		q.vocab.AcceptToken(ref, id)
	}
	for i, id := range doc[at:] {
		got, want := q.vocab.Mask(m, nil), q.vocab.Mask(ref, nil)
		for w := range got {
			if got[w] != want[w] {
				t.Fatalf("step %d: mask after rollback differs from the reference", i)
			}
		}
		if !q.vocab.AcceptToken(m, id) || !q.vocab.AcceptToken(ref, id) {
			t.Fatalf("step %d: token %q rejected", i, q.tokens[id])
		}
	}
	if !m.Done() {
		t.Fatal("document not done after rollback and replay")
	}
}
