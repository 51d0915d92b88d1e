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
// stream: a loop of only the loads of a one-row product took 1.26-1.5× as
// long with the scales in a second stream as without them, for 12% more
// bytes (four alternating pairs, two threads). With the kernels' work in
// between, one stream and two measured alike (three pairs); what holds
// those kernels is in quantdot_packed32row_amd64.s. Only whole tiles are
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
// row kernel waits on memory whatever the distance (1 to 16 KiB measured
// alike at first; 16 KiB later took 1.03-1.5× as long on one thread,
// four rounds), so it stays near. A kernel for a few rows reads more
// slowly, busy with its products, and 4 KiB ahead was too close for it.
// The products of a verify row at k=4 took about 1.35× those of one row
// from memory, where the work alone fits in the time of the reads; with
// 16 KiB, 1.0-1.15× (64 MiB matrices, BenchmarkMatMatDRAM rows5, one and
// two threads, three rounds of alternating binaries, on a slow-memory
// day). A whole k=4 verify pass of the 0.6B-shaped model
// (BenchmarkVerifyRatio0_6BQ4, four rounds) then took 1.27-1.33× a decode
// pass instead of 1.41-1.43× on one thread, and 1.46-1.56× instead of
// 1.50-1.59× on two; batched decode of 4 sequences
// (actors.BenchmarkConcurrentDecode c=4, two rounds) ran at 378-436
// tokens/s instead of 320-360. From 12 rows up the kernel is bound by its
// products and 16 KiB gained nothing (0.92-1.16× in the same streamed
// products, 12 to 32 rows), so those calls, a prefill chunk's included,
// stay near.
//
// AVX2 and AVX-VNNI (tiles of 8 rows, about 2.6× and 2.2× slower per row
// than AVX-512 VNNI): one row prefetches far. With AVX2 the streamed
// products of one row took 0.75-0.85× as long on two threads and about
// 0.92× on one; three rows were 1.0-1.5× slower with 16 KiB, five and
// eight 1.05-1.2× (three rounds). AVX-VNNI measured two rows alike either
// way and three slower far (three rounds).
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
// claim, and a 0.6B decode step makes a few hundred claims. (Two threads,
// a decode step's fraction of the bandwidth bound against the probe read
// beside it: 0.53–0.59 → 0.55–0.61 in four rounds of two binaries taking
// turns, each round gaining; in an earlier four, switched by a variable,
// 0.49–0.51 → 0.57–0.65.)
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
