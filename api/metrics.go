package api

import (
	"fmt"
	"io"
	"sync/atomic"

	"github.com/valyala/fasthttp"
)

// serverMetrics counts HTTP traffic. Counters are atomics so handlers never
// contend on a lock.
type serverMetrics struct {
	responses [6]atomic.Int64 // by status class: index 1..5 for 1xx..5xx
	rejected  atomic.Int64    // 429s from the waiting bound
	cancelled atomic.Int64    // streams whose client went away
}

func newServerMetrics() *serverMetrics { return &serverMetrics{} }

// countRequest records the response status of a finished handler.
func (m *serverMetrics) countRequest(ctx *fasthttp.RequestCtx) {
	class := ctx.Response.StatusCode() / 100
	if class >= 1 && class <= 5 {
		m.responses[class].Add(1)
	}
}

// write emits the counters in the Prometheus text format.
func (m *serverMetrics) write(w io.Writer, inFlight int64, ready bool) {
	fmt.Fprintln(w, "# HELP splash_http_responses_total HTTP responses by status class.")
	fmt.Fprintln(w, "# TYPE splash_http_responses_total counter")
	for class := 1; class <= 5; class++ {
		fmt.Fprintf(w, "splash_http_responses_total{code=\"%dxx\"} %d\n", class, m.responses[class].Load())
	}
	fmt.Fprintln(w, "# HELP splash_http_rejected_total Generation requests refused with 429 because too many were waiting.")
	fmt.Fprintln(w, "# TYPE splash_http_rejected_total counter")
	fmt.Fprintf(w, "splash_http_rejected_total %d\n", m.rejected.Load())
	fmt.Fprintln(w, "# HELP splash_http_client_disconnects_total Streams cancelled because the client went away.")
	fmt.Fprintln(w, "# TYPE splash_http_client_disconnects_total counter")
	fmt.Fprintf(w, "splash_http_client_disconnects_total %d\n", m.cancelled.Load())
	fmt.Fprintln(w, "# HELP splash_http_generations_in_flight Sequences (each choice of a request) admitted and not finished.")
	fmt.Fprintln(w, "# TYPE splash_http_generations_in_flight gauge")
	fmt.Fprintf(w, "splash_http_generations_in_flight %d\n", inFlight)
	r := 0
	if ready {
		r = 1
	}
	fmt.Fprintln(w, "# HELP splash_ready Whether the model is loaded and warmed up.")
	fmt.Fprintln(w, "# TYPE splash_ready gauge")
	fmt.Fprintf(w, "splash_ready %d\n", r)
}
