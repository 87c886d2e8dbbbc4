package device

import (
	"errors"
	"fmt"
	"io"
	"runtime"
	"sort"
	"sync"

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
}

// Driver makes machines for one kind of device. A driver registers itself
// with Register from an init function, the way database/sql drivers do, so
// a build without the `cuda` tag has no CUDA dependency at all.
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

var (
	driversMu sync.RWMutex
	drivers   = map[Kind]Driver{}
)

// Register makes a driver available for its kind. It returns an error if a
// driver for that kind is already registered.
func Register(d Driver) error {
	if d == nil {
		return fmt.Errorf("device: Register called with a nil driver")
	}
	driversMu.Lock()
	defer driversMu.Unlock()
	if _, dup := drivers[d.Kind()]; dup {
		return fmt.Errorf("device: a driver for %s is already registered", d.Kind())
	}
	drivers[d.Kind()] = d
	return nil
}

// driverFor returns the driver registered for kind, if any. The CPU always
// has one: until its backend (package device/cpu) registers, a stand-in
// lists /CPU:0 and says, when asked for a machine, what to import.
func driverFor(kind Kind) (Driver, bool) {
	driversMu.RLock()
	defer driversMu.RUnlock()
	d, ok := drivers[kind]
	if !ok && kind == CPU {
		return hostOnly{}, true
	}
	return d, ok
}

// hostOnly stands in for the CPU driver in a program that does not link
// the CPU backend: tensors can be placed on /CPU:0 (host memory), but
// graphs cannot run there.
type hostOnly struct{}

func (hostOnly) Kind() Kind { return CPU }

func (hostOnly) Devices() ([]PhysicalDevice, error) {
	return []PhysicalDevice{{Name: "/physical_device:CPU:0", Kind: CPU, Index: 0,
		Description: fmt.Sprintf("%s/%s, %d logical cores", runtime.GOOS, runtime.GOARCH, runtime.NumCPU())}}, nil
}

func (hostOnly) NewMachine(int, *gorgonia.ExprGraph, MachineOptions) (Machine, error) {
	return nil, errors.New(`device: the CPU backend is not linked into this program: import _ "github.com/gokeras/gokeras/device/cpu" (package nn does)`)
}

// registeredKinds lists the kinds that have a driver, sorted.
func registeredKinds() []Kind {
	driversMu.RLock()
	defer driversMu.RUnlock()
	kinds := []Kind{CPU} // always there: see driverFor
	for k := range drivers {
		if k != CPU {
			kinds = append(kinds, k)
		}
	}
	sort.Slice(kinds, func(i, j int) bool { return kinds[i] < kinds[j] })
	return kinds
}
