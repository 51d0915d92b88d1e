package actors

import (
	"slices"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/splash-inference/splash/engine"
	"github.com/splash-inference/splash/engine/kvcache"
	"github.com/splash-inference/splash/engine/kvdisk"
	"github.com/splash-inference/splash/metal"
)

// The disk tier (Config.Disk) under the prefix cache. The step loop never
// waits on it:
//   - Writes: a cached block the pool evicts is copied out of the KV
//     cache (between steps, when Schedule allocates) and queued for the
//     store's writer goroutine; a full queue drops it.
//   - Reads: a submitted request whose prompt's next full blocks after
//     the RAM prefix are on disk is held back while a goroutine reads and
//     verifies them; the batcher then, between steps, restores them into
//     free blocks (kvcache.Manager.Restore, metal.KVCache.WriteBlock) and
//     adds the request, whose admission hits them as RAM blocks. Other
//     requests step on meanwhile. A record that fails its check is a
//     miss: the prompt computes those positions.
//   - Shutdown: once the forward passes have stopped, every block still
//     cached in RAM is written, so a restart finds the whole cache.

// diskTier joins the store to the target's KV cache.
type diskTier struct {
	store   *kvdisk.Store
	kv      *metal.KVCache
	metrics *metricsBox
}

// diskReads is one batcher's bookkeeping of reads in flight.
type diskReads struct {
	*diskTier
	cancelled map[uint64]bool // requests whose read is in flight: true once cancelled
	ready     []*diskRead     // finished reads waiting for a step boundary
}

// diskRead is a finished read for a held-back request.
type diskRead struct {
	sub     *Submit
	entries []kvdisk.Entry // the blocks read and verified, in prompt order
}

// blockRef names a block of a prompt to read from disk.
type blockRef struct {
	hash, parent uint64
	tokens       []int32
}

// spill is the pool's OnEvict hook: it copies the evicted block's bytes
// and queues them for the writer, unless the disk holds the block already.
func (d *diskTier) spill(e kvcache.Evicted) {
	if d.store.Contains(kvdisk.KindKV, e.Hash) {
		return
	}
	buf, err := d.kv.ReadBlock(d.store.Buffer(d.kv.BlockBytes()), e.ID)
	if err != nil {
		return
	}
	d.store.Spill(kvdisk.Entry{Kind: kvdisk.KindKV, Hash: e.Hash, Parent: e.Parent, Tokens: slices.Clone(e.Tokens), Payload: buf})
}

// save writes every block the pool caches to disk, now: at shutdown,
// so that a restart finds the whole cache, not only what was evicted.
func (d *diskTier) save(pool *kvcache.Manager) {
	pool.EachCached(func(e kvcache.Evicted) {
		if d.store.Contains(kvdisk.KindKV, e.Hash) {
			return
		}
		if buf, err := d.kv.ReadBlock(nil, e.ID); err == nil {
			d.store.Put(kvdisk.Entry{Kind: kvdisk.KindKV, Hash: e.Hash, Parent: e.Parent, Tokens: e.Tokens, Payload: buf})
		}
	})
}

// wanted lists the blocks of prompt (as the prefix cache names it,
// engine.CacheKeys) on disk that would extend its prefix
// in RAM: those after the full blocks the pool indexes, up to the first
// the disk lacks, never covering the last token (a prefix hit does not)
// and no more than the free blocks beside the prefix's.
func (d *diskTier) wanted(pool *kvcache.Manager, prompt []int32) []blockRef {
	bs := pool.BlockSize()
	hashes := kvcache.ChainHashes(nil, prompt, bs)
	i := 0
	for i < len(hashes) && pool.Indexed(hashes[i]) {
		i++
	}
	var refs []blockRef
	room := pool.NumFree() - i // the prefix's blocks may be among the free ones
	for ; i < len(hashes) && (i+1)*bs < len(prompt) && len(refs) < room; i++ {
		parent := kvcache.RootHash
		if i > 0 {
			parent = hashes[i-1]
		}
		toks := prompt[i*bs : (i+1)*bs]
		if !d.store.Match(kvdisk.KindKV, hashes[i], parent, toks) {
			break
		}
		refs = append(refs, blockRef{hashes[i], parent, toks})
	}
	return refs
}

// read reads the blocks in order, up to the first that fails (a miss: it
// and what follows are recomputed).
func (d *diskTier) read(refs []blockRef) []kvdisk.Entry {
	var out []kvdisk.Entry
	for _, r := range refs {
		e, err := d.store.Get(kvdisk.KindKV, r.hash)
		if err != nil || len(e.Payload) != d.kv.BlockBytes() {
			break
		}
		out = append(out, e)
	}
	return out
}

// restore puts entries, blocks of prompt, into free blocks of the pool, in
// order, stopping at the first the pool refuses; it runs between steps.
// The prompt's prefix in RAM is made the most recently used first, so
// that the restored blocks do not evict it.
func (d *diskTier) restore(pool *kvcache.Manager, prompt []int32, entries []kvdisk.Entry) {
	for _, h := range kvcache.ChainHashes(nil, prompt, pool.BlockSize()) {
		if !pool.Touch(h) {
			break
		}
	}
	for _, e := range entries {
		id, ok := pool.Restore(e.Hash, e.Parent, e.Tokens)
		if !ok {
			if pool.Indexed(e.Hash) {
				continue // restored meanwhile for another request
			}
			return
		}
		if d.kv.WriteBlock(id, e.Payload) != nil {
			panic("actors: a disk block of the checked size did not fit its cache block") // read checked the size
		}
		d.metrics.diskRestoredTokens.Add(int64(len(e.Tokens)))
	}
}

// readFromDisk holds m back and starts reading its prompt's blocks when
// the disk can extend its prefix; it reports whether it did.
func (b *BatcherActor) readFromDisk(ctx actor.Context, m *Submit) bool {
	if b.disk == nil {
		return false
	}
	refs := b.disk.wanted(b.sched.KV(), engine.CacheKeys(m.Req.Prompt, m.Req.Images))
	if len(refs) == 0 {
		return false
	}
	b.disk.cancelled[m.Req.ID] = false
	root, self, d := ctx.ActorSystem().Root, ctx.Self(), b.disk.diskTier
	go func() { root.Send(self, &diskRead{sub: m, entries: d.read(refs)}) }()
	return true
}

// cancelRead marks a held-back request cancelled; it reports whether id
// was one.
func (b *BatcherActor) cancelRead(id uint64) bool {
	if b.disk == nil {
		return false
	}
	if _, ok := b.disk.cancelled[id]; ok {
		b.disk.cancelled[id] = true
		return true
	}
	return false
}

// diskReadDone queues a finished read for the next step boundary.
func (b *BatcherActor) diskReadDone(ctx actor.Context, r *diskRead) {
	b.disk.ready = append(b.disk.ready, r)
	if !b.stepping {
		ctx.Send(ctx.Self(), &stepNow{})
	}
}

// applyReads restores the finished reads' blocks and adds their requests;
// it runs between steps, when no forward pass reads the cache.
func (b *BatcherActor) applyReads(ctx actor.Context) {
	if b.disk == nil {
		return
	}
	for _, r := range b.disk.ready {
		b.disk.restore(b.sched.KV(), engine.CacheKeys(r.sub.Req.Prompt, r.sub.Req.Images), r.entries)
		id := r.sub.Req.ID
		cancelled := b.disk.cancelled[id]
		delete(b.disk.cancelled, id)
		if !cancelled {
			b.add(ctx, r.sub)
		}
	}
	clear(b.disk.ready)
	b.disk.ready = b.disk.ready[:0]
}
