package sse

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
)

// maxLineBytes bounds one line of the stream. Chat chunks are small, but a
// server may put a whole non-streamed answer in one data line.
const maxLineBytes = 16 << 20

// ErrTruncated reports a stream that ended in the middle of an event (data
// was read but the blank line that dispatches it never came).
var ErrTruncated = errors.New("sse: stream ended inside an event")

// Event is one dispatched event. Type is "" when the stream gave no event
// field (the standard calls that a "message" event).
type Event struct {
	Type string
	Data string
	ID   string
}

// Reader parses events from a stream.
type Reader struct {
	lines *bufio.Scanner
}

// NewReader returns a Reader over r.
func NewReader(r io.Reader) *Reader {
	s := bufio.NewScanner(r)
	s.Buffer(make([]byte, 0, 64<<10), maxLineBytes)
	s.Split(splitLines)
	return &Reader{lines: s}
}

// Next returns the next event that carries data or a type. It returns io.EOF
// when the stream ends between events and ErrTruncated when it ends inside one.
func (r *Reader) Next() (Event, error) {
	var (
		ev      Event
		data    strings.Builder
		hasData bool
		started bool // a field of the current event has been read
	)
	for r.lines.Scan() {
		line := r.lines.Text()
		if line == "" {
			if hasData || ev.Type != "" {
				ev.Data = data.String()
				return ev, nil
			}
			// A blank line after only comments or ids dispatches nothing.
			started = false
			continue
		}
		if line[0] == ':' {
			continue // comment, often a keep-alive
		}
		started = true
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "data":
			if hasData {
				data.WriteByte('\n')
			}
			data.WriteString(value)
			hasData = true
		case "event":
			ev.Type = value
		case "id":
			ev.ID = value
		}
		// "retry" and unknown fields are ignored, as the standard says.
	}
	if err := r.lines.Err(); err != nil {
		return Event{}, fmt.Errorf("sse: reading stream: %w", err)
	}
	if started && (hasData || ev.Type != "") {
		return Event{}, ErrTruncated
	}
	return Event{}, io.EOF
}

// splitLines is a bufio.SplitFunc that ends a line at LF, CRLF or a lone CR.
func splitLines(data []byte, atEOF bool) (advance int, token []byte, err error) {
	if atEOF && len(data) == 0 {
		return 0, nil, nil
	}
	i := bytes.IndexAny(data, "\r\n")
	if i < 0 {
		if atEOF {
			return len(data), data, nil
		}
		return 0, nil, nil // need more data
	}
	if data[i] == '\n' {
		return i + 1, data[:i], nil
	}
	// A CR: it may be the first half of CRLF, which may not have arrived yet.
	if i+1 < len(data) {
		if data[i+1] == '\n' {
			return i + 2, data[:i], nil
		}
		return i + 1, data[:i], nil
	}
	if atEOF {
		return i + 1, data[:i], nil
	}
	return 0, nil, nil
}
