package backendtest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/splash-inference/splash/metal"
)

// Factory builds a fresh backend for one check; Run closes it.
type Factory func(t testing.TB) metal.Backend

// Run runs every conformance check against backends newBackend builds.
func Run(t *testing.T, newBackend Factory) {
	checks := []struct {
		name  string
		check func(testing.TB, metal.Backend)
	}{
		{"MatMul", checkMatMul},
		{"MatMulBatchInvariant", checkMatMulBatchInvariant},
		{"Embed", checkEmbed},
		{"RMSNorm", checkRMSNorm},
		{"RoPE", checkRoPE},
		{"SiLUMulAdd", checkSiLUMulAdd},
		{"Attention", checkAttention},
		{"AttentionBatchInvariant", checkAttentionBatchInvariant},
		{"SharedInputMatMul", checkSharedInputMatMul},
		{"KVMemory", checkKVMemory},
	}
	for _, c := range checks {
		t.Run(c.name, func(t *testing.T) {
			be := newBackend(t)
			defer be.Close()
			c.check(t, be)
		})
	}
	t.Run("WeightPreparer", func(t *testing.T) { checkWeightPreparer(t, newBackend) })
}

var weightTypes = []metal.DType{metal.F32, metal.F16, metal.BF16, metal.Q8, metal.Q4}

func checkMatMul(t testing.TB, be metal.Backend) {
	rng := rand.New(rand.NewPCG(1, 1))
	for _, d := range weightTypes {
		// rows × out × in: one row (decode), a few (verify), many
		// (prefill); outputs that are not multiples of any vector width.
		for _, s := range [][3]int{{1, 1, 32}, {1, 67, 256}, {5, 17, 64}, {16, 130, 160}, {33, 9, 96}} {
			rows, out, in := s[0], s[1], s[2]
			w, err := metal.Quantize(d, randVec(rng, out*in), out, in)
			if err != nil {
				t.Fatal(err)
			}
			x := randVec(rng, rows*in)
			got := make([]float32, rows*out)
			be.MatMul(got, x, rows, w)
			want, bound := matMulBound(x, rows, w)
			if e := maxScaledErr(got, want, bound); e > 1 {
				t.Errorf("%s %dx%dx%d: error %.3g times the allowed bound", d, rows, out, in, e)
			}
		}
	}
}

func checkMatMulBatchInvariant(t testing.TB, be metal.Backend) {
	rng := rand.New(rand.NewPCG(2, 2))
	const rows, out, in = 9, 67, 224
	for _, d := range weightTypes {
		w, _ := metal.Quantize(d, randVec(rng, out*in), out, in)
		x := randVec(rng, rows*in)
		batch := make([]float32, rows*out)
		be.MatMul(batch, x, rows, w)
		for _, r := range []int{0, 4, rows - 1} {
			alone := make([]float32, out)
			be.MatMul(alone, x[r*in:(r+1)*in], 1, w)
			if i := sameBits(alone, batch[r*out:(r+1)*out]); i >= 0 {
				t.Errorf("%s: row %d output %d is %v alone, %v among %d rows", d, r, i, alone[i], batch[r*out+i], rows)
			}
		}
	}
}

func checkEmbed(t testing.TB, be metal.Backend) {
	rng := rand.New(rand.NewPCG(3, 3))
	const vocab, dim = 40, 96
	for _, d := range weightTypes {
		w, _ := metal.Quantize(d, randVec(rng, vocab*dim), vocab, dim)
		ids := []int32{7, 0, vocab - 1, 7}
		got := make([]float32, len(ids)*dim)
		be.Embed(got, w, ids)
		row := make([]float32, dim)
		for r, id := range ids {
			w.DequantizeRow(row, int(id))
			want := make([]float64, dim)
			for i, v := range row {
				want[i] = float64(v)
			}
			if e := maxRelErr(got[r*dim:(r+1)*dim], want); e > 1e-7 {
				t.Errorf("%s: row %d (token %d) relative error %.3g", d, r, id, e)
			}
		}
	}
}

func checkRMSNorm(t testing.TB, be metal.Backend) {
	rng := rand.New(rand.NewPCG(4, 4))
	for _, dim := range []int{8, 48, 1000} {
		const rows, eps = 3, 1e-6
		x, g := randVec(rng, rows*dim), randVec(rng, dim)
		x[1] *= 1e4 // one large element: sums must not lose the rest
		want := make([]float64, len(x))
		for r := 0; r < rows; r++ {
			ss := 0.0
			for _, v := range x[r*dim : (r+1)*dim] {
				ss += float64(v) * float64(v)
			}
			inv := 1 / math.Sqrt(ss/float64(dim)+eps)
			for i := 0; i < dim; i++ {
				want[r*dim+i] = float64(x[r*dim+i]) * inv * float64(g[i])
			}
		}
		out := make([]float32, len(x))
		be.RMSNorm(out, x, g, dim, eps)
		if e := maxRelErr(out, want); e > 1e-6 {
			t.Errorf("dim %d: relative error %.3g", dim, e)
		}
		be.RMSNorm(x, x, g, dim, eps) // out may alias x
		if i := sameBits(x, out); i >= 0 {
			t.Errorf("dim %d: in place, element %d is %v, not %v", dim, i, x[i], out[i])
		}
	}
}

func checkRoPE(t testing.TB, be metal.Backend) {
	rng := rand.New(rand.NewPCG(5, 5))
	for _, s := range []struct{ heads, headDim int }{{3, 8}, {2, 64}, {4, 128}} {
		half := s.headDim / 2
		inv := make([]float32, half)
		for i := range inv {
			inv[i] = float32(math.Pow(1e6, -float64(2*i)/float64(s.headDim)))
		}
		pos := []int32{0, 1, 5, 1000, 4095}
		x := randVec(rng, len(pos)*s.heads*s.headDim)
		want := make([]float64, len(x))
		for r, p := range pos {
			for h := 0; h < s.heads; h++ {
				b := (r*s.heads + h) * s.headDim
				for i := 0; i < half; i++ {
					a := float64(p) * float64(inv[i])
					x0, x1 := float64(x[b+i]), float64(x[b+i+half])
					want[b+i] = x0*math.Cos(a) - x1*math.Sin(a)
					want[b+i+half] = x0*math.Sin(a) + x1*math.Cos(a)
				}
			}
		}
		be.RoPE(x, pos, s.heads, s.headDim, inv)
		if e := maxRelErr(x, want); e > 1e-5 {
			t.Errorf("%d heads of %d: relative error %.3g", s.heads, s.headDim, e)
		}
	}
}

func checkSiLUMulAdd(t testing.TB, be metal.Backend) {
	rng := rand.New(rand.NewPCG(6, 6))
	for _, n := range []int{1, 50, 1031} {
		gate, up, dst := randVec(rng, n), randVec(rng, n), randVec(rng, n)
		gate[0] = -100 // exp overflow side of the sigmoid
		want, wantAdd := make([]float64, n), make([]float64, n)
		for i := range gate {
			v := float64(gate[i])
			want[i] = v / (1 + math.Exp(-v)) * float64(up[i])
			wantAdd[i] = float64(dst[i]) + float64(up[i])
		}
		be.SiLUMul(gate, up)
		if e := maxRelErr(gate, want); e > 1e-6 {
			t.Errorf("SiLUMul n=%d: relative error %.3g", n, e)
		}
		be.Add(dst, up)
		if e := maxRelErr(dst, wantAdd); e > 1e-7 {
			t.Errorf("Add n=%d: relative error %.3g", n, e)
		}
	}
}

// kvCase is one attention shape: heads, KV heads, head size, block size
// and the number of cached positions.
type kvCase struct {
	typ                       metal.KVType
	heads, kvHeads, hd, bs, n int
}

func (c kvCase) String() string {
	return fmt.Sprintf("%s %d/%d heads of %d, blocks of %d, %d positions", c.typ, c.heads, c.kvHeads, c.hd, c.bs, c.n)
}

var kvCases = []kvCase{
	{metal.KVF16, 4, 2, 16, 4, 13}, {metal.KVF16, 8, 1, 32, 5, 23}, {metal.KVF16, 4, 4, 16, 32, 200},
	{metal.KVQ8, 8, 1, 32, 5, 23}, {metal.KVQ8, 4, 2, 64, 16, 150},
	{metal.KVBF16, 4, 2, 32, 8, 13}, {metal.KVBF16, 6, 2, 64, 32, 77},
	{metal.KVF32, 4, 2, 16, 4, 13}, {metal.KVF32, 8, 2, 64, 16, 150},
}

// kvSequence is n positions of random keys and values written through a
// scrambled block table, as the backend stores them and as the reference
// reads them back.
type kvSequence struct {
	layer      metal.KVLayer
	table      []int32
	keys, vals []float32 // as stored (asStored), n×dim
}

func writeSequence(rng *rand.Rand, be metal.Backend, c kvCase) *kvSequence {
	dim := c.kvHeads * c.hd
	used := (c.n + c.bs - 1) / c.bs
	nb := used + 3
	s := &kvSequence{layer: metal.NewKVLayer(c.typ, nb, c.bs, c.kvHeads, c.hd), table: make([]int32, used)}
	perm := rng.Perm(nb)
	for i := range s.table {
		s.table[i] = int32(perm[i])
	}
	keys, vals := randVec(rng, c.n*dim), randVec(rng, c.n*dim)
	slots := make([]int32, c.n)
	for p := range slots {
		slots[p] = s.table[p/c.bs]*int32(c.bs) + int32(p%c.bs)
	}
	be.WriteKV(&s.layer, keys, vals, slots)
	s.keys, s.vals = asStored(c.typ, keys), asStored(c.typ, vals)
	return s
}

func checkAttention(t testing.TB, be metal.Backend) {
	rng := rand.New(rand.NewPCG(7, 7))
	for _, c := range kvCases {
		s := writeSequence(rng, be, c)
		// A decode row at the first and last positions, and a verify run
		// of consecutive positions in the middle.
		qpos := []int32{0, int32(c.n / 2), int32(c.n/2 + 1), int32(c.n/2 + 2), int32(c.n - 1)}
		rows := make([]metal.AttnRow, len(qpos))
		for i, p := range qpos {
			rows[i] = metal.AttnRow{Pos: p, Blocks: s.table}
		}
		width := c.heads * c.hd
		q := randVec(rng, len(qpos)*width)
		out := make([]float32, len(q))
		be.Attention(out, q, &s.layer, rows, c.heads, c.kvHeads, c.hd)
		tol, round := 1e-5, func(x float64) float64 { return x }
		if c.typ == metal.KVBF16 {
			// Queries and softmax weights are rounded to bfloat16 too;
			// the weights' rounding (relative 2^-9) bounds the error.
			q, tol = asStored(metal.KVBF16, q), 4e-3
		}
		want := make([]float64, len(q))
		for r, p := range qpos {
			attention(want[r*width:(r+1)*width], q[r*width:(r+1)*width], s.keys, s.vals, int(p), c.heads, c.kvHeads, c.hd, round)
		}
		if e := maxRelErr(out, want); e > tol {
			t.Errorf("%v: relative error %.3g", c, e)
		}
	}
}

// checkAttentionBatchInvariant: a row of one sequence gives the same bits
// alone and among rows of other sequences sharing the cache.
func checkAttentionBatchInvariant(t testing.TB, be metal.Backend) {
	rng := rand.New(rand.NewPCG(8, 8))
	for _, c := range []kvCase{{metal.KVF16, 4, 2, 32, 16, 90}, {metal.KVQ8, 4, 2, 32, 16, 90}, {metal.KVBF16, 4, 2, 32, 16, 90}, {metal.KVF32, 4, 2, 32, 16, 90}} {
		s := writeSequence(rng, be, c)
		// Three "sequences" over prefixes of the same table.
		rows := []metal.AttnRow{
			{Pos: 10, Blocks: s.table[:1]},
			{Pos: int32(c.n - 1), Blocks: s.table},
			{Pos: 40, Blocks: s.table[:3]},
			{Pos: 41, Blocks: s.table[:3]},
		}
		width := c.heads * c.hd
		q := randVec(rng, len(rows)*width)
		batch := make([]float32, len(q))
		be.Attention(batch, q, &s.layer, rows, c.heads, c.kvHeads, c.hd)
		for r, row := range rows {
			alone := make([]float32, width)
			be.Attention(alone, q[r*width:(r+1)*width], &s.layer, []metal.AttnRow{row}, c.heads, c.kvHeads, c.hd)
			if i := sameBits(alone, batch[r*width:(r+1)*width]); i >= 0 {
				t.Errorf("%v: row %d element %d is %v alone, %v in the batch", c, r, i, alone[i], batch[r*width+i])
			}
		}
	}
}

func checkSharedInputMatMul(t testing.TB, be metal.Backend) {
	sm, ok := be.(metal.SharedInputMatMul)
	if !ok {
		t.Skip("not a SharedInputMatMul")
	}
	rng := rand.New(rand.NewPCG(9, 9))
	const rows, in = 5, 128
	x := randVec(rng, rows*in)
	var ps []metal.Product
	var want [][]float32
	for i, d := range weightTypes {
		out := 16 + 7*i
		w, _ := metal.Quantize(d, randVec(rng, out*in), out, in)
		ps = append(ps, metal.Product{Out: make([]float32, rows*out), W: w})
		one := make([]float32, rows*out)
		be.MatMul(one, x, rows, w)
		want = append(want, one)
	}
	sm.MatMuls(x, rows, ps)
	for i, p := range ps {
		if j := sameBits(p.Out, want[i]); j >= 0 {
			t.Errorf("product %d (%s): output %d is %v, MatMul gives %v", i, p.W.DType, j, p.Out[j], want[i][j])
		}
	}
}

// checkWeightPreparer: a prepared matrix multiplies to the same bits as an
// unprepared one on a backend that never saw it prepared.
func checkWeightPreparer(t testing.TB, newBackend Factory) {
	plain, prepared := newBackend(t), newBackend(t)
	defer plain.Close()
	defer prepared.Close()
	wp, ok := prepared.(metal.WeightPreparer)
	if !ok {
		t.Skip("not a WeightPreparer")
	}
	rng := rand.New(rand.NewPCG(10, 10))
	const out, in = 72, 256
	for _, d := range weightTypes {
		src := randVec(rng, out*in)
		w1, _ := metal.Quantize(d, src, out, in)
		w2, _ := metal.Quantize(d, src, out, in)
		wp.PrepareWeights(w2)
		for _, rows := range []int{1, 5, 20} {
			x := randVec(rng, rows*in)
			a, b := make([]float32, rows*out), make([]float32, rows*out)
			plain.MatMul(a, x, rows, w1)
			prepared.MatMul(b, x, rows, w2)
			if i := sameBits(a, b); i >= 0 {
				t.Errorf("%s, %d rows: output %d is %v prepared, %v not", d, rows, i, b[i], a[i])
			}
		}
	}
}

func checkKVMemory(t testing.TB, be metal.Backend) {
	m, ok := be.(metal.KVMemory)
	if !ok {
		t.Skip("not a KVMemory")
	}
	for _, n := range []int{1, 4096, 1 << 20} {
		buf := m.KVBuffer(n)
		if len(buf) != n {
			t.Fatalf("KVBuffer(%d) has %d elements", n, len(buf))
		}
		for i, v := range buf {
			if v != 0 {
				t.Fatalf("KVBuffer(%d)[%d] = %d, want zeroed memory", n, i, v)
			}
		}
	}
}
