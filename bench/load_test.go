package bench

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/splash-inference/splash/bench/benchtest"
)

func TestErrorsAndDisconnectsAreCounted(t *testing.T) {
	// Requests 0..9 in arrival order; with concurrency 1 the order is fixed.
	script := func(n int) benchtest.Behaviour {
		ok := benchtest.Behaviour{TTFT: 2 * time.Millisecond, ITL: time.Millisecond}
		switch n {
		case 1, 6:
			ok.Status = 500
		case 2:
			ok.Status = 429
		case 3, 7:
			ok.DisconnectAfter = 2
		case 4:
			ok.StreamErrorAfter = 1
		case 5:
			ok.Hang = true
		}
		return ok
	}
	for _, api := range []API{APIChat, APIMessages} {
		t.Run(string(api), func(t *testing.T) {
			srv := benchtest.New(script)
			defer srv.Close()
			results, err := Run(context.Background(), Config{
				Target:   Target{BaseURL: srv.URL, Model: "m", API: api, Timeout: 300 * time.Millisecond},
				Workload: Synthetic{InputLen: FixedLength(4), OutputLen: FixedLength(5)},
				Load:     Load{Steps: []Step{{Concurrency: 1}}, Requests: 10},
			})
			if err != nil {
				t.Fatal(err)
			}
			s := results[0].Summary
			wantKinds := map[string]int{"http_500": 2, "http_429": 1, ErrDisconnect: 2, ErrStream: 1, ErrTimeout: 1}
			if s.Requests != 10 || s.Completed != 3 || s.Errors != 7 {
				t.Errorf("requests/completed/errors = %d/%d/%d, want 10/3/7", s.Requests, s.Completed, s.Errors)
			}
			for k, n := range wantKinds {
				if s.ErrorKind[k] != n {
					t.Errorf("error kind %s = %d, want %d (all: %v)", k, s.ErrorKind[k], n, s.ErrorKind)
				}
			}
			if len(s.ErrorKind) != len(wantKinds) {
				t.Errorf("error kinds = %v, want %v", s.ErrorKind, wantKinds)
			}
			for _, x := range results[0].Samples {
				if !x.OK && (x.Error == "" || x.E2EMs <= 0) {
					t.Errorf("failed sample %d lacks its error or time: %+v", x.ID, x)
				}
			}
			// Failed requests do not enter the token counts.
			if s.OutputTokens != 15 {
				t.Errorf("output tokens = %d, want 15 (3 completed × 5)", s.OutputTokens)
			}
		})
	}
}

func TestConnectionRefusedIsConnectError(t *testing.T) {
	srv := benchtest.New(benchtest.Constant(benchtest.Behaviour{}))
	url := srv.URL
	srv.Close() // nothing listens there any more
	results, err := Run(context.Background(), Config{
		Target:   Target{BaseURL: url, Model: "m", API: APIChat, Timeout: time.Second},
		Workload: Synthetic{InputLen: FixedLength(4), OutputLen: FixedLength(5)},
		Load:     Load{Steps: []Step{{Concurrency: 2}}, Requests: 4},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := results[0].Summary.ErrorKind[ErrConnect]; got != 4 {
		t.Errorf("connect errors = %d, want 4 (%v)", got, results[0].Summary.ErrorKind)
	}
}

func TestIgnoreEOSModes(t *testing.T) {
	tests := []struct {
		name          string
		mode          IgnoreEOS
		reject        bool
		wantCompleted int
		wantSent      []bool // ignore_eos seen by the server, per request in arrival order
	}{
		{"auto sends it to a server that accepts it", IgnoreEOSAuto, false, 3, []bool{true, true, true}},
		{"auto drops it after a rejection and retries", IgnoreEOSAuto, true, 3, []bool{true, false, false, false}},
		{"on keeps sending it", IgnoreEOSOn, true, 0, []bool{true, true, true}},
		{"off never sends it", IgnoreEOSOff, true, 3, []bool{false, false, false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := benchtest.New(benchtest.Constant(benchtest.Behaviour{ITL: time.Millisecond}))
			srv.RejectIgnoreEOS = tt.reject
			defer srv.Close()
			results, err := Run(context.Background(), Config{
				Target:   Target{BaseURL: srv.URL + "/v1/", Model: "m", API: APIChat, IgnoreEOS: tt.mode, Timeout: time.Second},
				Workload: Synthetic{InputLen: FixedLength(4), OutputLen: FixedLength(3)},
				Load:     Load{Steps: []Step{{Concurrency: 1}}, Requests: 3},
			})
			if err != nil {
				t.Fatal(err)
			}
			if got := results[0].Summary.Completed; got != tt.wantCompleted {
				t.Errorf("completed = %d, want %d (%v)", got, tt.wantCompleted, results[0].Summary.ErrorKind)
			}
			recs := srv.Records()
			if len(recs) != len(tt.wantSent) {
				t.Fatalf("server saw %d requests, want %d", len(recs), len(tt.wantSent))
			}
			for i, r := range recs {
				if r.IgnoreEOS != tt.wantSent[i] {
					t.Errorf("request %d ignore_eos = %v, want %v", i, r.IgnoreEOS, tt.wantSent[i])
				}
				if r.MaxTokens != 3 {
					t.Errorf("request %d max_tokens = %d, want 3", i, r.MaxTokens)
				}
			}
		})
	}
}

func TestRateStepFollowsSeededPoissonArrivals(t *testing.T) {
	const rate, n = 40.0, 12
	srv := benchtest.New(benchtest.Constant(benchtest.Behaviour{TTFT: 5 * time.Millisecond, ITL: 2 * time.Millisecond}))
	defer srv.Close()
	results, err := Run(context.Background(), Config{
		Target:   Target{BaseURL: srv.URL, Model: "m", API: APIChat, Timeout: time.Second},
		Workload: Synthetic{InputLen: FixedLength(4), OutputLen: FixedLength(4)},
		Load:     Load{Steps: []Step{{Rate: rate}}, Requests: n},
		Seed:     7,
	})
	if err != nil {
		t.Fatal(err)
	}
	step := results[0]
	if step.Summary.Rate != rate || step.Summary.Concurrency != 0 || step.Summary.Completed != n {
		t.Fatalf("summary rate=%v concurrency=%d completed=%d", step.Summary.Rate, step.Summary.Concurrency, step.Summary.Completed)
	}
	// The schedule is the same seeded exponential sequence the runner uses.
	rng := newRNG(7 ^ 0xa55a)
	var at float64
	for i, x := range step.Samples {
		if math.Abs(x.StartMs-at) > 15 {
			t.Errorf("request %d sent at %.1f ms, scheduled at %.1f ms", i, x.StartMs, at)
		}
		at += rng.ExpFloat64() / rate * 1000
	}
}

func TestRateStepMaxConcurrency(t *testing.T) {
	srv := benchtest.New(benchtest.Constant(benchtest.Behaviour{TTFT: 30 * time.Millisecond, ITL: time.Millisecond}))
	defer srv.Close()
	results, err := Run(context.Background(), Config{
		Target:   Target{BaseURL: srv.URL, Model: "m", API: APIChat, Timeout: time.Second},
		Workload: Synthetic{InputLen: FixedLength(4), OutputLen: FixedLength(2)},
		Load:     Load{Steps: []Step{{Rate: 1000}}, Requests: 6, MaxConcurrency: 2},
	})
	if err != nil {
		t.Fatal(err)
	}
	// At most 2 in flight: the server never overlaps more than 2 requests.
	recs := srv.Records()
	for _, a := range recs {
		overlap := 0
		for _, b := range recs {
			if !b.Arrived.After(a.Arrived) && b.Ended.After(a.Arrived) {
				overlap++
			}
		}
		if overlap > 2 {
			t.Errorf("request %d overlapped %d requests in flight, want at most 2", a.N, overlap)
		}
	}
	if results[0].Summary.Completed != 6 {
		t.Errorf("completed = %d, want 6", results[0].Summary.Completed)
	}
}

// TestDurationBoundStopsStep runs steps bounded by time alone: Run returns
// (a step that ignored the bound would run until the test's timeout), each
// step issues no request after the bound, and every request it issued
// reached the server and ran to its end.
func TestDurationBoundStopsStep(t *testing.T) {
	srv := benchtest.New(benchtest.Constant(benchtest.Behaviour{TTFT: 10 * time.Millisecond, ITL: 5 * time.Millisecond}))
	defer srv.Close()
	results, err := Run(context.Background(), Config{
		Target:   Target{BaseURL: srv.URL, Model: "m", API: APIChat, Timeout: time.Second},
		Workload: Synthetic{InputLen: FixedLength(4), OutputLen: FixedLength(4)},
		Load:     Load{Steps: []Step{{Concurrency: 2}, {Rate: 100}}, Duration: 150 * time.Millisecond},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(results) != 2 {
		t.Fatalf("%d step results, want 2", len(results))
	}
	issued := 0
	for _, r := range results {
		issued += len(r.Samples)
		s := r.Summary
		if s.Completed == 0 || s.Errors != 0 {
			t.Errorf("step %+v: completed=%d errors=%v", s, s.Completed, s.ErrorKind)
		}
		for _, x := range r.Samples {
			if x.StartMs > 150 {
				t.Errorf("request %d issued at %.1f ms, after the 150 ms bound", x.ID, x.StartMs)
			}
		}
	}
	if got := len(srv.Records()); got != issued {
		t.Errorf("the server saw %d requests, the steps report %d", got, issued)
	}
}

func TestCancelledRunStopsAndReports(t *testing.T) {
	srv := benchtest.New(benchtest.Constant(benchtest.Behaviour{Hang: true}))
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	results, err := Run(ctx, Config{
		Target:   Target{BaseURL: srv.URL, Model: "m", API: APIChat, Timeout: 10 * time.Second},
		Workload: Synthetic{InputLen: FixedLength(4), OutputLen: FixedLength(4)},
		Load:     Load{Steps: []Step{{Concurrency: 2}, {Concurrency: 4}}, Requests: 4},
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if len(results) != 1 || results[0].Summary.ErrorKind[ErrCancelled] != 2 {
		t.Fatalf("results = %+v, want one step with 2 cancelled requests", results)
	}
}

func TestAgentSessionPromptGrowsByAnswerAndNewMessage(t *testing.T) {
	for _, api := range []API{APIChat, APIMessages, APICompletions} {
		t.Run(string(api), func(t *testing.T) {
			srv := benchtest.New(benchtest.Constant(benchtest.Behaviour{ITL: time.Millisecond}))
			defer srv.Close()
			w := AgentSessions{InputLen: FixedLength(40), OutputLen: FixedLength(6), TurnLen: FixedLength(10), Turns: FixedLength(3)}
			results, err := Run(context.Background(), Config{
				Target:   Target{BaseURL: srv.URL, Model: "m", API: api, Timeout: time.Second},
				Workload: w,
				Load:     Load{Steps: []Step{{Concurrency: 1}}, Requests: 6},
			})
			if err != nil {
				t.Fatal(err)
			}
			recs := srv.Records()
			if len(recs) != 6 {
				t.Fatalf("server saw %d requests, want 6 (two sessions of 3 turns)", len(recs))
			}
			for i, r := range recs {
				turn := i % 3
				// Words: system 40 + user 10 per turn + answer 6 per earlier turn;
				// the completions transcript adds one role word per message
				// plus the trailing "Assistant:".
				want := 40 + 10*(turn+1) + 6*turn
				if api == APICompletions {
					want += 2 + 2*turn + 1
				}
				if r.PromptTokens != want {
					t.Errorf("request %d (turn %d) prompt = %d words, want %d", i, turn, r.PromptTokens, want)
				}
				if api == APIChat && r.Messages != 2+2*turn {
					t.Errorf("request %d sent %d messages, want %d", i, r.Messages, 2+2*turn)
				}
			}
			for i, x := range results[0].Samples {
				if x.Session != i/3 || x.Turn != i%3 {
					t.Errorf("sample %d is session %d turn %d, want %d/%d", i, x.Session, x.Turn, i/3, i%3)
				}
			}
		})
	}
}

func TestSessionEndsAtFirstFailure(t *testing.T) {
	srv := benchtest.New(func(n int) benchtest.Behaviour {
		if n == 1 {
			return benchtest.Behaviour{Status: 503}
		}
		return benchtest.Behaviour{ITL: time.Millisecond}
	})
	defer srv.Close()
	w := AgentSessions{InputLen: FixedLength(5), OutputLen: FixedLength(2), TurnLen: FixedLength(2), Turns: FixedLength(3)}
	results, err := Run(context.Background(), Config{
		Target:   Target{BaseURL: srv.URL, Model: "m", API: APIChat, Timeout: time.Second},
		Workload: w,
		Load:     Load{Steps: []Step{{Concurrency: 1}}, Requests: 5},
	})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, x := range results[0].Samples {
		got = append(got, strings.Join([]string{string(rune('0' + x.Session)), string(rune('0' + x.Turn))}, "/"))
	}
	// Session 0 fails at turn 1 and is dropped; session 1 runs its 3 turns.
	if want := "0/0 0/1 1/0 1/1 1/2"; strings.Join(got, " ") != want {
		t.Errorf("session/turn order = %s, want %s", strings.Join(got, " "), want)
	}
}
