package cpu

// The elementwise steps of a forward pass (norms, RoPE, the SwiGLU gate,
// residual adds, quantizing a matrix product's activations) are cheap per
// token but were run by the calling goroutine alone while the other
// workers spun: about a quarter of a 256-token prefill chunk's time. Over
// parallelMin elements they run on the pool, split by whole rows (groups
// of 32 columns for the quantization, elemUnit-element units of flat
// arrays); every element is computed exactly as by the serial loop, so
// results are the same bits.

const (
	// parallelMin is the size, in float32 elements, from which an
	// elementwise step is worth handing to the pool (a hot hand-off costs
	// about 0.2 µs; a step this size about 4 µs on one core).
	parallelMin = 4096
	// elemUnit is the unit of work of the flat-array steps (SiLUMul, Add).
	elemUnit = 1024
	// elemGrainElems is about how many elements one claim of the pool
	// takes.
	elemGrainElems = 4096
)

// elemOp selects the loop an elementwiseTask runs.
type elemOp uint8

const (
	opRMSNorm elemOp = iota
	opRoPE
	opSiLUMul
	opAdd
	opQuantize
)

// elementwiseTask is one parallel elementwise step: the fields its op
// reads, over rows (units, column groups) [lo, hi).
type elementwiseTask struct {
	b              *Backend
	op             elemOp
	out, x, weight []float32
	cos, sin       []float32
	dim, heads     int
	eps            float32
	// opQuantize: the activations' rows×cols and the tile pack's shift
	// (pack < 0: no tile pack).
	rows, cols int
	pack       int
}

func (t *elementwiseTask) run(lo, hi, worker int) {
	switch t.op {
	case opRMSNorm:
		rmsNormRows(t.out, t.x, t.weight, t.dim, t.eps, lo, hi)
	case opRoPE:
		ropeRows(t.x, t.cos, t.sin, t.heads, t.dim, lo, hi)
	case opSiLUMul:
		a, e := lo*elemUnit, min(hi*elemUnit, len(t.out))
		t.b.f.siluMul(t.out[a:e], t.x[a:e])
	case opAdd:
		a, e := lo*elemUnit, min(hi*elemUnit, len(t.out))
		add(t.out[a:e], t.x[a:e])
	case opQuantize: // [lo, hi) are groups of 32 columns
		a := &t.b.acts
		a.quantizeGroups(t.x, t.rows, t.cols, t.b.k.quantGroups, lo, hi)
		if t.pack >= 0 {
			a.tiled.packGroups(a, t.rows, t.cols, uint(t.pack), lo, hi)
		}
	}
}

// parallel reports whether a step over n elements runs on the pool.
func (b *Backend) parallel(n int) bool { return n >= parallelMin && b.pool.n > 1 }

// units is the number of elemUnit units covering n elements.
func units(n int) int { return (n + elemUnit - 1) / elemUnit }

// runElementwise runs t over n rows (or units) of about width elements:
// on the pool from parallelMin elements, else on the calling goroutine.
func (b *Backend) runElementwise(t elementwiseTask, n, width int) {
	t.b = b
	if !b.parallel(n * width) {
		t.run(0, n, 0)
		return
	}
	b.elem = t
	b.pool.run(&b.elem, n, max(1, elemGrainElems/width))
	b.elem = elementwiseTask{}
}
