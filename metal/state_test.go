package metal

import "testing"

func TestStateLayerSlots(t *testing.T) {
	l := NewStateLayer(3, 4)
	for s := range int32(3) {
		x, err := l.Slot(s)
		if err != nil || len(x) != 4 || cap(x) != 4 {
			t.Fatalf("slot %d: %d floats (cap %d), %v", s, len(x), cap(x), err)
		}
		x[0] = float32(s + 1)
	}
	for s := range 3 {
		if got := l.Data[s*4]; got != float32(s+1) {
			t.Errorf("slot %d starts at Data[%d] = %g", s, s*4, got)
		}
	}
	for _, bad := range []int32{-1, 3} {
		if _, err := l.Slot(bad); err == nil {
			t.Errorf("slot %d of 3 accepted", bad)
		}
	}
}
