// Command fakellm serves the benchtest fake LLM on a local port, so that
// `splash bench` can be tried end to end without a model:
//
//	go run ./bench/benchtest/fakellm --addr 127.0.0.1:8099 --ttft 50ms --itl 10ms &
//	go run ./cmd/splash bench --base-url http://127.0.0.1:8099 --concurrency 1,2,4 --requests 16
//
// Every request gets the scripted delays and max_tokens tokens (or --tokens).
package main

import (
	"flag"
	"fmt"
	"net/http"
	"os"
	"time"

	"github.com/splash-inference/splash/bench/benchtest"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8099", "address to listen on (keep it on loopback)")
	ttft := flag.Duration("ttft", 50*time.Millisecond, "time to first token")
	itl := flag.Duration("itl", 10*time.Millisecond, "time between chunks")
	tokens := flag.Int("tokens", 0, "tokens per response (0: the request's max_tokens)")
	perChunk := flag.Int("tokens-per-chunk", 1, "tokens per streamed chunk")
	noUsage := flag.Bool("no-usage", false, "leave out usage reports")
	flag.Parse()

	srv := benchtest.New(benchtest.Constant(benchtest.Behaviour{
		TTFT: *ttft, ITL: *itl, Tokens: *tokens, TokensPerChunk: *perChunk, NoUsage: *noUsage,
	}))
	defer srv.Close()
	fmt.Fprintf(os.Stderr, "fakellm: serving on http://%s (ttft %v, itl %v)\n", *addr, *ttft, *itl)
	if err := http.ListenAndServe(*addr, srv.Config.Handler); err != nil {
		fmt.Fprintln(os.Stderr, "fakellm:", err)
		os.Exit(1)
	}
}
