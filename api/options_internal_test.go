package api

import "testing"

// TestDefaultMaxConnections: the default cap leaves fdReserve descriptors
// under the open-file limit, never the whole of a small limit.
func TestDefaultMaxConnections(t *testing.T) {
	tests := []struct{ limit, want int }{
		{0, DefaultMaxConnections}, // unknown
		{1 << 20, DefaultMaxConnections},
		{DefaultMaxConnections + fdReserve, DefaultMaxConnections},
		{512, 512 - fdReserve},
		{100, 50},
		{1, 1},
	}
	for _, tt := range tests {
		if got := defaultMaxConnections(tt.limit); got != tt.want {
			t.Errorf("limit %d: %d, want %d", tt.limit, got, tt.want)
		}
	}
}
