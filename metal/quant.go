package metal

import (
	"encoding/binary"
	"fmt"
	"math"
	"unsafe"
)

// Quantize converts a rows×cols float32 matrix into a tensor of type d in the
// layout described in the package doc.
func Quantize(d DType, src []float32, rows, cols int) (*Tensor, error) {
	if len(src) != rows*cols {
		return nil, fmt.Errorf("metal: quantize %dx%d from %d values", rows, cols, len(src))
	}
	t := &Tensor{DType: d, Rows: rows, Cols: cols, Data: make([]byte, Size(d, rows, cols))}
	if d.Quantized() && cols%GroupSize != 0 {
		return nil, fmt.Errorf("metal: cannot quantize %d columns to %s: not a multiple of %d", cols, d, GroupSize)
	}
	switch d {
	case F32:
		for i, v := range src {
			binary.LittleEndian.PutUint32(t.Data[4*i:], math.Float32bits(v))
		}
	case F16:
		for i, v := range src {
			binary.LittleEndian.PutUint16(t.Data[2*i:], F32ToF16(v))
		}
	case BF16:
		for i, v := range src {
			binary.LittleEndian.PutUint16(t.Data[2*i:], F32ToBF16(v))
		}
	case Q8:
		scales := t.Data[t.ScaleOffset():]
		q := unsafe.Slice((*int8)(unsafe.Pointer(unsafe.SliceData(t.Data))), len(src))
		for g := 0; g < len(src)/GroupSize; g++ {
			hs := quantizeQ8Group(q[g*GroupSize:(g+1)*GroupSize], src[g*GroupSize:(g+1)*GroupSize])
			binary.LittleEndian.PutUint16(scales[2*g:], hs)
		}
	case Q4:
		scales := t.Data[t.ScaleOffset():]
		for g := 0; g < len(src)/GroupSize; g++ {
			grp := src[g*GroupSize : (g+1)*GroupSize]
			m := float32(0)
			for _, v := range grp {
				if abs32(v) > abs32(m) {
					m = v
				}
			}
			hs := F32ToF16(m / -8)
			binary.LittleEndian.PutUint16(scales[2*g:], hs)
			inv := inverse(F16ToF32(hs))
			q := t.Data[g*GroupSize/2 : (g+1)*GroupSize/2]
			for j := 0; j < GroupSize/2; j++ {
				lo := clampRound(grp[j]*inv, -8, 7) + 8
				hi := clampRound(grp[j+GroupSize/2]*inv, -8, 7) + 8
				q[j] = byte(lo) | byte(hi)<<4
			}
		}
	default:
		return nil, fmt.Errorf("metal: cannot quantize to %s", d)
	}
	return t, nil
}

// quantizeQ8Group stores a group of GroupSize values x as int8 in q and
// returns its float16 scale: d = max|x|/127 rounded to float16, and each
// q = x/d rounded to nearest even within ±127 (zero for a group of zeros;
// a group with NaN or Inf gets a non-finite scale and zeros, so that it
// dequantizes to NaN). Q8 weights and the q8 KV cache (QuantizeKV) share
// it.
func quantizeQ8Group(q []int8, x []float32) uint16 {
	x, q = x[:GroupSize:GroupSize], q[:GroupSize:GroupSize]
	// The largest magnitude by the bits of |x|, which order as the values
	// do and put NaN above Inf.
	var top uint32
	for _, v := range x {
		top = max(top, math.Float32bits(v)&^(1<<31))
	}
	d := F32ToF16(math.Float32frombits(top) / 127)
	df := F16ToF32(d)
	inv := float32(0)
	if df != 0 {
		inv = 1 / df
	}
	for i, v := range x {
		// Within ±127, adding 1.5·2^23 rounds to a whole number (to
		// nearest even) and subtracting it is exact. (Comparisons, not
		// min and max: NaN passes both and becomes zero below.)
		r := v * inv
		if r > 127 {
			r = 127
		} else if r < -127 {
			r = -127
		}
		r = float32(r+0x1.8p23) - 0x1.8p23
		if r != r {
			r = 0
		}
		q[i] = int8(r)
	}
	return d
}

// Dequantize returns the tensor's values as a new rows×cols float32 slice.
func (t *Tensor) Dequantize() []float32 {
	out := make([]float32, t.Rows*t.Cols)
	for r := 0; r < t.Rows; r++ {
		t.DequantizeRow(out[r*t.Cols:(r+1)*t.Cols], r)
	}
	return out
}

// DequantizeRow writes row r of the tensor into dst (len t.Cols).
func (t *Tensor) DequantizeRow(dst []float32, r int) {
	n := t.Cols
	base := r * n
	switch t.DType {
	case F32:
		for i := range dst[:n] {
			dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(t.Data[4*(base+i):]))
		}
	case F16:
		for i := range dst[:n] {
			dst[i] = F16ToF32(binary.LittleEndian.Uint16(t.Data[2*(base+i):]))
		}
	case BF16:
		for i := range dst[:n] {
			dst[i] = BF16ToF32(binary.LittleEndian.Uint16(t.Data[2*(base+i):]))
		}
	case Q8:
		scales := t.Data[t.ScaleOffset():]
		for i := range dst[:n] {
			s := F16ToF32(binary.LittleEndian.Uint16(scales[2*((base+i)/GroupSize):]))
			dst[i] = s * float32(int8(t.Data[base+i]))
		}
	case Q4:
		scales := t.Data[t.ScaleOffset():]
		for g := 0; g < n/GroupSize; g++ {
			gi := base/GroupSize + g
			s := F16ToF32(binary.LittleEndian.Uint16(scales[2*gi:]))
			q := t.Data[gi*GroupSize/2:]
			for j := 0; j < GroupSize/2; j++ {
				dst[g*GroupSize+j] = s * float32(int(q[j]&15)-8)
				dst[g*GroupSize+j+GroupSize/2] = s * float32(int(q[j]>>4)-8)
			}
		}
	default:
		panic("metal: dequantize " + t.DType.String())
	}
}

func abs32(x float32) float32 { return math.Float32frombits(math.Float32bits(x) &^ (1 << 31)) }

func inverse(s float32) float32 {
	if s == 0 {
		return 0
	}
	return 1 / s
}

func clampRound(x float32, lo, hi int) int {
	r := int(math.RoundToEven(float64(x)))
	return min(max(r, lo), hi)
}
