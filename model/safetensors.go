package model

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"

	"github.com/splash-inference/splash/metal"
)

// safetensors: an 8-byte little-endian header length N, N bytes of JSON
// mapping tensor names to {dtype, shape, data_offsets: [begin, end]} (offsets
// relative to the byte after the header) and an optional "__metadata__"
// object, then the tensor bytes.

type stEntry struct {
	DType       string   `json:"dtype"`
	Shape       []int    `json:"shape"`
	DataOffsets [2]int64 `json:"data_offsets"`
}

var stDTypes = map[string]metal.DType{"F32": metal.F32, "F16": metal.F16, "BF16": metal.BF16}

// maxHeader bounds the JSON header we are willing to parse (real ones are a
// few hundred kilobytes at most).
const maxHeader = 100 << 20

// parseSafetensors validates a safetensors image and returns its tensors,
// whose Data slices point into data. name is used in error messages.
// Tensors that are neither 1-D nor 2-D are returned in bad, with the reason,
// so only a model that needs them fails.
func parseSafetensors(data []byte, name string) (tensors map[string]*metal.Tensor, bad map[string]error, err error) {
	if len(data) < 8 {
		return nil, nil, fmt.Errorf("model: %s: %d bytes is too short for a safetensors file", name, len(data))
	}
	n := binary.LittleEndian.Uint64(data)
	if n > maxHeader || n > uint64(len(data)-8) {
		return nil, nil, fmt.Errorf("model: %s: header length %d exceeds the file (%d bytes): truncated or not safetensors", name, n, len(data))
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data[8:8+n], &raw); err != nil {
		return nil, nil, fmt.Errorf("model: %s: bad safetensors header: %w", name, err)
	}
	body := data[8+n:]
	type span struct {
		name       string
		begin, end int64
	}
	var spans []span
	tensors, bad = map[string]*metal.Tensor{}, map[string]error{}
	for tn, msg := range raw {
		if tn == "__metadata__" {
			continue
		}
		var e stEntry
		if err := json.Unmarshal(msg, &e); err != nil {
			return nil, nil, fmt.Errorf("model: %s: tensor %s: bad header entry: %w", name, tn, err)
		}
		b, end := e.DataOffsets[0], e.DataOffsets[1]
		if b < 0 || end < b || end > int64(len(body)) {
			return nil, nil, fmt.Errorf("model: %s: tensor %s: data offsets [%d, %d] outside the %d data bytes (truncated file?)", name, tn, b, end, len(body))
		}
		spans = append(spans, span{tn, b, end})
		dt, ok := stDTypes[e.DType]
		if !ok {
			bad[tn] = fmt.Errorf("model: %s: tensor %s has dtype %s (supported: F32, F16, BF16)", name, tn, e.DType)
			continue
		}
		elems := int64(1)
		for _, d := range e.Shape {
			if d < 0 {
				return nil, nil, fmt.Errorf("model: %s: tensor %s has negative dimension in shape %v", name, tn, e.Shape)
			}
			elems *= int64(d)
		}
		esize := int64(4)
		if dt != metal.F32 {
			esize = 2
		}
		if elems*esize != end-b {
			return nil, nil, fmt.Errorf("model: %s: tensor %s: shape %v of %s needs %d bytes, offsets give %d", name, tn, e.Shape, e.DType, elems*esize, end-b)
		}
		var rows, cols int
		switch {
		case len(e.Shape) == 1:
			rows, cols = 1, e.Shape[0]
		case len(e.Shape) == 2:
			rows, cols = e.Shape[0], e.Shape[1]
		case len(e.Shape) == 3:
			// Stacked matrices, row-major: experts (experts, out, in) or a
			// depthwise convolution's weight (channels, 1, width).
			rows, cols = e.Shape[0]*e.Shape[1], e.Shape[2]
		case len(e.Shape) == 5:
			// A Conv3d kernel (out, in, frames, height, width), such as a
			// vision tower's patch embedding: one row per output channel.
			rows, cols = e.Shape[0], e.Shape[1]*e.Shape[2]*e.Shape[3]*e.Shape[4]
		default:
			bad[tn] = fmt.Errorf("model: %s: tensor %s has shape %v: only 1-D, 2-D and 3-D tensors and 5-D convolution kernels are supported", name, tn, e.Shape)
			continue
		}
		tensors[tn] = &metal.Tensor{DType: dt, Rows: rows, Cols: cols, Data: body[b:end:end]}
	}
	sort.Slice(spans, func(i, j int) bool { return spans[i].begin < spans[j].begin })
	for i := 1; i < len(spans); i++ {
		if spans[i].begin < spans[i-1].end {
			return nil, nil, fmt.Errorf("model: %s: tensors %s and %s overlap", name, spans[i-1].name, spans[i].name)
		}
	}
	return tensors, bad, nil
}

// STTensor is a tensor to write into a safetensors file.
type STTensor struct {
	Name  string
	DType metal.DType // F32, F16 or BF16
	Shape []int
	Data  []byte
}

// WriteSafetensors writes tensors (in name order, header padded to 8 bytes)
// to path.
func WriteSafetensors(path string, tensors []STTensor) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("model: %w", err)
	}
	if err := writeSafetensors(f, tensors); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func writeSafetensors(w io.Writer, tensors []STTensor) error {
	ts := append([]STTensor(nil), tensors...)
	sort.Slice(ts, func(i, j int) bool { return ts[i].Name < ts[j].Name })
	names := map[metal.DType]string{metal.F32: "F32", metal.F16: "F16", metal.BF16: "BF16"}
	var hdr bytes.Buffer
	hdr.WriteByte('{')
	off := int64(0)
	for i, t := range ts {
		dn, ok := names[t.DType]
		if !ok {
			return fmt.Errorf("model: safetensors cannot hold %s tensor %s", t.DType, t.Name)
		}
		if i > 0 {
			hdr.WriteByte(',')
		}
		e, _ := json.Marshal(stEntry{DType: dn, Shape: t.Shape, DataOffsets: [2]int64{off, off + int64(len(t.Data))}})
		k, _ := json.Marshal(t.Name)
		hdr.Write(k)
		hdr.WriteByte(':')
		hdr.Write(e)
		off += int64(len(t.Data))
	}
	hdr.WriteByte('}')
	for hdr.Len()%8 != 0 {
		hdr.WriteByte(' ')
	}
	var n [8]byte
	binary.LittleEndian.PutUint64(n[:], uint64(hdr.Len()))
	if _, err := w.Write(n[:]); err != nil {
		return fmt.Errorf("model: %w", err)
	}
	if _, err := w.Write(hdr.Bytes()); err != nil {
		return fmt.Errorf("model: %w", err)
	}
	for _, t := range ts {
		if _, err := w.Write(t.Data); err != nil {
			return fmt.Errorf("model: %w", err)
		}
	}
	return nil
}
