// Package kvdisk is the prefix cache's disk tier: cached KV blocks evicted
// from RAM are kept as files under a cache directory, up to a byte budget,
// and survive a restart.
//
// # Records
//
// Each record is one file named by its key, the block's chain hash (the
// same hash the RAM index uses, kvcache.ChainHashes), as 16 hex digits and
// ".blk". A record holds a fixed header (magic, format version, kind, token
// count, hash, parent hash, payload length), the token ids, the payload and
// a CRC-32C of everything before it. The kind says what the payload is:
// KindKV is one block's keys and values of every layer, as the backend's
// cache stores them; other kinds (a linear-attention layer's state snapshot
// at a block boundary, say) can sit beside them under the same hash without
// a new format.
//
// # Safety
//
// A record becomes visible only once complete: it is written to a temporary
// file, synced and renamed into place, so a process killed mid-write leaves
// at worst a temporary file, which the next Open deletes. Open rebuilds the
// index from the records' headers and drops files that are not records of
// this directory (a foreign or torn file: wrong magic, version or size, or
// a name that is not its hash). Get verifies the checksum and the header
// against the index, and drops a record that fails, so a corrupt block is
// a miss (recomputed), never served.
//
// Errors never fail a request: a write that fails (a full disk, an I/O
// error) is counted and logged once, and the store stops writing, leaving
// the cache in RAM only; a read that fails is a miss.
//
// # Budget
//
// The store keeps at most Budget bytes of record files, least recently
// used (written or read) dropped first. Which directory holds which cache
// is the caller's: Dir names one per model identity, KV type and block
// size, since only a block of the same model, cache type and block size
// may be reused.
package kvdisk
