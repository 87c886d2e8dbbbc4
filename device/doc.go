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
// A missing index means 0, so "gpu" is /GPU:0. gokeras runs in a single
// process, so the job is always localhost and the replica and task are 0.
// Spec.String gives the canonical form,
// /job:localhost/replica:0/task:0/device:GPU:1, and Spec.Short the form
// people type, /GPU:1. Malformed specs (an unknown device type such as
// TPU, a bad index, two devices in one spec, a remote job) are errors
// wrapping ErrInvalidSpec; each quotes the input and says what a spec
// looks like. Parsing never checks that the device exists.
//
// ListPhysicalDevices tells what exists: the CPU always, GPUs when a GPU
// driver is registered and sees them.
//
// # Scopes travel in a context
//
// With runs a function inside a device scope, like TensorFlow's
// `with tf.device("/GPU:0"):`. The scope is a value in a context.Context,
// the way Go carries any request-scoped value: With hands its function a
// context derived from the one it was given, and everything that takes that
// context sees the device.
//
//	err := device.With(ctx, "/CPU:0", func(ctx context.Context) error {
//		return model.CompileContext(ctx, sgd, loss, ms) // placed on /CPU:0
//	})
//
// Scopes nest, and the innermost wins: a With (or NewContext) given fn's
// context makes a scope inside it. FromContext reports the innermost scope
// of a context. Since the scope lives in the context, it goes to any
// goroutine the context is passed to, and code holding a context from
// outside With never sees it. There is no global or per-goroutine state.
// NewContext sets a scope without wrapping code in a function.
//
// # Placement and soft placement
//
// Resolve decides where work runs: an explicitly requested Spec if there
// is one, else the scope in its context, else DefaultSpec, which is /GPU:0
// when a GPU is visible and /CPU:0 otherwise (TensorFlow's rule). It then
// checks that the device exists. A device that does not exist is an error
// wrapping ErrNoSuchDevice that names it, lists what exists and says how to
// fix it; asking for /GPU:0 from a binary built without CUDA tells you to
// rebuild with -tags cudavm, use /CPU:0 or enable soft placement.
//
// Soft placement (PlaceOptions.Soft; gokeras's --soft-placement flag) makes a
// missing device fall back to /CPU:0 with a single warning line instead,
// like tf.config.set_soft_device_placement(True). It never hides a
// malformed spec.
//
// NewMachine binds a compiled gorgonia graph to a resolved device through
// that device's backend (package nn does this for models).
//
// # The placement log
//
// Setting driver.MachineOptions.PlacementLog (nn.LogDevicePlacement) makes
// NewMachine write one line per graph node, in execution order, before
// binding, like TensorFlow's tf.debugging.set_log_device_placement(True):
//
//	dense/kernel: (VariableV2): /job:localhost/replica:0/task:0/device:GPU:0
//	Executing op A × B(x, dense/kernel) in device /job:localhost/replica:0/task:0/device:GPU:0
//
// Learnables are logged as VariableV2, other inputs as Placeholder and
// constants as Const; every other node is an op.
//
// # Tensors, copies and their cost
//
// A Tensor is float32 data on one device. Place puts a *tensor.Dense on a
// device and Copy moves a Tensor to another, like tf.identity under
// tf.device: both always copy, even from the CPU to the CPU, so the result
// never shares memory with its source. Each returns CopyStats with the
// bytes moved and the time the transfer took, whose String reads like
// "copied 4.0 MB /CPU:0 -> /GPU:0 in …ms (… GB/s)".
//
// Copies are not free. On the CPU a copy is a memmove, bounded by memory
// bandwidth. To or from a GPU the data also crosses the bus between host
// and device (usually PCIe), tens of times slower than the GPU's own
// memory; a training loop should move each batch once, and keep weights
// on the device for the whole fit rather than copying them every step.
// Tensor.Dense reads host data without a copy; a tensor in GPU memory must
// be copied to /CPU:0 first. Tensors in device memory hold driver memory
// until Free is called.
//
// # Backends and the cudavm build tag
//
// Each device kind is served by a backend that registers its driver with
// Register from an init function, the way database/sql drivers register:
// package device/cpu (which package nn imports, so every model has
// /CPU:0) and package device/cuda, compiled only with the cudavm build tag
// (go build -tags cudavm; not `cuda`, which also switches gorgonia to its
// own CUDA backend), so a default build has no CUDA dependency and no GPU
// devices: /GPU:0 does not exist there. What a backend implements is in
// package device/driver; this package imports no backend and no model
// package.
package device
