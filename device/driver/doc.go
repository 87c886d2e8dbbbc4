// Package driver defines what a gokeras device backend implements, the way
// database/sql/driver defines what a database driver implements: a Driver
// lists its devices and binds a model graph to one of them as a Machine;
// a Machine that is a Trainer runs whole training steps (forward, backward
// and the optimizer's update) on its device; a State holds what the
// machines of one model share there; drivers whose devices have their own
// memory implement Allocator for tensor copies.
//
// Backends register with device.Register from an init function: package
// device/cpu always, package device/cuda in builds with -tags cudavm.
// Programs that train models use packages nn and device, not this one.
//
// # Training steps: the protocol between nn and a machine
//
// A compiled model is one gorgonia graph per batch size and mode (predict,
// evaluate, train), each bound to a Machine. The graph's input tensors (the
// batch x and its labels y) and its weights are host tensors bound to the
// graph's input nodes; Read nodes (gorgonia.Read) name what comes back each
// step: the outputs and the loss. Every model graph is made of package ops'
// nodes only (ops.Inspect names them), so a backend runs the graph with
// kernels of its own: both gokeras backends compile it with one plan
// compiler (device/internal/plan).
//
// A training step goes like this:
//
//  1. The caller gathers the batch into the bound x and y, in place.
//  2. It calls Train(optimizer.NextUpdate()): the machine runs the forward
//     pass, the backward pass and the update of every learnable with the
//     optimizer's rule (optim.Update, plain data whose Apply is the one
//     definition of its arithmetic), and writes the loss and outputs
//     through the Read nodes. Nothing else crosses between host and
//     device: a machine with its own memory copies the batch in and the
//     Read values out, and keeps the weights and the optimizer's slots on
//     the device for the whole fit.
//  3. The caller counts the step (optimizer.Advance) and calls Reset.
//
// Evaluation and prediction call RunAll instead. The machines of one model
// share a State (MachineOptions.State) holding the device copies of the
// weights and slots, so that the graph for the last, smaller batch of an
// epoch continues where the others left off. State.Sync brings them back
// to the host tensors and the optimizer's slots (MachineOptions.Slots
// gives the machine those host slices; a backend computing on host memory
// uses them in place, and Sync has nothing to do); State.Close releases
// what the State holds.
package driver
