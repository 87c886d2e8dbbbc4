// Package device decides where gokeras computes: it names devices the way
// TensorFlow does, carries device scopes in a context.Context, places
// compiled graphs on devices, and moves tensors between them.
//
// # Device specs
//
// A device is written as a spec string, parsed by ParseSpec into a Spec.
// Every spelling TensorFlow accepts works:
//
//	/CPU:0   /cpu:0   cpu   CPU:0
//	/GPU:1   /gpu:1   gpu   /device:GPU:1
//	/job:localhost/replica:0/task:0/device:GPU:1
//	/job:localhost/device:CPU:0
//
// A missing index means 0, so "gpu" is /GPU:0. A spec names a device of the
// process that reads it, so the only job is localhost. Data-parallel
// training across processes (package distribute) names no remote devices:
// each process of the MPI job trains on its own /CPU:0 or /GPU:N.
// Spec.String gives the canonical form,
// /job:localhost/replica:0/task:0/device:GPU:1, and Spec.Short the form
// people type, /GPU:1. Malformed specs (an unknown device type such as
// TPU, a bad index, two devices in one spec, a remote job) are errors
// wrapping ErrInvalidSpec; each quotes the input and says what a spec
// looks like. Parsing never checks that the device exists;
// ListPhysicalDevices tells what exists.
//
// # Scopes travel in a context
//
// With runs a function inside a device scope, like TensorFlow's
// `with tf.device("/GPU:0"):`. The scope is a value in the context.Context
// it hands to the function, so it goes wherever that context goes, and the
// innermost scope wins:
//
//	err := device.With(ctx, "/CPU:0", func(ctx context.Context) error {
//		return model.CompileContext(ctx, sgd, loss, ms) // placed on /CPU:0
//	})
//
// NewContext sets a scope without a function; FromContext reads it. There
// is no global or per-goroutine state.
//
// # Placement
//
// Resolve decides where work runs: an explicitly requested Spec if there
// is one, else the scope in its context, else DefaultSpec (/GPU:0 when a
// GPU is visible, else /CPU:0, TensorFlow's rule), and checks that the
// device exists. A missing device is an error wrapping ErrNoSuchDevice
// that names it, lists what exists and says how to fix it. Soft placement
// (PlaceOptions.Soft; train's --soft-placement) falls back to /CPU:0 with
// one warning line instead; it never hides a malformed spec. NewMachine
// binds a compiled graph to a resolved device through its backend, and
// can log where each variable and op runs (driver.MachineOptions.PlacementLog).
//
// Place puts a *tensor.Dense on a device and Copy moves a Tensor to
// another, like tf.identity under tf.device; both always copy and return
// CopyStats (bytes moved, time taken).
//
// # Backends
//
// Each device kind is served by a backend that registers its driver with
// Register from an init function, the way database/sql drivers register:
// package device/cpu (imported by package nn, so every model has /CPU:0)
// and package device/cuda, whose driver exists only with the cudavm build
// tag. What a backend implements is in package device/driver; this package
// imports no backend and no model package. docs/devices.md in the
// repository covers scopes, backends, the CUDA build and the emulated GPU.
package device
