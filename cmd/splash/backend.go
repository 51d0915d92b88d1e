package main

import (
	"fmt"
	"os"

	"github.com/splash-inference/splash/metal"
	"github.com/splash-inference/splash/metal/cpu"
)

// drivers are the compute backends splash can run on, best first: "auto"
// takes the first that can run here. A new backend is one more entry (the
// Metal backend on darwin next), after it passes metal/backendtest.
func drivers() metal.Drivers { return metal.Drivers{cpu.Driver()} }

// device is a chosen backend and its settings: New builds one device per
// model runner (a Backend is owned by one).
type device struct {
	driver metal.Driver
	opts   metal.DeviceOptions
}

func (d device) New() (metal.Device, error) { return d.driver.New(d.opts) }

// chooseDevice picks the backend --backend names ("auto": the best that
// can run here) with threads workers (0: all), reading the environment:
// SPLASH_KERNELS names the CPU's kernel set (cpu.KernelSets: "portable"
// forces the portable kernels, as portable does; "avx2" on an AVX-512 CPU
// runs what an AVX2 one would), SPLASH_HUGEPAGES=off keeps the packed
// weights and the KV cache in ordinary pages. A SPLASH_KERNELS this CPU
// cannot run is an error that lists the ones it can.
func chooseDevice(backend string, threads int, portable bool) (device, error) {
	if backend == "" {
		backend = "auto"
	}
	k := os.Getenv("SPLASH_KERNELS")
	if err := cpu.CheckKernels(k); err != nil {
		return device{}, fmt.Errorf("SPLASH_KERNELS=%s: %w", k, err)
	}
	o := metal.DeviceOptions{Threads: threads, Portable: portable, Kernels: k, SmallPages: os.Getenv("SPLASH_HUGEPAGES") == "off"}
	d, err := drivers().Choose(backend, o)
	if err != nil {
		return device{}, fmt.Errorf("--backend: %w", err)
	}
	return device{driver: d, opts: o}, nil
}
