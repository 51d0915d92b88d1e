package cpu

import (
	"sync"
	"unsafe"

	"github.com/splash-inference/splash/metal"
)

// Packed q4 and q8 weights: a copy of a matrix in the layout the tiled
// kernels build in registers (quantdot_tiled.go), made once when the model
// is built, so a kernel call reads each tile as one sequential stream of
// aligned vectors: no transposes, no scale gathers, and a memory access
// pattern the hardware prefetchers follow. One kernel then serves a decode
// row, a verify row of k+1 tokens and a prefill chunk alike.
//
// For tile t (weight rows height·t ... height·t+height-1) and group g, the
// block at q[(t·groups+g)·blockBytes()] holds rowBytes/4 slices of height
// dwords, then the rows' float16 scales of group g in row order. Dword i of
// slice k is bytes 4k..4k+3 of row height·t+i's group g. For q4 (rowBytes
// 16: four slices) those hold low nibbles elements 4k..4k+3 and high
// nibbles 16+4k..16+4k+3; for q8 (rowBytes 32: eight slices) elements
// 4k..4k+3, each stored as q+128, an unsigned byte for VPDPBUSD, or as q
// for SDOT (kernels.q8Signed). The scales follow their group's quants
// rather than forming a stream of their own, so a tile is one sequential
// stream: a second stream for the scales slows the loads alone
// (BenchmarkMatVecDRAM's doc has the numbers; what holds the kernels is in
// quantdot_packed32row_amd64.s). Only whole tiles are
// packed: rows past the last whole tile are read from the original tensor
// by the row kernels.
type packedMatrix struct {
	dtype                           metal.DType
	height, tiles, groups, rowBytes int
	q                               []byte
}

// blockBytes is the size of one group's block: its quants and its scales.
func (p *packedMatrix) blockBytes() int { return (p.rowBytes + 2) * p.height }

// packQuant packs the whole tiles of the q4 or q8 tensor w for tiles of
// height rows, into buffers from alloc (64-byte aligned, zeroed); q8 bytes
// as q+128 unless signed.
func packQuant(w *metal.Tensor, height int, signed bool, alloc func(n int) []byte) *packedMatrix {
	groups := w.Cols / metal.GroupSize
	rb := 16 // bytes of one row's group
	if w.DType == metal.Q8 {
		rb = 32
	}
	p := &packedMatrix{dtype: w.DType, height: height, tiles: w.Rows / height, groups: groups, rowBytes: rb}
	bb := p.blockBytes()
	p.q = alloc(p.tiles * groups * bb)
	for t := 0; t < p.tiles; t++ {
		for i := 0; i < height; i++ {
			wq, ws := quantRow(w, t*height+i)
			for g := 0; g < groups; g++ {
				blk := (t*groups + g)
				src := wq[rb*g : rb*g+rb]
				for k := 0; k < rb/4; k++ {
					d := blk*bb + k*4*height + 4*i
					copy(p.q[d:d+4], src[4*k:4*k+4])
					if w.DType == metal.Q8 && !signed {
						for j := d; j < d+4; j++ {
							p.q[j] ^= 0x80 // q+128 as an unsigned byte
						}
					}
				}
				copy(p.q[blk*bb+rb*height+2*i:], ws[2*g:2*g+2])
			}
		}
	}
	return p
}

// How far ahead of their reads the amd64 packed kernels prefetch a tile's
// quants (quantdot_tile_amd64.h, quantdot_packed_amd64.s): packedFarLead
// bytes where they would otherwise wait on memory, packedNearLead where
// they are busy with their products and the lines prefetched early would
// take L1 from the activations and accumulators they reuse. Which calls
// are which depends on how much work a set does per byte:
// kernels.packedFarRows, packedLead. (The NEON kernels leave prefetching
// to the hardware.)
//
// AVX-512 VNNI: calls for 2 to packedVNNIFarRows rows prefetch far. Its
// row kernel waits on memory whatever the distance, so it stays near. A
// kernel for a few rows reads more slowly, busy with its products, and
// 4 KiB ahead is too close for it. From 12 rows up the kernel is bound by
// its products and a far lead gains nothing, so those calls, a prefill
// chunk's included, stay near.
//
// AVX2 and AVX-VNNI (tiles of 8 rows, slower per row than AVX-512 VNNI):
// one row prefetches far; more rows are faster near.
//
// BenchmarkMatMatDRAM's doc has the measurements behind these numbers.
const (
	packedNearLead    = 4096
	packedFarLead     = 16384
	packedVNNIFarRows = 8
	packedAVX2FarRows = 1
)

// prefetchTiles asks for the first lead bytes of tile lo, lead being the
// kernel's distance (kernels.packedLead). A worker calls it as it claims
// a range of tiles: the kernel's own prefetch runs lead bytes ahead of
// its reads, so the bytes before that came cold from memory at every
// claim, and a 0.6B decode step makes a few hundred claims
// (BenchmarkMatVecDRAM's frac, the fraction of the read bandwidth reached,
// measures the gain).
func (p *packedMatrix) prefetchTiles(lo, lead int) {
	if lo >= p.tiles {
		return // a partial last tile, read by the row kernels
	}
	qb := lo * p.groups * p.blockBytes()
	prefetch((*uint16)(unsafe.Pointer(&p.q[qb])), min(lead, len(p.q)-qb))
}

// packedFunc computes out[r·dim + height·tile + i] for the height rows i
// of tile tile of p and every activation row r < rows of a (in its tiled
// layout, with the biases of p's dtype: actsShift); acc is scratch of at
// least tileAccs(rows, height) entries.
type packedFunc func(p *packedMatrix, tile int, a *qacts, rows int, acc []laneAcc, out []float32, dim int)

// packedWeights maps the matrices a Backend has packed to their packed
// copies. Models register their weights once at build time; MatMul looks
// them up on every call.
type packedWeights struct {
	mu    sync.RWMutex
	m     map[*metal.Tensor]*packedMatrix
	arena weightArena // their buffers
}

func (p *packedWeights) get(w *metal.Tensor) *packedMatrix {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return p.m[w]
}

func (p *packedWeights) put(w *metal.Tensor, q *packedMatrix) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.m == nil {
		p.m = make(map[*metal.Tensor]*packedMatrix)
	}
	p.m[w] = q
}

// PrepareWeights packs a q4 (q8) matrix for the kernel set's packed
// kernel (metal.WeightPreparer). Other dtypes, matrices of fewer rows
// than a tile, and kernel sets without a packed kernel for the dtype keep
// the tensor as it is. The tensor's data must not change afterwards.
func (b *Backend) PrepareWeights(w *metal.Tensor) {
	if b.k.packedFor(w.DType) == nil || w.Rows < b.k.packHeight || w.Cols%metal.GroupSize != 0 {
		return
	}
	if b.packed.get(w) != nil {
		return
	}
	b.packed.put(w, packQuant(w, b.k.packHeight, b.k.q8Signed, b.packed.arena.alloc))
}

// actsShift is the bias shift of the tiled activations that the tile
// kernels of dtype d read: q4 weights are stored as q+8 = q+2^3, q8 (packed)
// as q+128 = q+2^7, so a group's bias is −Σx shifted left by 3 or 7.
func actsShift(d metal.DType) int {
	if d == metal.Q8 {
		return 7
	}
	return 3
}

// PackedBytes is the memory the packed weight copies hold, with the unused
// rest of their arena's chunks (weightArena).
func (b *Backend) PackedBytes() int64 { return b.packed.arena.bytes() }
