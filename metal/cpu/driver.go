package cpu

import "github.com/splash-inference/splash/metal"

var _ metal.Device = (*Backend)(nil)

// Driver is the CPU backend as a metal.Driver: it runs wherever Go does;
// a kernel set this CPU cannot run is refused (CheckKernels).
func Driver() metal.Driver {
	return metal.Driver{
		Name:  "cpu",
		Check: func(o metal.DeviceOptions) error { return CheckKernels(o.Kernels) },
		New: func(o metal.DeviceOptions) (metal.Device, error) {
			if err := CheckKernels(o.Kernels); err != nil {
				return nil, err
			}
			return NewWithOptions(Options{Threads: o.Threads, Portable: o.Portable, Kernels: o.Kernels, SmallPages: o.SmallPages}), nil
		},
	}
}
