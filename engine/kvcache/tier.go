package kvcache

// A lower cache tier (a disk, kvdisk) keeps cached blocks the pool evicts
// and gives them back: OnEvict tells it about a cached block about to be
// reused, while its contents are still intact, and Restore indexes a block
// whose contents the tier brings back, as if a sequence had committed it.

// RootHash is the parent hash of a sequence's first block.
const RootHash = rootHash

// Evicted describes a cached block the pool is about to reuse. Tokens
// aliases the pool's memory and is valid only during the call.
type Evicted struct {
	ID     int32 // the block: its keys and values are intact during the call
	Hash   uint64
	Parent uint64
	Tokens []int32
}

// ChainHashes appends to dst the chain hashes of the full blocks of
// tokens, the keys the prefix index and a lower tier share.
func ChainHashes(dst []uint64, tokens []int32, blockSize int) []uint64 {
	parent := rootHash
	for i := 0; (i+1)*blockSize <= len(tokens); i++ {
		parent = chainHash(parent, tokens[i*blockSize:(i+1)*blockSize])
		dst = append(dst, parent)
	}
	return dst
}

// OnEvict makes f be called with every cached block the pool evicts,
// before its contents change. f must not call the Manager.
func (m *Manager) OnEvict(f func(Evicted)) { m.onEvict = f }

// EachCached calls f with every cached block, as OnEvict would; f must not
// call the Manager.
func (m *Manager) EachCached(f func(Evicted)) {
	for h, id := range m.index {
		f(Evicted{ID: id, Hash: h, Parent: m.blocks[id].parent, Tokens: m.tokens[int(id)*m.blockSize : (int(id)+1)*m.blockSize]})
	}
}

// Indexed reports whether a block with this chain hash is in the index.
func (m *Manager) Indexed(hash uint64) bool {
	_, ok := m.index[hash]
	return ok
}

// Touch makes the cached block under hash, when it is free, the most
// recently used, so that restoring the blocks after it does not evict it.
// It reports whether the hash is indexed.
func (m *Manager) Touch(hash uint64) bool {
	id, ok := m.index[hash]
	if ok && m.blocks[id].ref == 0 {
		m.free.remove(m.blocks, id)
		m.free.pushTail(m.blocks, id)
	}
	return ok
}

// Restore takes a free block for a full block of tokens under hash (its
// chain hash after parent) and indexes it as an unreferenced cached block,
// the most recently used: the caller must write the block's keys and
// values (metal.KVCache.WriteBlock) before the next forward pass. It
// returns false, taking nothing, when the hash is already indexed, the
// tokens are not a block, or no block is free. Like Allocate it may evict
// the least recently used cached block.
func (m *Manager) Restore(hash, parent uint64, tokens []int32) (int32, bool) {
	if _, ok := m.index[hash]; ok || len(tokens) != m.blockSize || m.free.n == 0 || m.slots.n > 0 {
		return none, false
	}
	id := m.free.popHead(m.blocks)
	m.evict(id)
	blk := &m.blocks[id]
	blk.cached, blk.hash = true, hash
	copy(m.tokens[int(id)*m.blockSize:], tokens)
	m.list(id, parent, m.blockSize)
	m.index[hash] = id
	m.free.pushTail(m.blocks, id)
	return id, true
}
