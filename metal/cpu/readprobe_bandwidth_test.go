package cpu

import "testing"

func TestReadBandwidthIsPositive(t *testing.T) {
	be := New(2)
	defer be.Close()
	if bw := be.ReadBandwidth(4 << 20); !(bw > 0) {
		t.Fatalf("ReadBandwidth = %v bytes/s", bw)
	}
}
