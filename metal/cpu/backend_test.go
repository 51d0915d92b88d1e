package cpu

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/splash-inference/splash/metal"
)

func randVec(rng *rand.Rand, n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(rng.NormFloat64())
	}
	return v
}

// randF16 is n normally distributed values as float16 bits.
func randF16(rng *rand.Rand, n int) []uint16 {
	h := make([]uint16, n)
	for i := range h {
		h[i] = metal.F32ToF16(float32(rng.NormFloat64()))
	}
	return h
}

func maxRelErr(got []float32, want []float64) float64 {
	d, m := 0.0, 1e-30
	for i := range want {
		d = math.Max(d, math.Abs(float64(got[i])-want[i]))
		m = math.Max(m, math.Abs(want[i]))
	}
	return d / m
}

func TestMatMulMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	be := New(2)
	defer be.Close()
	for _, d := range []metal.DType{metal.F32, metal.F16, metal.BF16, metal.Q8, metal.Q4} {
		for _, shape := range [][3]int{{1, 1, 32}, {3, 17, 64}, {7, 33, 96}, {16, 130, 160}} {
			rows, out, in := shape[0], shape[1], shape[2]
			w, err := metal.Quantize(d, randVec(rng, out*in), out, in)
			if err != nil {
				t.Fatal(err)
			}
			deq := w.Dequantize()
			x := randVec(rng, rows*in)
			xr := x // what the kernels multiply: int8 activations for q8/q4 weights
			if d.Quantized() {
				var a qacts
				a.quantize(x, rows, in, quantGroupsRef)
				xr = make([]float32, len(x))
				for i := range xr {
					xr[i] = float32(a.q[i]) * a.scale[i/32]
				}
			}
			want := make([]float64, rows*out)
			for r := 0; r < rows; r++ {
				for o := 0; o < out; o++ {
					for i := 0; i < in; i++ {
						want[r*out+o] += float64(xr[r*in+i]) * float64(deq[o*in+i])
					}
				}
			}
			got := make([]float32, rows*out)
			be.MatMul(got, x, rows, w)
			if e := maxRelErr(got, want); e > 1e-5 {
				t.Errorf("%s %v: relative error %g", d, shape, e)
			}
		}
	}
}

// TestMatMulBatchInvariant: a row's result is bit-identical whatever the
// number of rows in the call and the number of threads.
func TestMatMulBatchInvariant(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 2))
	one, two := New(1), New(2)
	defer one.Close()
	defer two.Close()
	for _, d := range []metal.DType{metal.F32, metal.BF16, metal.Q8, metal.Q4} {
		const out, in = 67, 224
		w, _ := metal.Quantize(d, randVec(rng, out*in), out, in)
		x := randVec(rng, 7*in)
		alone := make([]float32, out)
		one.MatMul(alone, x[3*in:4*in], 1, w)
		batch := make([]float32, 7*out)
		two.MatMul(batch, x, 7, w)
		for o := range alone {
			if math.Float32bits(alone[o]) != math.Float32bits(batch[3*out+o]) {
				t.Fatalf("%s: output %d alone %v, in batch %v", d, o, alone[o], batch[3*out+o])
			}
		}
	}
}

func TestMatMulDoesNotAllocate(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	be := New(2)
	defer be.Close()
	w, _ := metal.Quantize(metal.Q4, randVec(rng, 256*256), 256, 256)
	x, out := randVec(rng, 4*256), make([]float32, 4*256)
	for _, prepared := range []bool{false, true} {
		if prepared {
			be.PrepareWeights(w) // the packed kernels, where the CPU has them
		}
		for _, rows := range []int{1, 4} {
			be.MatMul(out, x, rows, w) // warm up per-worker scratch
			if n := testing.AllocsPerRun(20, func() { be.MatMul(out, x, rows, w) }); n != 0 {
				t.Fatalf("prepared=%v rows %d: MatMul allocates %v times per call", prepared, rows, n)
			}
		}
	}
}

func TestElementwise(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	be := New(1)
	defer be.Close()
	const dim = 48
	x, g := randVec(rng, 3*dim), randVec(rng, dim)
	out := make([]float32, len(x))
	be.RMSNorm(out, x, g, dim, 1e-5)
	want := make([]float64, len(x))
	for r := 0; r < 3; r++ {
		ss := 0.0
		for _, v := range x[r*dim : (r+1)*dim] {
			ss += float64(v) * float64(v)
		}
		inv := 1 / math.Sqrt(ss/dim+1e-5)
		for i := 0; i < dim; i++ {
			want[r*dim+i] = float64(x[r*dim+i]) * inv * float64(g[i])
		}
	}
	if e := maxRelErr(out, want); e > 1e-6 {
		t.Errorf("RMSNorm relative error %g", e)
	}

	gate, up := randVec(rng, 50), randVec(rng, 50)
	wantS := make([]float64, 50)
	for i := range gate {
		v := float64(gate[i])
		wantS[i] = v / (1 + math.Exp(-v)) * float64(up[i])
	}
	be.SiLUMul(gate, up)
	if e := maxRelErr(gate, wantS); e > 1e-6 {
		t.Errorf("SiLUMul relative error %g", e)
	}

	// RoPE: 2 rows, 3 heads of 8, rotate-half pairs (i, i+4).
	const heads, hd = 3, 8
	q := randVec(rng, 2*heads*hd)
	inv := []float32{1, 0.1, 0.01, 0.001}
	pos := []int32{5, 1000}
	wantR := make([]float64, len(q))
	for r, p := range pos {
		for h := 0; h < heads; h++ {
			b := (r*heads + h) * hd
			for i := 0; i < hd/2; i++ {
				a := float64(p) * float64(inv[i])
				x0, x1 := float64(q[b+i]), float64(q[b+i+hd/2])
				wantR[b+i] = x0*math.Cos(a) - x1*math.Sin(a)
				wantR[b+i+hd/2] = x0*math.Sin(a) + x1*math.Cos(a)
			}
		}
	}
	be.RoPE(q, pos, heads, hd, inv)
	if e := maxRelErr(q, wantR); e > 1e-6 {
		t.Errorf("RoPE relative error %g", e)
	}
}

// TestAttentionPaged compares paged attention through a scrambled block
// table with a float64 computation over contiguous keys and values.
func TestAttentionPaged(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	for _, tc := range []struct {
		typ                       metal.KVType
		heads, kvHeads, hd, bs, n int
	}{
		{metal.KVF16, 4, 2, 16, 4, 13}, {metal.KVF16, 2, 2, 8, 16, 40}, {metal.KVF16, 8, 1, 32, 5, 23},
		// several chunks of attnChunk positions, the last one partial
		{metal.KVF16, 4, 2, 16, 16, 150}, {metal.KVF16, 2, 1, 8, 5, 131}, {metal.KVF16, 4, 4, 16, 32, 200},
		{metal.KVQ8, 8, 1, 32, 5, 23}, {metal.KVQ8, 4, 2, 64, 16, 150}, {metal.KVQ8, 16, 8, 128, 16, 200},
		{metal.KVBF16, 4, 2, 32, 8, 13}, {metal.KVBF16, 4, 2, 32, 16, 150}, {metal.KVBF16, 16, 8, 128, 16, 200},
		{metal.KVBF16, 6, 2, 64, 32, 77}, // groups of three query heads
		{metal.KVF32, 4, 2, 16, 4, 13}, {metal.KVF32, 8, 1, 32, 5, 23}, {metal.KVF32, 4, 2, 64, 16, 150}, {metal.KVF32, 16, 8, 128, 16, 200},
	} {
		be := New(2)
		dim := tc.kvHeads * tc.hd
		nb := (tc.n+tc.bs-1)/tc.bs + 3
		layer := metal.NewKVLayer(tc.typ, nb, tc.bs, tc.kvHeads, tc.hd)
		kv := &layer
		perm := rng.Perm(nb)
		table := make([]int32, (tc.n+tc.bs-1)/tc.bs)
		for i := range table {
			table[i] = int32(perm[i])
		}
		keys, vals := randVec(rng, tc.n*dim), randVec(rng, tc.n*dim)
		// The cache keeps float16, bfloat16 or q8: the reference computes
		// with the values WriteKV stores (float32 ones as they are).
		for i := range keys {
			switch tc.typ {
			case metal.KVF16:
				keys[i] = metal.F16ToF32(metal.F32ToF16(keys[i]))
				vals[i] = metal.F16ToF32(metal.F32ToF16(vals[i]))
			case metal.KVBF16:
				keys[i] = metal.BF16ToF32(metal.F32ToBF16DAZ(keys[i]))
				vals[i] = metal.BF16ToF32(metal.F32ToBF16DAZ(vals[i]))
			}
		}
		if tc.typ == metal.KVQ8 {
			for _, x := range [][]float32{keys, vals} {
				q, sc := make([]int8, len(x)), make([]uint16, len(x)/metal.KVGroup)
				metal.QuantizeKV(q, sc, x)
				metal.DequantizeKV(x, q, sc)
			}
		}
		slots := make([]int32, tc.n)
		for p := range slots {
			slots[p] = table[p/tc.bs]*int32(tc.bs) + int32(p%tc.bs)
		}
		be.WriteKV(kv, keys, vals, slots)
		// queries at three positions, as a verify row would have
		qpos := []int32{0, int32(tc.n / 2), int32(tc.n - 1)}
		rows := make([]metal.AttnRow, len(qpos))
		for i, p := range qpos {
			rows[i] = metal.AttnRow{Pos: p, Blocks: table}
		}
		q := randVec(rng, len(qpos)*tc.heads*tc.hd)
		out := make([]float32, len(q))
		be.Attention(out, q, kv, rows, tc.heads, tc.kvHeads, tc.hd)
		// A bf16 cache's products see queries and softmax weights rounded
		// to bfloat16 too: the reference rounds the queries, and the
		// weights' rounding (relative 2^-9 each) bounds the error.
		tol := 1e-5
		if tc.typ == metal.KVBF16 {
			tol = 4e-3
			for i, x := range q {
				q[i] = metal.BF16ToF32(metal.F32ToBF16DAZ(x))
			}
		}
		want := make([]float64, len(q))
		for r, p := range qpos {
			for h := 0; h < tc.heads; h++ {
				kh := h / (tc.heads / tc.kvHeads)
				qv := q[(r*tc.heads+h)*tc.hd:]
				sc := make([]float64, p+1)
				mx := math.Inf(-1)
				for s := 0; s <= int(p); s++ {
					for i := 0; i < tc.hd; i++ {
						sc[s] += float64(qv[i]) * float64(keys[s*dim+kh*tc.hd+i])
					}
					sc[s] /= math.Sqrt(float64(tc.hd))
					mx = math.Max(mx, sc[s])
				}
				sum := 0.0
				for s := range sc {
					sc[s] = math.Exp(sc[s] - mx)
					sum += sc[s]
				}
				for s := range sc {
					for i := 0; i < tc.hd; i++ {
						want[(r*tc.heads+h)*tc.hd+i] += sc[s] / sum * float64(vals[s*dim+kh*tc.hd+i])
					}
				}
			}
		}
		if e := maxRelErr(out, want); e > tol {
			t.Errorf("%+v: relative error %g", tc, e)
		}
		be.Close()
	}
}

func TestEmbed(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 6))
	be := New(1)
	defer be.Close()
	w, _ := metal.Quantize(metal.Q8, randVec(rng, 10*64), 10, 64)
	out := make([]float32, 2*64)
	be.Embed(out, w, []int32{7, 2})
	deq := w.Dequantize()
	for i := 0; i < 64; i++ {
		if out[i] != deq[7*64+i] || out[64+i] != deq[2*64+i] {
			t.Fatal("embedding rows differ from the dequantized table")
		}
	}
}

// TestQuantKernelsMatchPortable: every optimised q4/q8 kernel this CPU has
// gives bit-identical results to the portable reference.
func TestQuantKernelsMatchPortable(t *testing.T) {
	avail := availableKernels()
	if len(avail) == 0 {
		t.Skip("no optimised kernels on this CPU")
	}
	ref := portableKernels()
	for _, best := range avail {
		rng := rand.New(rand.NewPCG(7, 7))
		for _, d := range []metal.DType{metal.Q8, metal.Q4} {
			// Whole blocks of eight groups, tails, and rows shorter than a block.
			for _, cols := range []int{32, 64, 96, 256, 288, 1024, 1056, 3072} {
				const outRows = 5
				w, _ := metal.Quantize(d, randVec(rng, outRows*cols), outRows, cols)
				x := randVec(rng, 3*cols)
				x[0], x[cols+5] = 0, 1e-30 // zeros and tiny values in a group
				if cols == 1024 {
					// Extreme codes: activations all ±127, weights all at
					// the ends of their range, to catch int16 saturation.
					for i := range x {
						x[i] = float32(1 - 2*(i/3%2))
					}
					src := make([]float32, outRows*cols)
					for i := range src {
						src[i] = float32(1 - 2*(i/5%2))
					}
					w, _ = metal.Quantize(d, src, outRows, cols)
				}
				for i := 2 * cols; i < 2*cols+32; i++ {
					x[i] = 0 // an all-zero group
				}
				var a qacts
				a.quantize(x, 3, cols, quantGroupsRef)
				if d == metal.Q4 && best.q4Layout {
					a.permuteQ4(3, cols)
				}
				// Every weight-row range and row count from 1 to 3, so each
				// pair is both first and later in a multi-row call.
				for o0 := 0; o0 < outRows; o0++ {
					for o1 := o0 + 1; o1 <= outRows; o1++ {
						for rows := 1; rows <= 3; rows++ {
							want, got := make([]float32, rows*outRows), make([]float32, rows*outRows)
							acc := make([]laneAcc, (o1-o0)*rows)
							if d == metal.Q4 {
								ref.rowsQ4(w, o0, o1, &a, rows, acc, want)
								best.rowsQ4(w, o0, o1, &a, rows, acc, got)
							} else {
								ref.rowsQ8(w, o0, o1, &a, rows, acc, want)
								best.rowsQ8(w, o0, o1, &a, rows, acc, got)
							}
							for i := range want {
								if math.Float32bits(want[i]) != math.Float32bits(got[i]) {
									t.Fatalf("%s %s cols %d rows %d..%d acts %d: out[%d] = %v, portable %v", best.name, d, cols, o0, o1, rows, i, got[i], want[i])
								}
							}
						}
					}
				}
			}
		}
	}
}

func TestPortableOptionForcesReference(t *testing.T) {
	be := NewWithOptions(Options{Threads: 1, Portable: true})
	defer be.Close()
	if be.Name() != "cpu/portable" {
		t.Fatalf("Name() = %q", be.Name())
	}
}

func TestQuantSpeedup(t *testing.T) {
	best, portable := New(1), NewWithOptions(Options{Threads: 1, Portable: true})
	defer best.Close()
	defer portable.Close()
	for _, tc := range []struct {
		name string
		b    *Backend
		d    metal.DType
		want func(float64) bool
	}{
		{"float weights", best, metal.BF16, func(s float64) bool { return s == 1 }},
		{"portable q4", portable, metal.Q4, func(s float64) bool { return s == 1 }},
		{"best q4", best, metal.Q4, func(s float64) bool { return s >= 1 && (best.Name() == "cpu/portable") == (s == 1) }},
	} {
		if s := tc.b.QuantSpeedup(tc.d); !tc.want(s) {
			t.Errorf("%s (%s): %g", tc.name, tc.b.Name(), s)
		}
	}
	// Attention over a bf16 cache: faster only with AVX512_BF16's loops,
	// never without SIMD ones; over an f32 cache slower with SIMD loops.
	for _, b := range []*Backend{best, portable} {
		s := b.AttentionSpeedup(metal.KVBF16)
		if s < 1 || (s > 1) != (b.f.bf16.tabScores != nil) || (s > 1 && !b.SIMDAttention(metal.KVBF16)) ||
			b.AttentionSpeedup(metal.KVF16) != 1 || b.AttentionSpeedup(metal.KVQ8) != 1 {
			t.Errorf("%s: AttentionSpeedup bf16 %g with SIMD loops %v", b.Name(), s, b.SIMDAttention(metal.KVBF16))
		}
		if s := b.AttentionSpeedup(metal.KVF32); (s < 1) != b.SIMDAttention(metal.KVF16) || s > 1 {
			t.Errorf("%s: AttentionSpeedup f32 %g with SIMD loops %v", b.Name(), s, b.SIMDAttention(metal.KVF16))
		}
	}
}

// TestKernelSetsSelect: every set KernelSets lists can be chosen by name,
// with the attention set that goes with it, and a name it does not list
// gets the best set.
func TestKernelSetsSelect(t *testing.T) {
	sets := KernelSets()
	if sets[len(sets)-1] != "portable" {
		t.Fatalf("KernelSets() = %v, want the portable set last", sets)
	}
	best := New(1)
	defer best.Close()
	for _, name := range append(sets, "no-such-set") {
		if err := CheckKernels(name); (err != nil) != (name == "no-such-set") {
			t.Errorf("CheckKernels(%q) = %v", name, err)
		}
		b := NewWithOptions(Options{Threads: 1, Kernels: name})
		want, wantFused := "cpu/"+name, b.k.fused
		switch {
		case name == "no-such-set":
			want, wantFused = best.Name(), best.f.name
		case name == "portable":
			wantFused = "portable"
		}
		if b.Name() != want || b.f.name != wantFused {
			t.Errorf("Kernels %q: kernels %s with attention set %s, want %s with %s", name, b.Name(), b.f.name, want, wantFused)
		}
		b.Close()
	}
}
