package cpu

// quantDot is a quantized dot product of one weight row (quant bytes and
// float16 scale bytes) with one int8 activation row.
type quantDot func(w, ws []byte, x qrow) float32

// kernels are the implementations a Backend dispatches to, chosen once at
// New from the CPU's features.
type kernels struct {
	name         string
	dotQ4, dotQ8 quantDot
}

func portableKernels() kernels {
	return kernels{name: "cpu/portable", dotQ4: dotQ4Ref, dotQ8: dotQ8Ref}
}

// Options configure a Backend.
type Options struct {
	Threads int // worker threads; <= 0 means runtime.NumCPU()
	// Portable forces the pure-Go kernels even where faster ones exist
	// (SPLASH_KERNELS=portable on the command line).
	Portable bool
}

func selectKernels(o Options) kernels {
	if o.Portable {
		return portableKernels()
	}
	return bestKernels()
}
