package model

import (
	"fmt"

	"github.com/splash-inference/splash/metal"
)

// weightLoader fetches tensors by name, checking each shape against the
// config; the first problem is kept in err so a builder reads as a list of
// weights and checks once at the end.
type weightLoader struct {
	w   Tensors
	err error
}

func (l *weightLoader) has(name string) bool {
	_, err := l.w.Tensor(name)
	return err == nil
}

// matrix returns the named (rows, cols) weight matrix.
func (l *weightLoader) matrix(name string, rows, cols int) *metal.Tensor {
	if l.err != nil {
		return nil
	}
	t, err := l.w.Tensor(name)
	if err != nil {
		l.err = fmt.Errorf("missing tensor %s: %w", name, err)
		return nil
	}
	if t.Rows != rows || t.Cols != cols {
		l.err = fmt.Errorf("tensor %s has shape [%d %d], the config implies [%d %d]", name, t.Rows, t.Cols, rows, cols)
		return nil
	}
	if err := t.Validate(); err != nil {
		l.err = fmt.Errorf("tensor %s: %w", name, err)
		return nil
	}
	return t
}

// vector returns the named 1-D weight of length n, widened to float32.
func (l *weightLoader) vector(name string, n int) []float32 {
	t := l.matrix(name, 1, n)
	if t == nil {
		return nil
	}
	return t.Dequantize()
}
