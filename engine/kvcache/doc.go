// Package kvcache manages the paged KV cache's blocks for the scheduler: a
// pool of fixed-size blocks with reference counts, and a prefix index that
// lets a new sequence reuse the blocks of any earlier sequence that began
// with the same tokens.
//
// # Blocks and sequences
//
// A Manager owns NumBlocks blocks of BlockSize token slots. Each sequence
// holds a Blocks value (its block table, opaque to the scheduler except for
// Table, which is what model.Row.Blocks wants). Allocate grows a table to
// cover N tokens, Truncate shrinks it (rolling back rejected speculative
// positions) and Free releases it. Every block has a reference count; a block
// shared by k sequences through the prefix index has count k, and releasing a
// block whose count is already zero panics, because that is a double free.
//
// # Prefix index
//
// Once a block is full and its tokens' keys and values are computed, Commit
// names it by a chain hash: hash(parent block's hash, the block's token ids),
// so a hash identifies the whole prefix up to the block's end, not just the
// block. The index maps hash to block and is write-once: a block's hash never
// changes while it is indexed, and a second block with the same contents is
// simply not indexed. Matching also compares the stored token ids and parent
// hash, so a 64-bit hash collision is a miss, never wrong reuse.
//
// Reuse attaches the longest cached prefix of a token list to an empty
// sequence, to the token: the whole indexed blocks it covers are shared,
// and the block after them gets the positions that the best matching cached
// or partial block of the same parent holds, by a copy the caller makes
// (TakeCopies, metal.BlockCopy) before the next forward pass, since the
// sequence will write the block's later positions (partial.go). It never
// covers the last token: the scheduler still has to run that position to
// get the logits for the next token, so a prompt resent exactly computes
// one position and one that extends a cached one only its new tokens.
// Commit lists a sequence's partial last block as it goes, so a running,
// finished or preempted sequence's every computed position can be hit.
// Admit is Reuse plus Allocate as one all-or-nothing step, so a sequence
// that does not fit yet leaves no trace (no copy owed, no inflated hit
// statistics). The index knows only token ids, so a prompt rendered by any
// API dialect hits the same blocks.
//
// # Free list and eviction
//
// Blocks with reference count zero sit on one intrusive doubly linked list.
// Indexed ("cached") and listed partial blocks keep their contents there
// and are appended at the tail in least-recently-used order; blocks with no
// useful contents go to the head. Allocation pops from the head, so empty
// blocks are used first and a cached block is evicted (dropped from the
// index and its parent's children) only when space is needed, least
// recently used first. A prefix hit on a free cached block unlinks it
// in O(1).
//
// # State slots (models with state layers)
//
// A model declares per layer what it caches (model.CacheSpec): paged keys
// and values, which live in these blocks, or a fixed-size per-sequence
// state (a linear-attention layer's convolution window and recurrent
// matrix), which lives in a state slot (metal.StateLayer). When the model
// has state layers, Config.StateSlots is the number of slots and every
// sequence Admit admits takes one, held until Free (finish, cancellation
// and preemption all free), as its blocks are; Admit fails with
// ErrOutOfSlots, leaving no trace, when none is free. A model without state
// layers has no slots and takes exactly the paged path.
//
// A state has absorbed every token the model ran, so two rules follow.
// Rollback: Settle, which ends every forward pass, truncates a paged
// table to the positions the sequence keeps, but a sequence with a slot
// cannot keep fewer positions than it wrote, since rejected draft tokens
// would stay in its state. With Config.Spares each sequence also holds a
// spare slot, into which the caller saves the state before a verify pass;
// Settle then swaps slot and spare and reports the saved position, from
// which the caller recomputes what it keeps. Without a saved state it
// refuses (ErrStateRollback). Prefix reuse: a hit needs the state at the
// hit's end, which no block holds, so without snapshots such a manager
// indexes nothing and serves no hit.
//
// Snapshots (Config.Snapshots, snapshots.go) are state slots past the
// running sequences' (and spares) that keep the state after a cached
// block whose end is a multiple of Config.SnapshotEvery, or another block
// end the caller names as a prompt's last: Snapshot, which the scheduler
// calls when a prompt chunk ends there, takes one for the block under its
// chain hash, and a snapshot is dropped with its block's index entry (or
// taken over, least recently used first, when all are held). Admit then
// cuts a hit back to the deepest snapshot within the cached prefix (no
// partial-block hits) and owes a state copy, snapshot to the sequence's
// slot; TakeStateCopies hands the copies, snapshots kept first, to the
// next forward pass, which makes them before its rows.
//
// # A lower tier
//
// A tier below RAM (the disk, engine/kvdisk) hooks in through tier.go:
// OnEvict reports each cached block just before the pool reuses it, its
// contents still intact, with its chain hash, parent hash and tokens
// (ChainHashes computes the same names for a prompt); Restore indexes a
// block the tier brought back as a free cached block, the most recently
// used, whose contents the caller writes before the next forward pass;
// Touch keeps a prompt's blocks already in RAM from being evicted by the
// restores that extend them.
//
// Check verifies every invariant (reference counts against the live block
// tables, free list membership, index consistency, state slots held once);
// CheckLeaks is Check with no live sequences and belongs at the end of every
// test that schedules. Check also verifies that each snapshot is free or
// held by exactly one cached block.
package kvcache
