package kvcache

import (
	"errors"
	"fmt"
	"slices"

	"github.com/splash-inference/splash/metal"
)

// ErrOutOfBlocks is returned (wrapped) by Allocate when the pool cannot
// supply enough blocks even after evicting every unreferenced cached block.
var ErrOutOfBlocks = errors.New("kvcache: out of blocks")

// Config sizes a Manager.
type Config struct {
	NumBlocks int // blocks in the pool (the KV cache's NumBlocks)
	BlockSize int // token slots per block; 16 when zero
	// StateSlots is the number of per-sequence state slots, for a model
	// with state layers (model.CacheSpec.HasState): each admitted sequence
	// holds one until it is freed. Zero for a model without: the manager
	// then keeps no slots and serves prefix hits.
	StateSlots int
	// Snapshots is the number of state snapshots kept, for a model with
	// state layers (snapshots.go): state slots StateSlots onwards, each
	// the state after a cached block whose end is a multiple of
	// SnapshotEvery, so that a prefix hit can resume there. Zero: no
	// prefix hits for such a model.
	Snapshots, SnapshotEvery int
	// Spares gives each sequence with a state slot a second one, its
	// spare, where a verify pass saves the state before its drafts
	// (Blocks.Spare), so that Settle can go back to it when drafts are
	// rejected: a model with state layers speculates only with spares.
	// The pool then has 2·StateSlots slots before the snapshots'.
	Spares bool
}

// DefaultBlockSize is the block size when Config.BlockSize is zero.
const DefaultBlockSize = 16

// block is one pool entry's bookkeeping; the keys and values themselves live
// in the model's metal.KVCache under the same index.
type block struct {
	ref        int32
	prev, next int32 // free-list links, valid while onFree
	onFree     bool
	cached     bool   // indexed under hash; contents must not change
	hash       uint64 // chain hash, valid while cached
	// listed: among its parent's children (a cached block, or a partial
	// one whose first fill positions are committed), so that a sequence
	// sharing only the block's first positions can copy it.
	listed bool
	fill   int32  // committed positions of a listed block: BlockSize when cached
	parent uint64 // parent's chain hash, valid while listed
	snap   int32  // snapshot slot + 1 of the state after the block (cached only); 0: none
}

// Blocks is one sequence's block table. The zero value is an empty table.
// Only the Manager that filled it may change it.
type Blocks struct {
	table  []int32
	hashes []uint64 // chain hashes of the first len(hashes) blocks, all full and committed
	slot   int32    // state slot + 1; 0: none
	spare  int32    // spare state slot + 1 (Config.Spares); 0: none
}

// parentOf is the chain hash of the block before block i: rootHash for the
// first. Blocks 0..i-1 must be committed.
func (b *Blocks) parentOf(i int) uint64 {
	if i == 0 {
		return rootHash
	}
	return b.hashes[i-1]
}

// Table returns the block ids covering the sequence's positions in order,
// as model.Row.Blocks wants. The slice is valid until the next change.
func (b *Blocks) Table() []int32 { return b.table }

// Len returns the number of blocks held.
func (b *Blocks) Len() int { return len(b.table) }

// Stats is a snapshot of the pool.
type Stats struct {
	Total     int   // blocks in the pool
	Used      int   // blocks referenced by at least one sequence
	Free      int   // blocks with no reference (Cached ones among them can still be hit)
	Cached    int   // blocks in the prefix index, referenced or not
	HitTokens int64 // tokens served from the prefix index by Reuse
	Queried   int64 // tokens looked up by Reuse
	Evictions int64 // cached blocks dropped to make space
	// StateSlots and FreeSlots count the state slots (Config.StateSlots)
	// and those no sequence holds, a slot and its spare as one; both zero
	// for a model without state.
	StateSlots, FreeSlots int
	Snapshots             int // state snapshots kept (Config.Snapshots)
}

// Manager is the block pool plus prefix index. It is not safe for
// concurrent use; the scheduler that owns it serialises calls.
type Manager struct {
	blockSize int
	blocks    []block
	tokens    []int32 // blockSize ids per block: the contents of cached blocks, for collision checks
	free      freeList
	index     map[uint64]int32
	children  map[uint64][]int32 // listed blocks by parent hash
	copies    []metal.BlockCopy  // owed by attachments since the last TakeCopies
	hitTokens int64
	queried   int64
	evictions int64
	slots     slotPool
	snaps     snapshotPool
	onEvict   func(Evicted) // a lower tier's hook (tier.go); nil: none
}

// New returns a Manager with every block free.
func New(c Config) (*Manager, error) {
	if c.BlockSize == 0 {
		c.BlockSize = DefaultBlockSize
	}
	if c.NumBlocks <= 0 || c.BlockSize <= 0 || c.StateSlots < 0 {
		return nil, fmt.Errorf("kvcache: need positive NumBlocks and BlockSize and no negative StateSlots, got %d, %d and %d", c.NumBlocks, c.BlockSize, c.StateSlots)
	}
	if c.Snapshots < 0 || c.Snapshots > 0 && (c.StateSlots == 0 || c.SnapshotEvery <= 0 || c.SnapshotEvery%c.BlockSize != 0) {
		return nil, fmt.Errorf("kvcache: %d snapshots every %d positions need state slots and an interval that is a multiple of the block size %d", c.Snapshots, c.SnapshotEvery, c.BlockSize)
	}
	per := 1
	if c.Spares {
		per = 2
	}
	m := &Manager{
		blockSize: c.BlockSize,
		blocks:    make([]block, c.NumBlocks),
		tokens:    make([]int32, c.NumBlocks*c.BlockSize),
		free:      freeList{head: none, tail: none},
		index:     make(map[uint64]int32),
		children:  make(map[uint64][]int32),
		slots:     newSlotPool(c.StateSlots, c.Spares),
		snaps:     newSnapshotPool(c.StateSlots*per, c.Snapshots, c.SnapshotEvery),
	}
	for id := range m.blocks {
		m.free.pushTail(m.blocks, int32(id))
	}
	return m, nil
}

// BlockSize returns the tokens per block.
func (m *Manager) BlockSize() int { return m.blockSize }

// NumFree returns how many blocks Allocate can still hand out.
func (m *Manager) NumFree() int { return m.free.n }

// BlocksFor returns the number of blocks that n tokens occupy.
func (m *Manager) BlocksFor(n int) int { return (n + m.blockSize - 1) / m.blockSize }

// Stats returns a snapshot of the pool.
func (m *Manager) Stats() Stats {
	return Stats{
		Total: len(m.blocks), Used: len(m.blocks) - m.free.n, Free: m.free.n, Cached: len(m.index),
		HitTokens: m.hitTokens, Queried: m.queried, Evictions: m.evictions,
		StateSlots: m.slots.n / max(m.slots.per, 1), FreeSlots: len(m.slots.free) / max(m.slots.per, 1),
		Snapshots: m.snaps.n - len(m.snaps.free),
	}
}

// Lookup returns how many leading tokens of tokens a call to Reuse would
// serve from the cache, without taking any block.
func (m *Manager) Lookup(tokens []int32) int {
	if m.snapshotting() {
		depth, _ := m.snapshotPrefix(tokens)
		return depth * m.blockSize
	}
	tokens = m.hittable(tokens)
	full, parent := m.walkPrefix(tokens, func(int32, uint64) {})
	_, n := m.partialMatch(parent, m.partialWant(tokens, full))
	return full*m.blockSize + n
}

// Reuse attaches the longest cached prefix of tokens to the empty table b
// and returns the number of tokens it covers, always less than len(tokens):
// the whole indexed blocks it covers are shared (a reference on each), and
// the positions of the block after them that a cached or partial block
// holds are the table's own block's, either that block itself (an
// unreferenced partial block whose every committed position matches) or a
// copy the caller must make (TakeCopies) before the table's positions are
// read or written.
func (m *Manager) Reuse(b *Blocks, tokens []int32) (int, error) {
	hit, _, err := m.attachPrefix(b, m.hittable(tokens))
	if err == nil {
		m.hitTokens += int64(hit)
		m.queried += int64(len(tokens))
	}
	return hit, err
}

// Admit is Reuse followed by Allocate of want(hit) tokens, and with state
// slots the taking of one, all or nothing: on ErrOutOfBlocks or
// ErrOutOfSlots b is left empty and the attempt is not counted in the hit
// statistics. It is how a scheduler admits a waiting sequence.
func (m *Manager) Admit(b *Blocks, tokens []int32, want func(hit int) int) (int, error) {
	return m.admit(b, tokens, want, true)
}

// AdmitUncounted is Admit left out of the hit statistics, for work the
// caller does on its own account (the scheduler's warming of a finished
// answer's state), which no request asked for.
func (m *Manager) AdmitUncounted(b *Blocks, tokens []int32, want func(hit int) int) (int, error) {
	return m.admit(b, tokens, want, false)
}

func (m *Manager) admit(b *Blocks, tokens []int32, want func(hit int) int, count bool) (int, error) {
	if m.FreeSlots() == 0 {
		return 0, fmt.Errorf("%w: all %d held", ErrOutOfSlots, m.slots.n/m.slots.per)
	}
	owed := len(m.copies)
	hit, snap, err := m.attachPrefix(b, tokens)
	if err != nil {
		return 0, err
	}
	if err := m.Allocate(b, want(hit)); err != nil {
		m.Free(b)
		m.copies = m.copies[:owed]
		return 0, err
	}
	if m.slots.n > 0 {
		m.takeSlot(b)
	}
	if snap != 0 {
		m.snaps.copies = append(m.snaps.copies, metal.StateCopy{Src: snap - 1, Dst: b.Slot()})
	}
	if count {
		m.hitTokens += int64(hit)
		m.queried += int64(len(tokens))
	}
	return hit, nil
}

// attachPrefix attaches the longest usable cached prefix of tokens to the
// empty table b: with snapshots, up to the deepest one, whose slot + 1 it
// also returns.
func (m *Manager) attachPrefix(b *Blocks, tokens []int32) (int, int32, error) {
	if len(b.table) != 0 {
		return 0, 0, fmt.Errorf("kvcache: Reuse on a table that already holds %d blocks", len(b.table))
	}
	if m.snapshotting() {
		hit, snap := m.attachSnapshot(b, tokens)
		return hit, snap, nil
	}
	tokens = m.hittable(tokens)
	full, parent := m.walkPrefix(tokens, func(id int32, h uint64) {
		m.acquire(id)
		b.table = append(b.table, id)
		b.hashes = append(b.hashes, h)
	})
	src, n := m.partialMatch(parent, m.partialWant(tokens, full))
	if n > 0 && !m.attachPartial(b, src, n) {
		n = 0
	}
	return full*m.blockSize + n, 0, nil
}

// walkPrefix calls visit for each indexed block of the longest cached prefix
// of tokens, never covering the last token, and returns how many there are
// and the last one's hash (rootHash for none).
func (m *Manager) walkPrefix(tokens []int32, visit func(id int32, h uint64)) (int, uint64) {
	bs := m.blockSize
	parent := rootHash
	i := 0
	for ; (i+1)*bs < len(tokens); i++ {
		chunk := tokens[i*bs : (i+1)*bs]
		h := chainHash(parent, chunk)
		id, ok := m.index[h]
		if !ok || m.blocks[id].parent != parent || !slices.Equal(m.tokens[int(id)*bs:(int(id)+1)*bs], chunk) {
			break
		}
		visit(id, h)
		parent = h
	}
	return i, parent
}

// Allocate grows b so that it covers positions 0..n-1. It takes all the
// blocks it needs or none: on ErrOutOfBlocks b is unchanged.
func (m *Manager) Allocate(b *Blocks, n int) error {
	need := m.BlocksFor(n) - len(b.table)
	if need <= 0 {
		return nil
	}
	if need > m.free.n {
		return fmt.Errorf("%w: need %d more blocks for %d tokens, %d free", ErrOutOfBlocks, need, n, m.free.n)
	}
	for range need {
		id := m.free.popHead(m.blocks)
		m.evict(id)
		m.blocks[id].ref = 1
		b.table = append(b.table, id)
	}
	return nil
}

// Commit indexes the full blocks among the first n tokens of the sequence
// (tokens is the whole sequence; its first n positions must have their keys
// and values computed), and lists the block after them, with its first
// n mod BlockSize positions, for partial hits. Blocks already committed are
// skipped. Only accepted tokens may be committed: committed full blocks can
// no longer be truncated.
func (m *Manager) Commit(b *Blocks, tokens []int32, n int) error {
	if n > len(tokens) {
		return fmt.Errorf("kvcache: Commit of %d tokens from a sequence of %d", n, len(tokens))
	}
	if m.slots.n > 0 && !m.snapshotting() {
		return nil // no prefix index without state snapshots (hittable)
	}
	full := min(n/m.blockSize, len(b.table))
	bs := m.blockSize
	for i := len(b.hashes); i < full; i++ {
		parent := b.parentOf(i)
		chunk := tokens[i*bs : (i+1)*bs]
		h := chainHash(parent, chunk)
		b.hashes = append(b.hashes, h)
		id := b.table[i]
		if m.blocks[id].cached {
			continue
		}
		if _, taken := m.index[h]; taken {
			m.unlist(id) // write-once: an equal block is already indexed
			continue
		}
		blk := &m.blocks[id]
		blk.cached, blk.hash = true, h
		copy(m.tokens[int(id)*bs:], chunk)
		m.list(id, parent, bs)
		m.index[h] = id
	}
	if i := len(b.hashes); i == full && n > i*bs && i < len(b.table) && m.slots.n == 0 {
		// (A state model resumes only at snapshots, at block ends.)
		m.commitPartial(b.table[i], b.parentOf(i), tokens[i*bs:n])
	}
	return nil
}

// Truncate shrinks b to cover positions 0..n-1, releasing whole blocks past
// the end: the rollback of rejected speculative positions. It refuses to cut
// into committed full blocks, whose contents the index promises; a listed
// partial block keeps only its positions before n.
func (m *Manager) Truncate(b *Blocks, n int) error {
	if n < len(b.hashes)*m.blockSize {
		return fmt.Errorf("kvcache: cannot truncate to %d tokens: the first %d are committed", n, len(b.hashes)*m.blockSize)
	}
	if i := len(b.hashes); i < len(b.table) {
		m.trimPartial(b.table[i], n-i*m.blockSize)
	}
	keep := m.BlocksFor(n)
	for i := len(b.table) - 1; i >= keep; i-- {
		m.release(b.table[i])
	}
	if keep < len(b.table) {
		b.table = b.table[:keep]
	}
	return nil
}

// Free releases every block of b and empties it. Blocks are released from
// the end, so a sequence's tail, the part least likely to be shared, is
// evicted first. Freeing an empty table does nothing.
func (m *Manager) Free(b *Blocks) {
	for i := len(b.table) - 1; i >= 0; i-- {
		m.release(b.table[i])
	}
	b.table, b.hashes = b.table[:0], b.hashes[:0]
	m.releaseSlot(b)
}

// hittable is what of tokens a prefix hit may cover: all of them, or none
// for a model with state layers, whose state at the hit's end no block
// holds (Admit with snapshots resumes from one).
func (m *Manager) hittable(tokens []int32) []int32 {
	if m.slots.n > 0 {
		return nil
	}
	return tokens
}

func (m *Manager) acquire(id int32) {
	blk := &m.blocks[id]
	if blk.ref == 0 {
		m.free.remove(m.blocks, id)
	}
	blk.ref++
}

// release drops one reference. A release below zero is a double free: a
// bug in the caller that would corrupt another sequence's cache, so it
// panics rather than continue.
func (m *Manager) release(id int32) {
	blk := &m.blocks[id]
	if blk.ref <= 0 {
		panic(fmt.Sprintf("kvcache: block %d released with reference count %d (double free)", id, blk.ref))
	}
	blk.ref--
	if blk.ref > 0 {
		return
	}
	if blk.listed {
		m.free.pushTail(m.blocks, id) // most recently used end
	} else {
		m.free.pushHead(m.blocks, id) // nothing worth keeping: reuse first
	}
}

// evict drops a block that is about to be reused from the index and its
// parent's children.
func (m *Manager) evict(id int32) {
	m.unindex(id)
	m.unlist(id)
}

// unindex drops a cached block from the index.
func (m *Manager) unindex(id int32) {
	blk := &m.blocks[id]
	if blk.cached {
		m.dropSnapshot(id)
		if m.onEvict != nil {
			m.onEvict(Evicted{ID: id, Hash: blk.hash, Parent: blk.parent, Tokens: m.tokens[int(id)*m.blockSize : (int(id)+1)*m.blockSize]})
		}
		delete(m.index, blk.hash)
		blk.cached = false
		m.evictions++
	}
}
