package kvdisk

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
)

// Kind is what a record's payload holds.
type Kind uint8

const (
	// KindKV is one block's keys and values of every layer.
	KindKV Kind = 1
	// KindState is reserved for a snapshot of every state layer at a block
	// boundary (models with linear-attention layers).
	KindState Kind = 2
)

// Entry is one record: what a block's chain hash names.
type Entry struct {
	Kind    Kind
	Hash    uint64  // the block's chain hash: the record's key
	Parent  uint64  // the chain hash of the block before it
	Tokens  []int32 // the block's token ids
	Payload []byte
}

// formatVersion changes whenever the record layout does; records of
// another version are dropped at Open.
const formatVersion = 1

// magic starts every record.
var magic = [8]byte{'S', 'P', 'L', 'K', 'V', 'B', 'L', 'K'}

// headerSize is the fixed part of a record before its token ids:
// magic, version u16, kind u8, reserved u8, token count u32, hash u64,
// parent u64, payload length u64, all little-endian.
const headerSize = 8 + 2 + 1 + 1 + 4 + 8 + 8 + 8

// crcSize is the trailing CRC-32C.
const crcSize = 4

// maxTokens and maxPayload bound what a header may claim, so that a
// corrupt header cannot ask for an absurd allocation.
const (
	maxTokens  = 1 << 16
	maxPayload = 1 << 32
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// errCorrupt marks a record that failed a check.
var errCorrupt = errors.New("kvdisk: corrupt record")

// header is a record's fixed part, decoded.
type header struct {
	kind    Kind
	tokens  int
	hash    uint64
	parent  uint64
	payload int64
}

// size is the whole record's length in bytes.
func (h header) size() int64 {
	return headerSize + 4*int64(h.tokens) + h.payload + crcSize
}

// encode appends e as a record to dst.
func encode(dst []byte, e Entry) []byte {
	head := encodeHead(nil, e)
	dst = append(append(dst, head...), e.Payload...)
	return binary.LittleEndian.AppendUint32(dst, recordCRC(head, e.Payload))
}

// encodeHead appends a record's header and token ids to dst: what
// precedes the payload.
func encodeHead(dst []byte, e Entry) []byte {
	dst = append(dst, magic[:]...)
	dst = binary.LittleEndian.AppendUint16(dst, formatVersion)
	dst = append(dst, byte(e.Kind), 0)
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(e.Tokens)))
	dst = binary.LittleEndian.AppendUint64(dst, e.Hash)
	dst = binary.LittleEndian.AppendUint64(dst, e.Parent)
	dst = binary.LittleEndian.AppendUint64(dst, uint64(len(e.Payload)))
	for _, t := range e.Tokens {
		dst = binary.LittleEndian.AppendUint32(dst, uint32(t))
	}
	return dst
}

// recordCRC is the checksum of a record's head and payload.
func recordCRC(head, payload []byte) uint32 {
	return crc32.Update(crc32.Checksum(head, castagnoli), castagnoli, payload)
}

// decodeHeader reads a record's fixed part.
func decodeHeader(b []byte) (header, error) {
	if len(b) < headerSize {
		return header{}, fmt.Errorf("%w: %d bytes, shorter than a header", errCorrupt, len(b))
	}
	if [8]byte(b[:8]) != magic {
		return header{}, fmt.Errorf("%w: bad magic", errCorrupt)
	}
	if v := binary.LittleEndian.Uint16(b[8:]); v != formatVersion {
		return header{}, fmt.Errorf("%w: format version %d, want %d", errCorrupt, v, formatVersion)
	}
	h := header{
		kind:    Kind(b[10]),
		tokens:  int(binary.LittleEndian.Uint32(b[12:])),
		hash:    binary.LittleEndian.Uint64(b[16:]),
		parent:  binary.LittleEndian.Uint64(b[24:]),
		payload: int64(binary.LittleEndian.Uint64(b[32:])),
	}
	if h.kind != KindKV && h.kind != KindState {
		return header{}, fmt.Errorf("%w: unknown kind %d", errCorrupt, h.kind)
	}
	if h.tokens > maxTokens || h.payload < 0 || h.payload > maxPayload {
		return header{}, fmt.Errorf("%w: %d tokens and %d payload bytes", errCorrupt, h.tokens, h.payload)
	}
	return h, nil
}

// decode checks a whole record (length, checksum) and returns its entry;
// the entry's slices alias b.
func decode(b []byte) (Entry, error) {
	h, err := decodeHeader(b)
	if err != nil {
		return Entry{}, err
	}
	if int64(len(b)) != h.size() {
		return Entry{}, fmt.Errorf("%w: %d bytes, the header says %d", errCorrupt, len(b), h.size())
	}
	body := b[:len(b)-crcSize]
	if crc32.Checksum(body, castagnoli) != binary.LittleEndian.Uint32(b[len(body):]) {
		return Entry{}, fmt.Errorf("%w: checksum mismatch", errCorrupt)
	}
	toks := make([]int32, h.tokens)
	for i := range toks {
		toks[i] = int32(binary.LittleEndian.Uint32(b[headerSize+4*i:]))
	}
	off := headerSize + 4*h.tokens
	return Entry{Kind: h.kind, Hash: h.hash, Parent: h.parent, Tokens: toks, Payload: b[off : off+int(h.payload)]}, nil
}
