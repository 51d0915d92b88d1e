// Package backendtest is the conformance suite every metal.Backend must
// pass, whatever it runs on (the CPU kernel sets today, Metal next). A
// backend's own tests call Run with a constructor:
//
//	func TestConformance(t *testing.T) {
//		backendtest.Run(t, func(t testing.TB) metal.Backend { return mybackend.New() })
//	}
//
// Each check compares the backend with a float64 computation written here
// from the interface's documentation, not with another backend, so a new
// backend is held to the maths rather than to the CPU's rounding. The
// tolerances are the interface's contract: float32 arithmetic for float
// weights and activations; for quantized (q8, q4) weights, activations
// rounded to int8 per group of metal.GroupSize as the CPU kernels do (a
// backend that keeps them in float is well inside the bound); KV caches
// at their type's precision (a bf16 cache also rounds queries and softmax
// weights to bfloat16). Beyond accuracy, Run checks what the engine relies
// on: batch invariance (a row's result is bit-identical alone and among
// others), in-place aliasing where the interface allows it, and that the
// optional interfaces (WeightPreparer, SharedInputMatMul, KVMemory) keep
// their promises.
package backendtest
