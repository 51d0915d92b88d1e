package cpu

import "testing"

func TestReadBandwidthIsPositive(t *testing.T) {
	be := New(2)
	defer be.Close()
	if bw := be.ReadBandwidth(4 << 20); !(bw > 0) {
		t.Fatalf("ReadBandwidth = %v bytes/s", bw)
	}
}

// TestReadProbeReadWraps checks what Read reads: whole MiB, at most the
// buffer, consecutive stretches starting again from the front when the
// next would run past the end.
func TestReadProbeReadWraps(t *testing.T) {
	be := New(2)
	defer be.Close()
	p := be.NewReadProbe(4 << 20)
	for i, c := range []struct{ n, bytes, next int }{
		{1, 1 << 20, 1},
		{3 << 20, 3 << 20, 4},
		{(1 << 20) + 1, 2 << 20, 2},
		{2 << 20, 2 << 20, 4},
		{9 << 20, 4 << 20, 4},
	} {
		got, d := p.Read(c.n)
		if got != c.bytes || p.next != c.next || d <= 0 {
			t.Errorf("read %d (%d bytes): got %d bytes in %v, next MiB %d; want %d bytes, next %d", i, c.n, got, d, p.next, c.bytes, c.next)
		}
	}
}
