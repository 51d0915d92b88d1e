// Package sse reads a Server-Sent Events stream (the text/event-stream format
// of the WHATWG HTML standard) one event at a time.
//
// It is written for benchmark clients: it accepts every line ending the
// standard allows (LF, CRLF and a lone CR), skips comment lines (": ping"),
// joins multi-line data fields with "\n", and hands each event back as soon
// as the blank line that ends it has been read, so the caller can timestamp
// it. It does not reconnect: a benchmark wants to see a dropped stream.
//
//	r := sse.NewReader(resp.Body)
//	for {
//		ev, err := r.Next()
//		if err == io.EOF {
//			break // stream ended cleanly between events
//		}
//		...
//	}
package sse
