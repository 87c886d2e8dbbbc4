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
// that device's driver and returns the Machine that runs it.
//
// # The placement log
//
// Setting MachineOptions.PlacementLog makes NewMachine write one line per
// graph node, in execution order, before binding, like TensorFlow's
// tf.debugging.set_log_device_placement(True):
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
// "copied 4.0 MB /CPU:0 -> /GPU:0 in 1.2ms (3.3 GB/s)".
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
// # Drivers and the cudavm build tag
//
// Each device kind is served by a Driver, registered with Register from
// the driver package's init function, the way database/sql drivers
// register. This package registers the CPU driver (see "The CPU machine"
// below). The CUDA driver lives in package device/cuda, which programs
// import for its side effect, and is compiled only with the cudavm build
// tag (go build -tags cudavm; not `cuda`, which also switches gorgonia to
// its own CUDA backend), so a default build has no CUDA dependency and no
// GPU devices: /GPU:0 does not exist there.
//
// Drivers whose devices have their own memory also implement Allocator,
// which hands out Buffers that copy to and from host memory; Place and Copy
// use it for every transfer to or from such a device. A Buffer that also
// implements PeerCopier copies from another device buffer directly;
// otherwise device-to-device copies go through host memory. A driver that
// is not an Allocator computes on host memory, and tensors on its devices
// are ordinary Go slices.
//
// # Training steps: the protocol between nn and a machine
//
// A compiled model is one gorgonia graph per batch size and mode (predict,
// evaluate, train), each bound to a Machine by NewMachine. The graph's
// input tensors (the batch x and its labels y) and its weights are host
// tensors bound to the graph's input nodes; Read nodes (gorgonia.Read) name
// what comes back each step: the outputs and the loss. Every model graph is
// made of package ops' nodes only (ops.Inspect names them), so a machine
// may run the graph with kernels of its own instead of each op's Do.
//
// A step goes like this:
//
//  1. The caller gathers the batch into the bound x and y, in place.
//  2. If the machine is a Trainer and the optimizer's update can travel as
//     an Update (plain data: rule, learning rate, momentum, Adam's betas
//     and step number), the caller calls Train(update): the machine runs
//     the forward pass, the backward pass and the update of every
//     learnable, and writes the loss and outputs through the Read nodes.
//     Nothing else crosses between host and device: a machine with its own
//     memory copies the batch in and the Read values out, and keeps the
//     weights, their gradients and the optimizer's slots on the device for
//     the whole fit.
//  3. Otherwise the caller calls RunAll, reads the gradients with
//     Node.Grad, lets its optimizer update the weights on the host, and,
//     for machines that are not Trainers (which add each step's gradients
//     into the bound ones, as gorgonia's tape machine does), zeroes them.
//  4. Reset readies the machine for the next step.
//
// The machines of one model share a State (MachineOptions.State): the
// optimizer's slots of each weight and, for a driver with its own memory,
// the device copies of the weights, so that the graph for the last,
// smaller batch of an epoch continues where the others left off. State.Sync
// brings device-resident weights back into the host tensors (a no-op on the
// CPU, which computes in host memory); State.Close releases what the State
// holds. A Trainer returns an error wrapping ErrUpdateUnsupported for an
// update it cannot apply, and the caller takes the RunAll path.
//
// nn sends plain SGD (momentum 0, the Keras default) through Train: its
// whole state is the learning rate and the iteration count, which stay in
// the optimizer. Optimizers with slots update on the host through RunAll,
// so that their state is where checkpoints read it.
//
// # The CPU machine
//
// The CPU driver compiles a model graph into a plan of float32 kernels
// once, at NewMachine: every node gets an output buffer allocated once and
// reused by every step (a training step allocates a few kilobytes, not
// megabytes), reshapes alias their input, the model's input gets no
// gradient, and the bias of a dense layer is the starting value of its
// product. Train folds the optimizer into the backward pass: a weight's
// gradient product writes straight into the weight, w += -lr·xᵀ·dz (plain
// SGD), or into its velocity followed by one pass adding it to the weight
// (momentum), once nothing left in the step reads the weight; Nesterov
// momentum and Adam compute the gradient into a buffer and update in one
// pass. The update arithmetic is package optim's, in float32.
//
// Matrix products run on AVX-512 kernels written for a batch against large
// weights (package internal/gemm), on GOMAXPROCS threads, where the CPU has
// AVX-512, and through package blas otherwise (OpenBLAS or another BLAS
// found at run time, else gonum's pure-Go BLAS); GOKERAS_CPU_KERNELS=blas
// turns the kernels off. CPUKernels describes the choice in one line.
// Graphs of other ops run on gorgonia's tape machine, which is also the
// reference machine tests compare against (MachineOptions.Reference).
//
// This package depends on no model package: nn and the layers build on it,
// never the other way round.
package device
