package cpu

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestRoPETableFollowsItsInputs: the cached cos/sin table is rebuilt when
// the positions or frequencies change, even in place in the same slices,
// so every call matches a fresh backend bit for bit.
func TestRoPETableFollowsItsInputs(t *testing.T) {
	rng := rand.New(rand.NewPCG(10, 10))
	const heads, hd = 2, 8
	pos := []int32{3, 4}
	inv := []float32{1, 0.1, 0.01, 0.001}
	be := New(1)
	defer be.Close()
	for _, step := range []struct {
		name   string
		change func()
	}{
		{"first", func() {}},
		{"same inputs", func() {}},
		{"positions changed in place", func() { pos[0], pos[1] = 9, 10 }},
		{"one more row", func() { pos = append(pos, 11) }},
		{"frequencies changed in place", func() { inv[1] = 0.2 }},
	} {
		step.change()
		x := randVec(rng, len(pos)*heads*hd)
		want := append([]float32(nil), x...)
		fresh := New(1)
		fresh.RoPE(want, pos, heads, hd, inv)
		fresh.Close()
		be.RoPE(x, pos, heads, hd, inv)
		for i := range want {
			if math.Float32bits(x[i]) != math.Float32bits(want[i]) {
				t.Fatalf("%s: x[%d] = %v, fresh backend %v", step.name, i, x[i], want[i])
			}
		}
	}
}
