package bench_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/splash-inference/splash/bench"
	"github.com/splash-inference/splash/bench/benchtest"
)

// Replays a JSONL file with one two-turn session and one single request
// against a fake server, two requests in flight.
func Example() {
	srv := benchtest.New(benchtest.Constant(benchtest.Behaviour{TTFT: 5 * time.Millisecond, ITL: time.Millisecond}))
	defer srv.Close()

	dir, _ := os.MkdirTemp("", "bench-example")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "requests.jsonl")
	_ = os.WriteFile(path, []byte(`{"session": "s1", "messages": [{"role": "user", "content": "write a test"}], "max_tokens": 4}
{"prompt": "hello", "max_tokens": 3}
{"session": "s1", "messages": [{"role": "user", "content": "now run it"}], "max_tokens": 5}
`), 0o644)
	workload, err := bench.LoadFile(path, bench.FixedLength(8))
	if err != nil {
		fmt.Println(err)
		return
	}
	steps, err := bench.Run(context.Background(), bench.Config{
		Target:   bench.Target{BaseURL: srv.URL, Model: "fake-model", API: bench.APIChat, Timeout: 5 * time.Second},
		Workload: workload,
		Load:     bench.Load{Steps: []bench.Step{{Concurrency: 2}}, Requests: 100},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	s := steps[0].Summary
	fmt.Printf("%d requests, %d completed, %d output tokens (from %s)\n", s.Requests, s.Completed, s.OutputTokens, s.OutputTokensSource)
	for _, r := range srv.Records() {
		if r.Messages == 3 {
			fmt.Println("the second turn carried the first turn, its answer and the new message")
		}
	}
	// Output:
	// 3 requests, 3 completed, 12 output tokens (from usage)
	// the second turn carried the first turn, its answer and the new message
}
