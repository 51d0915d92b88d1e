package metal

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestQuantizeKV checks the q8 cache's rounding: every value within half a
// step of its group's scale, the largest magnitude at ±127, zeros and
// non-finite groups as documented, and dequantization exact (the float32
// product of an int8 and a float16 scale).
func TestQuantizeKV(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	cases := map[string][]float32{"zeros": make([]float32, 64)}
	for _, scale := range []float32{1e-6, 0.01, 1, 300} {
		x := make([]float32, 96)
		for i := range x {
			x[i] = float32(rng.NormFloat64()) * scale
		}
		cases[string(rune('a'+len(cases)))] = x
	}
	tiny := make([]float32, 32)
	tiny[3] = 1e-9 // its scale underflows float16 to zero
	cases["tiny"] = tiny
	for name, x := range cases {
		q, sc, back := make([]int8, len(x)), make([]uint16, len(x)/KVGroup), make([]float32, len(x))
		QuantizeKV(q, sc, x)
		DequantizeKV(back, q, sc)
		for g := 0; g < len(x); g += KVGroup {
			d := F16ToF32(sc[g/KVGroup])
			amax, top := float32(0), 0
			for i, v := range x[g : g+KVGroup] {
				if a := float32(math.Abs(float64(v))); a > amax {
					amax, top = a, g+i
				}
			}
			// A scale below float16's normal range (max|x| under about
			// 0.008) is rounded coarsely, and under 2^-25 it is zero:
			// such groups are only checked to stay that small.
			normal := d >= 0x1p-14
			if normal && (q[top] != 127 && q[top] != -127) {
				t.Errorf("%s: the group's largest magnitude %g became %d, want ±127", name, x[top], q[top])
			}
			for i := g; i < g+KVGroup; i++ {
				if want := float32(q[i]) * d; back[i] != want {
					t.Fatalf("%s: DequantizeKV[%d] = %g, want %g", name, i, back[i], want)
				}
				bound := float64(d) / 2 * 1.0001
				if !normal {
					bound = 0x1p-14
				}
				if err := math.Abs(float64(back[i] - x[i])); err > bound {
					t.Errorf("%s: x[%d] = %g came back %g, more than half a step %g off", name, i, x[i], back[i], d)
				}
			}
		}
	}
	// A group holding Inf or NaN dequantizes to NaN, as a float16 cache keeps it non-finite.
	x := make([]float32, 32)
	x[0], x[1] = float32(math.Inf(1)), 1
	q, sc, back := make([]int8, 32), make([]uint16, 1), make([]float32, 32)
	QuantizeKV(q, sc, x)
	DequantizeKV(back, q, sc)
	if !math.IsNaN(float64(back[1])) {
		t.Errorf("a group with Inf dequantized its 1 to %g, want NaN", back[1])
	}
}

func TestKVTypeSizes(t *testing.T) {
	for _, tc := range []struct {
		typ                   KVType
		bs, hd, row, head, tb int
	}{
		{KVF16, 16, 128, 128, 16 * 128, 2 * 2 * 8 * 128},
		{KVQ8, 16, 128, 64, 16 * (64 + 4), 2 * 2 * 8 * 68},
		{KVQ8, 4, 32, 16, 4 * 17, 2 * 2 * 8 * 17},
		{KVF32, 16, 128, 256, 16 * 256, 2 * 4 * 8 * 128}, // 4 bytes a value
	} {
		if got := tc.typ.RowElems(tc.hd); got != tc.row {
			t.Errorf("%v.RowElems(%d) = %d, want %d", tc.typ, tc.hd, got, tc.row)
		}
		if got := tc.typ.HeadElems(tc.bs, tc.hd); got != tc.head {
			t.Errorf("%v.HeadElems(%d, %d) = %d, want %d", tc.typ, tc.bs, tc.hd, got, tc.head)
		}
		if got := tc.typ.TokenBytes(8, tc.hd); got != tc.tb {
			t.Errorf("%v.TokenBytes(8, %d) = %d, want %d", tc.typ, tc.hd, got, tc.tb)
		}
		c := NewKVCache(tc.typ, 2, 3, tc.bs, 8, tc.hd)
		if got := c.BytesPerToken(); got != 2*tc.tb {
			t.Errorf("%v cache: BytesPerToken %d, want %d", tc.typ, got, 2*tc.tb)
		}
	}
}

func TestParseKVType(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want KVType
		ok   bool
	}{{"f16", KVF16, true}, {"q8", KVQ8, true}, {"q8_0", KVQ8, true}, {"bf16", KVBF16, true}, {"f32", KVF32, true}, {"q4", 0, false}, {"", 0, false}} {
		got, err := ParseKVType(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("ParseKVType(%q) = %v, %v", tc.in, got, err)
		}
		if tc.ok && got.String() != tc.in && tc.in != "q8_0" {
			t.Errorf("%v.String() = %q, want %q", got, got.String(), tc.in)
		}
	}
	if err := KVQ8.Check(16, 40); err == nil {
		t.Error("a q8 cache took heads of 40")
	}
	for _, bad := range [][2]int{{16, 48}, {12, 64}, {4, 128}} {
		if err := KVBF16.Check(bad[0], bad[1]); err == nil {
			t.Errorf("a bf16 cache took blocks of %d and heads of %d", bad[0], bad[1])
		}
	}
	if err := KVBF16.Check(16, 128); err != nil {
		t.Errorf("a bf16 cache refused blocks of 16 and heads of 128: %v", err)
	}
	defer func() {
		if recover() == nil {
			t.Error("NewKVLayer made a q8 layer of heads of 40")
		}
	}()
	NewKVLayer(KVQ8, 1, 16, 1, 40)
}

func TestAutoKVType(t *testing.T) {
	for _, tc := range []struct {
		name      string
		blockSize int
		dims      []int
		speedup   float64
		want      KVType
		why       string
	}{
		{"fast bf16", 32, []int{128}, 1.46, KVBF16, "1.46×"},
		{"fast bf16 with a draft", 16, []int{128, 64}, 1.46, KVBF16, "1.46×"},
		{"no faster", 32, []int{128}, 1, KVF16, "no faster"},
		{"unknown speed", 32, []int{128}, 0, KVF16, "no faster"},
		{"heads of 16", 32, []int{16}, 1.46, KVF16, "heads of 16"},
		{"a draft's heads of 16", 32, []int{128, 16}, 1.46, KVF16, "heads of 16"},
		{"blocks of 12", 12, []int{128}, 1.46, KVF16, "blocks of 12"},
	} {
		got, why := AutoKVType(tc.blockSize, tc.dims, tc.speedup)
		if got != tc.want || !strings.Contains(why, tc.why) {
			t.Errorf("%s: got %v (%q), want %v (%q)", tc.name, got, why, tc.want, tc.why)
		}
	}
}
