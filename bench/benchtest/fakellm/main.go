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
