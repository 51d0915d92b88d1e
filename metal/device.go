package metal

import (
	"fmt"
	"strings"
)

// A Device is a Backend as a server plans for it: besides the kernels, what
// its weights and scratch take and how its kernels' costs compare, so that
// the memory plan, the KV cache type and the prompt chunking follow the
// hardware a model runs on. Every backend a command can choose is a Device.
type Device interface {
	Backend

	// PackedBytes is the memory of weights kept in a layout of the
	// device's own (WeightPreparer), beyond the model's tensors.
	PackedBytes() int64

	// AttentionScratchBytes bounds the scratch attention takes for heads
	// query heads of headDim at a context of context positions.
	AttentionScratchBytes(heads, headDim, context int) int64

	// ReserveAttention allocates that scratch up front for contexts of up
	// to context positions, so that a long prompt's chunks reuse it
	// rather than grow it. Call it before the device's first use.
	ReserveAttention(heads, headDim, context int)

	// AutoKVType is the KV cache type the device runs best for heads of
	// these sizes in blocks of blockSize, and why (--kv-cache-type auto).
	AutoKVType(blockSize int, headDims ...int) (KVType, string)

	// SIMDAttention reports whether attention over a cache of type t runs
	// on the device's fast loops rather than a slow fallback.
	SIMDAttention(t KVType) bool

	// QuantSpeedup and AttentionSpeedup are the speed of products over
	// weights of type d and of attention over a cache of type t, relative
	// to the device's float weights and float16 cache.
	QuantSpeedup(d DType) float64
	AttentionSpeedup(t KVType) float64
}

// DeviceOptions are the settings every driver takes; a driver ignores
// those that do not apply to it.
type DeviceOptions struct {
	Threads    int    // compute threads; 0: every core
	Portable   bool   // the portable reference kernels only
	Kernels    string // a kernel set by name (the CPU's SPLASH_KERNELS); "" the best
	SmallPages bool   // no huge pages for weights and caches
}

// A Driver builds Devices of one kind. Check reports why the driver cannot
// run here (nil when it can); New builds a device, one per model runner.
type Driver struct {
	Name  string
	Check func(DeviceOptions) error
	New   func(DeviceOptions) (Device, error)
}

// Drivers are the backends a program offers, best first.
type Drivers []Driver

// Names lists the drivers by name.
func (ds Drivers) Names() []string {
	names := make([]string, len(ds))
	for i, d := range ds {
		names[i] = d.Name
	}
	return names
}

// Choose finds the driver called name, or with name "auto" the first one
// that can run here, and checks that it can run with o.
func (ds Drivers) Choose(name string, o DeviceOptions) (Driver, error) {
	var why []string
	for _, d := range ds {
		if name != "auto" && d.Name != name {
			continue
		}
		err := d.Check(o)
		if err == nil {
			return d, nil
		}
		if name != "auto" {
			return Driver{}, fmt.Errorf("metal: backend %s: %w", name, err)
		}
		why = append(why, d.Name+": "+err.Error())
	}
	if name == "auto" {
		return Driver{}, fmt.Errorf("metal: no backend can run here (%s)", strings.Join(why, "; "))
	}
	return Driver{}, fmt.Errorf("metal: unknown backend %q (want auto or one of %s)", name, strings.Join(ds.Names(), ", "))
}
