package cpu

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"

	"github.com/gokeras/gokeras/device"
	"github.com/gokeras/gokeras/device/driver"
	"github.com/gokeras/gokeras/device/internal/plan"
	"gorgonia.org/gorgonia"
)

func init() {
	if err := device.Register(Driver{}); err != nil {
		panic(err) // only reachable if this package registered twice: a programming error
	}
}

// Driver is the CPU driver. Importing the package registers it.
type Driver struct{}

// Kind is driver.CPU.
func (Driver) Kind() driver.Kind { return driver.CPU }

// Devices lists the one CPU device, /CPU:0, which is all the host's cores.
func (Driver) Devices() ([]driver.PhysicalDevice, error) {
	return []driver.PhysicalDevice{{
		Name:        "/physical_device:CPU:0",
		Kind:        driver.CPU,
		Index:       0,
		Description: fmt.Sprintf("%s/%s, %d logical cores", runtime.GOOS, runtime.GOARCH, runtime.NumCPU()),
	}}, nil
}

// fallbackWarnings receives the line that announces a graph going to the
// tape machine; tests replace it.
var fallbackWarnings io.Writer = os.Stderr

// NewMachine compiles g with the plan compiler and binds it to the CPU
// (with opts.ReduceGradients: plan.Machine.SetGradientReducer, through
// plan.NewFromOptions). A
// graph with an op the compiler does not know runs on gorgonia's tape
// machine instead, announced with a one-line warning; so does every graph
// when opts.Reference is set, without a warning.
func (Driver) NewMachine(index int, g *gorgonia.ExprGraph, opts driver.MachineOptions) (driver.Machine, error) {
	if index != 0 {
		return nil, fmt.Errorf("device: there is one CPU device, /CPU:0; /CPU:%d does not exist", index)
	}
	if g == nil {
		return nil, fmt.Errorf("device: NewMachine called with a nil graph")
	}
	if opts.Reference {
		return tape(g, opts)
	}
	be := newBackend(newMultiplier())
	p, err := plan.Compile(g, opts.Learnables, be.Capabilities())
	if errors.Is(err, plan.ErrUnsupported) {
		fmt.Fprintf(fallbackWarnings, "gokeras: /CPU:0 runs this graph on gorgonia's tape machine, several times slower: %v\n", err)
		return tape(g, opts)
	}
	if err != nil {
		return nil, fmt.Errorf("device: /CPU:0: %w", err)
	}
	return plan.NewFromOptions(p, be, opts)
}

// tape is newTapeMachine as a driver.Machine.
func tape(g *gorgonia.ExprGraph, opts driver.MachineOptions) (driver.Machine, error) {
	m, err := newTapeMachine(g, opts)
	if err != nil {
		return nil, err
	}
	return m, nil
}
