package metal

import "fmt"

// DType is the element type of a Tensor.
type DType uint8

const (
	F32 DType = iota
	F16
	BF16
	Q8 // group-quantized int8, see package doc
	Q4 // group-quantized 4-bit, see package doc
)

// GroupSize is the number of consecutive elements along Cols that share one
// scale in Q8 and Q4 tensors.
const GroupSize = 32

var dtypeNames = [...]string{F32: "f32", F16: "f16", BF16: "bf16", Q8: "q8", Q4: "q4"}

func (d DType) String() string {
	if int(d) < len(dtypeNames) {
		return dtypeNames[d]
	}
	return fmt.Sprintf("dtype(%d)", d)
}

// ParseDType parses the names printed by DType.String.
func ParseDType(s string) (DType, error) {
	for i, n := range dtypeNames {
		if n == s {
			return DType(i), nil
		}
	}
	return 0, fmt.Errorf("metal: unknown dtype %q (want f32, f16, bf16, q8 or q4)", s)
}

// Quantized reports whether d is a group-quantized type.
func (d DType) Quantized() bool { return d == Q8 || d == Q4 }

// Tensor is a read-only matrix of Rows×Cols elements in the kernels' layout
// (see package doc). A vector is a Tensor with Rows == 1. Data may be a slice
// of a memory-mapped file: kernels never write to it.
type Tensor struct {
	DType      DType
	Rows, Cols int
	Data       []byte
}

// Size returns the number of bytes a Rows×Cols tensor of type d occupies,
// including the scales of quantized types.
func Size(d DType, rows, cols int) int {
	n := rows * cols
	switch d {
	case F32:
		return 4 * n
	case F16, BF16:
		return 2 * n
	case Q8:
		return scaleOffset(n) + 2*n/GroupSize
	case Q4:
		return scaleOffset(n/2) + 2*n/GroupSize
	}
	panic("metal: unknown dtype " + d.String())
}

// ScaleOffset returns the byte offset of the float16 scales in a quantized
// tensor's Data.
func (t *Tensor) ScaleOffset() int {
	switch t.DType {
	case Q8:
		return scaleOffset(t.Rows * t.Cols)
	case Q4:
		return scaleOffset(t.Rows * t.Cols / 2)
	}
	return 0
}

func scaleOffset(quantBytes int) int { return (quantBytes + 63) &^ 63 }

// Validate checks that the tensor's Data has exactly the size its dtype and
// shape require, and that quantized tensors have whole groups.
func (t *Tensor) Validate() error {
	if t.Rows <= 0 || t.Cols <= 0 {
		return fmt.Errorf("metal: tensor shape %dx%d is empty", t.Rows, t.Cols)
	}
	if t.DType.Quantized() && t.Cols%GroupSize != 0 {
		return fmt.Errorf("metal: %s tensor with %d columns: not a multiple of %d", t.DType, t.Cols, GroupSize)
	}
	if want := Size(t.DType, t.Rows, t.Cols); len(t.Data) != want {
		return fmt.Errorf("metal: %s tensor %dx%d has %d bytes, want %d", t.DType, t.Rows, t.Cols, len(t.Data), want)
	}
	return nil
}
