package sse

import (
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
)

func TestReaderEvents(t *testing.T) {
	tests := []struct {
		name    string
		stream  string
		want    []Event
		wantErr error
	}{
		{
			name:   "openai style with done",
			stream: "data: {\"a\":1}\n\ndata: [DONE]\n\n",
			want:   []Event{{Data: `{"a":1}`}, {Data: "[DONE]"}},
		},
		{
			name:   "comments and keepalives are skipped",
			stream: ": ping\n\n:another\ndata: x\n\n",
			want:   []Event{{Data: "x"}},
		},
		{
			name:   "multi-line data joined with newline",
			stream: "data: one\ndata: two\ndata:three\n\n",
			want:   []Event{{Data: "one\ntwo\nthree"}},
		},
		{
			name:   "anthropic style typed events",
			stream: "event: message_start\ndata: {}\n\nevent: ping\ndata: {\"type\": \"ping\"}\n\n",
			want:   []Event{{Type: "message_start", Data: "{}"}, {Type: "ping", Data: `{"type": "ping"}`}},
		},
		{
			name:   "crlf line endings",
			stream: "event: e\r\ndata: a\r\n\r\ndata: b\r\n\r\n",
			want:   []Event{{Type: "e", Data: "a"}, {Data: "b"}},
		},
		{
			name:   "lone cr line endings",
			stream: "data: a\r\rdata: b\r\r",
			want:   []Event{{Data: "a"}, {Data: "b"}},
		},
		{
			name:   "id and retry fields",
			stream: "id: 7\nretry: 100\ndata: z\n\n",
			want:   []Event{{ID: "7", Data: "z"}},
		},
		{
			name:    "truncated final event",
			stream:  "data: a\n\ndata: partial",
			want:    []Event{{Data: "a"}},
			wantErr: ErrTruncated,
		},
		{
			name:   "empty data field still dispatches",
			stream: "data\n\n",
			want:   []Event{{Data: ""}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := NewReader(strings.NewReader(tt.stream))
			var got []Event
			var err error
			for {
				var ev Event
				ev, err = r.Next()
				if err != nil {
					break
				}
				got = append(got, ev)
			}
			want := tt.wantErr
			if want == nil {
				want = io.EOF
			}
			if !errors.Is(err, want) {
				t.Fatalf("final error = %v, want %v", err, want)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("events = %#v, want %#v", got, tt.want)
			}
		})
	}
}

func TestReaderLongLine(t *testing.T) {
	long := strings.Repeat("x", 1<<20)
	r := NewReader(strings.NewReader("data: " + long + "\n\n"))
	ev, err := r.Next()
	if err != nil {
		t.Fatal(err)
	}
	if len(ev.Data) != len(long) {
		t.Fatalf("data length %d, want %d", len(ev.Data), len(long))
	}
}
