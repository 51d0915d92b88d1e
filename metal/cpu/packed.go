package cpu

import (
	"sync"
	"unsafe"

	"github.com/splash-inference/splash/metal"
)

// Packed q4 weights: a copy of a q4 matrix in the layout the tiled kernels
// build in registers (quantdot_tiled.go), made once when the model is
// built, so a kernel call reads each tile as one sequential stream of
// aligned vectors: no transposes, no scale gathers, and a memory access
// pattern the hardware prefetchers follow. One kernel then serves a
// decode row, a verify row of k+1 tokens and a prefill chunk alike.
//
// For tile t (weight rows height·t ... height·t+height-1) and group g, the
// quants block at q[(t·groups+g)·16·height] holds four slices k = 0..3 of
// height dwords: dword i of slice k is bytes 4k..4k+3 of row height·t+i's
// group g (low nibbles elements 4k..4k+3, high nibbles 16+4k..16+4k+3).
// Its scales block at s[(t·groups+g)·2·height] holds the rows' float16
// scales of group g, row order. Only whole tiles are packed: rows past the
// last whole tile are read from the original tensor by the row kernels.
type packedQ4 struct {
	height, tiles, groups int
	q, s                  []byte
}

// packQ4 packs the whole tiles of the q4 tensor w for tiles of height rows.
func packQ4(w *metal.Tensor, height int) *packedQ4 {
	groups := w.Cols / metal.GroupSize
	p := &packedQ4{height: height, tiles: w.Rows / height, groups: groups}
	blocks := p.tiles * groups
	p.q = alignedBytes(blocks * 16 * height)
	p.s = alignedBytes(blocks * 2 * height)
	for t := 0; t < p.tiles; t++ {
		for i := 0; i < height; i++ {
			wq, ws := quantRow(w, t*height+i)
			for g := 0; g < groups; g++ {
				blk := (t*groups + g)
				src := wq[16*g : 16*g+16]
				for k := 0; k < 4; k++ {
					d := blk*16*height + k*4*height + 4*i
					copy(p.q[d:d+4], src[4*k:4*k+4])
				}
				copy(p.s[blk*2*height+2*i:], ws[2*g:2*g+2])
			}
		}
	}
	return p
}

// alignedBytes returns n zeroed bytes starting on a 64-byte boundary, so
// a kernel's vector loads never straddle cache lines.
func alignedBytes(n int) []byte {
	buf := make([]byte, n+63)
	off := (64 - int(uintptr(unsafe.Pointer(&buf[0]))%64)) % 64
	return buf[off : off+n : off+n]
}

// packedFunc computes out[r·dim + height·tile + i] for the height rows i
// of tile tile of p and every activation row r < rows of a (in its tiled
// layout, with the biases of q4); acc is scratch of at least
// tileAccs(rows, height) entries.
type packedFunc func(p *packedQ4, tile int, a *qacts, rows int, acc []laneAcc, out []float32, dim int)

// packedWeights maps the matrices a Backend has packed to their packed
// copies. Models register their weights once at build time; MatMul looks
// them up on every call.
type packedWeights struct {
	mu sync.RWMutex
	m  map[*metal.Tensor]*packedQ4
}

func (p *packedWeights) get(w *metal.Tensor) *packedQ4 {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return p.m[w]
}

func (p *packedWeights) put(w *metal.Tensor, q *packedQ4) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.m == nil {
		p.m = make(map[*metal.Tensor]*packedQ4)
	}
	p.m[w] = q
}

// PrepareWeights packs a q4 matrix for the kernel set's packed kernel
// (metal.WeightPreparer). Other dtypes, matrices of fewer rows than a
// tile, and kernel sets without a packed kernel keep the tensor as it is.
// The tensor's data must not change afterwards.
func (b *Backend) PrepareWeights(w *metal.Tensor) {
	if b.k.q4Packed == nil || w.DType != metal.Q4 || w.Rows < b.k.q4PackedRows || w.Cols%metal.GroupSize != 0 {
		return
	}
	if b.packed.get(w) != nil {
		return
	}
	b.packed.put(w, packQ4(w, b.k.q4PackedRows))
}

// PackedBytes is the memory the packed weight copies hold.
func (b *Backend) PackedBytes() int64 {
	b.packed.mu.RLock()
	defer b.packed.mu.RUnlock()
	var n int64
	for _, p := range b.packed.m {
		n += int64(len(p.q) + len(p.s))
	}
	return n
}
