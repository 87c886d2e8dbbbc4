package driver

import (
	"errors"
	"io"
	"sync"

	"github.com/gokeras/gokeras/optim"
	"gorgonia.org/gorgonia"
)

// Kind is a device type as TensorFlow spells it: "CPU" or "GPU".
type Kind string

// The device kinds gokeras knows.
const (
	CPU Kind = "CPU"
	GPU Kind = "GPU"
)

// Machine executes one compiled gorgonia expression graph on one device.
// It is the VM that nn drives once per training or inference step:
// RunAll evaluates the graph (forward pass and, where the graph has them,
// the symbolic gradients), Reset readies it for the next step, Close
// releases what the machine holds on its device.
type Machine interface {
	RunAll() error
	Reset()
	Close() error
}

// MachineOptions says what a driver needs to know beyond the graph.
type MachineOptions struct {
	// Learnables are the nodes whose gradients the step reads back
	// (the model's weights). A machine binds a gradient to each of them.
	Learnables []*gorgonia.Node
	// PlacementLog, when not nil, receives one line per node of the graph
	// saying which device the node lives or runs on (see device.NewMachine),
	// like TensorFlow's tf.debugging.set_log_device_placement(True).
	PlacementLog io.Writer
	// State is shared by all the machines of one model: the optimizer's
	// slots of each weight (see State and Trainer). nil gives each machine
	// a state of its own.
	State *State
	// Slots gives the optimizer's slots of each learnable, by the
	// learnable's node name (optim.Optimizer.Slot): machines that update
	// on the device keep their copy in step with these host slices, or
	// use them in place where the device computes on host memory.
	Slots func(variable, name string, size int) ([]float32, error)
	// Reference asks for the driver's reference machine, which runs each
	// op's own Do, when the driver has one: on the CPU, gorgonia's tape
	// machine. It is slower; tests compare the fast machines against it.
	Reference bool
	// ReduceGradients, when not nil, makes Train a data-parallel step
	// (package distribute): the machine hands the step's gradients to
	// ReduceGradients on the host, which replaces them in place (with
	// their mean over the replicas), and before any update or global
	// clipping waits for it, then updates the weights with what it left
	// there. The CPU's machines overlap it with the backward pass, as
	// PyTorch DDP's buckets do: each gradient joins a bucket once it is
	// complete, and each bucket is handed over at once, in a call of its
	// own made from another goroutine while the next products run (one
	// call at a time, in the same order at every step; each gradient
	// whole in one call). With ReduceAfterBackward one call gets them
	// all, in the order of Learnables, after the backward pass. The update is then
	// never folded into the products that compute the gradients. The CPU
	// driver implements it; the CUDA driver takes DeviceReduce instead.
	ReduceGradients func(grads [][]float32) error
	// DeviceReduce, when not nil, is the all-reduce of a data-parallel
	// step on a GPU: the machine scales each gradient by ReduceScale() (the
	// replica's share of the global batch) and sums it over the replicas
	// in device memory (NCCL), queued on a stream of its own bucket by
	// bucket while the backward pass goes on (or on the step's stream after
	// it, with ReduceAfterBackward), before any update or global clipping.
	// The CPU driver ignores it.
	DeviceReduce DeviceAllReducer
	ReduceScale  func() float32
	// ReduceAfterBackward makes a data-parallel step all-reduce its
	// gradients after the backward pass instead of overlapping the
	// all-reduce with it: slower, for debugging and timing. The results
	// are the same bit for bit.
	ReduceAfterBackward bool
}

// DeviceAllReducer sums gradients over the replicas of a data-parallel
// job for a GPU machine (MachineOptions.DeviceReduce); package
// distribute's MultiWorkerStrategy is one. Every replica makes the same
// calls in the same order.
type DeviceAllReducer interface {
	// AllReduceSumDevice queues on stream (the machine's CUstream, as an
	// integer) the in-place sum over the replicas of n float32s at device
	// address buf. The caller's GPU context is current.
	AllReduceSumDevice(buf uintptr, n int, stream uintptr) error
	// AllReduceSum sums buf over the replicas in host memory: what a
	// GPU whose memory is the host's (the emulated GPU of package
	// device/cuda) calls instead.
	AllReduceSum(buf []float32) error
}

// Driver makes machines for one kind of device. A driver registers itself
// with device.Register from an init function, the way database/sql drivers
// do, so a build without the cudavm tag has no CUDA dependency at all.
type Driver interface {
	// Kind is the device kind the driver serves.
	Kind() Kind
	// Devices lists the physical devices of that kind the driver can see now.
	Devices() ([]PhysicalDevice, error)
	// NewMachine binds g to the device of this kind with the given index.
	NewMachine(index int, g *gorgonia.ExprGraph, opts MachineOptions) (Machine, error)
}

// PhysicalDevice describes one device the process can use.
type PhysicalDevice struct {
	// Name is TensorFlow's physical device name, e.g. "/physical_device:GPU:0".
	Name string
	Kind Kind
	// Index is the device's number among those of its kind.
	Index int
	// Description is the hardware as the driver names it, e.g. "NVIDIA H100 80GB HBM3".
	Description string
	// MemoryBytes is the device memory in bytes; 0 where unknown (the CPU).
	MemoryBytes int64
	// ComputeCapability is the CUDA compute capability (major, minor); zero for the CPU.
	ComputeCapability [2]int
}

// Trainer is a Machine that runs whole training steps on its device: the
// forward pass, the backward pass and the optimizer's update of every
// learnable, in one call. Weights, gradients and optimizer slots then never
// leave the device; only the batch goes in (the graph's input tensors,
// which the caller fills before each step) and the graph's Read nodes bring
// the loss and outputs back, as after RunAll.
//
// After Train the gradients are not readable (they may never have existed
// as tensors: a machine may fold the update into the product that computes
// them). Train fails with an error wrapping ErrUpdateUnsupported for a
// graph that computes no gradients.
type Trainer interface {
	Machine
	// Train runs one training step and applies u to every learnable, with
	// the optimizer's slots from MachineOptions.Slots.
	Train(u optim.Update) error
}

// Pipeliner is the optional interface of a Trainer that can run a
// training step while the host prepares the next one, so that a device
// that computes asynchronously (a GPU) does not wait for the host between
// steps. When Pipelines is true, StartTrain queues a step as Train runs
// it and returns before it has run: the caller may then fill the inputs
// with the next batch and start that step too. FinishTrain waits for the
// oldest started step, writes its Reads and returns its error. At most
// two steps are started and not finished, and no other run of the
// machine comes between. When Pipelines is false, StartTrain runs the
// step and FinishTrain returns its error: the same calls work, without
// the overlap.
//
// A started step's Reads are written only by FinishTrain, so its results
// are read one step late: the next step is already under way.
type Pipeliner interface {
	Trainer
	Pipelines() bool
	StartTrain(u optim.Update) error
	FinishTrain() error
}

// ErrUpdateUnsupported is wrapped by the error a Trainer returns for a
// graph it cannot train: one without the gradient of every learnable.
var ErrUpdateUnsupported = errors.New("the machine cannot train this graph")

// State is what the machines of one model share across its graphs: the
// optimizer's slots (SGD's momentum, Adam's moments) of each weight, and
// for a driver with its own memory whatever else it keeps there between
// steps, such as the device copies of the weights. A model compiles one
// graph per batch size and mode, so the machine for the last, smaller batch
// of an epoch must see the momentum the others built up.
//
// The caller makes one State per model, passes it in MachineOptions.State
// to every NewMachine for that model, and closes it when it closes the
// model's machines. Drivers store values under keys of their own types
// (unexported, like context keys). A State is safe for concurrent use.
type State struct {
	mu     sync.Mutex
	values map[any]any
	order  []any
}

// NewState makes an empty State.
func NewState() *State { return &State{values: map[any]any{}} }

// Value returns the value stored under key, storing the result of create
// first if there is none.
func (s *State) Value(key any, create func() (any, error)) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if v, ok := s.values[key]; ok {
		return v, nil
	}
	v, err := create()
	if err != nil {
		return nil, err
	}
	s.values[key] = v
	s.order = append(s.order, key)
	return v, nil
}

// Sync asks every stored value that keeps host data on a device to copy it
// back (the values with a Sync() error method), so that host tensors bound
// to the graphs hold the latest weights. Drivers that compute in host
// memory store nothing that needs it. Call it before reading or saving the
// weights on the host while a model's machines are open.
func (s *State) Sync() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var errs []error
	for _, k := range s.order {
		if v, ok := s.values[k].(interface{ Sync() error }); ok {
			errs = append(errs, v.Sync())
		}
	}
	return errors.Join(errs...)
}

// Close releases what the stored values hold (the values that are
// io.Closers) and empties the State.
func (s *State) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var errs []error
	for i := len(s.order) - 1; i >= 0; i-- {
		if c, ok := s.values[s.order[i]].(io.Closer); ok {
			errs = append(errs, c.Close())
		}
	}
	s.values, s.order = map[any]any{}, nil
	return errors.Join(errs...)
}

// Allocator is the optional interface of drivers whose devices have their
// own memory, such as the CUDA driver: Copy and Place move tensor data to
// and from such a device through the Buffers it allocates. A driver that
// does not implement Allocator, like the CPU driver, computes on host
// memory, and tensors on its devices are plain Go slices.
type Allocator interface {
	// Alloc reserves bytes bytes on the device with the given index (the
	// index of a device the driver lists in Devices). The contents of the
	// new buffer are undefined.
	Alloc(index int, bytes int64) (Buffer, error)
}

// Buffer is a block of device memory from an Allocator. Copy never hands
// a Buffer to two goroutines at once, so implementations need no locking
// of their own for that. Each method copies synchronously: when it
// returns, the data has arrived (a CUDA implementation synchronises its
// stream), so the time a Copy measures is the time of the transfer.
type Buffer interface {
	// Bytes is the size of the buffer.
	Bytes() int64
	// CopyFromHost fills the buffer from host memory; len(src) == Bytes().
	CopyFromHost(src []byte) error
	// CopyToHost copies the buffer to host memory; len(dst) == Bytes().
	CopyToHost(dst []byte) error
	// Free releases the memory. The buffer must not be used afterwards.
	Free() error
}

// PeerCopier is an optional Buffer interface for drivers that can copy
// from one device buffer to another without a trip through host memory
// (cudaMemcpyPeer between two GPUs, or a device-to-device copy on one).
// Copy calls CopyFromPeer on the destination buffer; if that returns an
// error wrapping errors.ErrUnsupported (src belongs to another driver, say)
// Copy stages the data through host memory instead.
type PeerCopier interface {
	// CopyFromPeer fills the buffer from src; src.Bytes() == Bytes().
	CopyFromPeer(src Buffer) error
}
