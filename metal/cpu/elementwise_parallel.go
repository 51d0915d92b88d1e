package cpu

// The elementwise steps of a forward pass (norms, RoPE, the SwiGLU gate,
// residual adds, quantizing a matrix product's activations) are cheap per
// token, but together too much of a prefill chunk's time for the calling
// goroutine to run them alone while the other workers spin. Over
// parallelMin elements they run on the pool, split by whole rows (groups
// of 32 columns for the quantization, elemUnit-element units of flat
// arrays); every element is computed exactly as by the serial loop, so
// results are the same bits.

const (
	// parallelMin is the size, in float32 elements, from which an
	// elementwise step is worth handing to the pool: a step this size
	// costs many times a hot hand-off (BenchmarkPoolHandOff).
	parallelMin = 4096
	// quantParallelMin is parallelMin for quantizing a product's
	// activations, whose split by column groups has both workers write
	// every row, so two threads gain only on large batches.
	quantParallelMin = 128 * 1024
	// normParallelMin is parallelMin for RMSNorm and RoPE, whose rows are
	// short (Qwen3's per-head norms: 128 elements), so that a split costs
	// more than the rows of a verify pass.
	normParallelMin = 16 * 1024
	// addParallelMin is parallelMin for a residual add, so cheap in SIMD
	// that a second thread loses on a decode batch.
	addParallelMin = 64 * 1024
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
	opGatedRMSNorm
)

// elementwiseTask is one parallel elementwise step: the fields its op
// reads, over rows (units, column groups) [lo, hi).
type elementwiseTask struct {
	b              *Backend
	op             elemOp
	out, x, weight []float32
	cos, sin       []float32
	gate           []float32 // opGatedRMSNorm's z
	dim, heads     int
	eps            float32
	// opQuantize: the activations' rows×cols, whether the row kernels'
	// layout is wanted, and the tiled layout's shift (pack < 0: none).
	rows, cols int
	rowMajor   bool
	pack       int
}

func (t *elementwiseTask) run(lo, hi, worker int) {
	switch t.op {
	case opRMSNorm:
		rmsNormRows(&t.b.f, t.out, t.x, t.weight, t.dim, t.eps, lo, hi)
	case opRoPE:
		ropeRows(&t.b.f, t.x, t.cos, t.sin, t.heads, t.dim, lo, hi)
	case opGatedRMSNorm:
		gatedRMSNormRows(t.out, t.x, t.gate, t.weight, t.dim, t.eps, lo, hi)
	case opSiLUMul:
		a, e := lo*elemUnit, min(hi*elemUnit, len(t.out))
		t.b.f.siluMul(t.out[a:e], t.x[a:e])
	case opAdd:
		a, e := lo*elemUnit, min(hi*elemUnit, len(t.out))
		t.b.f.add(t.out[a:e], t.x[a:e])
	case opQuantize: // [lo, hi) are groups of 32 columns
		a := &t.b.acts
		if t.rowMajor {
			a.quantizeGroups(t.x, t.rows, t.cols, t.b.k.quantGroups, lo, hi)
		}
		if t.pack >= 0 {
			a.tiled.quantizeGroups(t.x, t.rows, t.cols, t.b.k.quantGroups, uint(t.pack), lo, hi)
		}
	}
}

// parallel reports whether a step of op over n elements runs on the pool.
func (b *Backend) parallel(op elemOp, n int) bool {
	least := parallelMin
	switch op {
	case opQuantize:
		least = quantParallelMin
	case opAdd:
		least = addParallelMin
	case opRMSNorm, opRoPE, opGatedRMSNorm:
		least = normParallelMin
	}
	return n >= least && b.pool.n > 1
}

// units is the number of elemUnit units covering n elements.
func units(n int) int { return (n + elemUnit - 1) / elemUnit }

// runElementwise runs t over n rows (or units) of about width elements:
// on the pool from parallelMin elements (quantParallelMin for
// quantizing), else on the calling goroutine.
func (b *Backend) runElementwise(t elementwiseTask, n, width int) {
	t.b = b
	if !b.parallel(t.op, n*width) {
		t.run(0, n, 0)
		return
	}
	b.elem = t
	grain := max(1, elemGrainElems/width)
	if t.op == opQuantize {
		// One range of groups per worker: every boundary between two
		// workers' groups is a cache line of each row both write.
		grain = max(grain, (n+b.pool.n-1)/b.pool.n)
	}
	b.pool.run(&b.elem, n, grain)
	b.elem = elementwiseTask{}
}
