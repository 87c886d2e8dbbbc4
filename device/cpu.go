package device

import (
	"fmt"
	"runtime"

	"gorgonia.org/gorgonia"
)

// cpuDriver runs graphs on the host with gorgonia's tape machine.
type cpuDriver struct{}

func init() {
	if err := Register(cpuDriver{}); err != nil {
		panic(err) // only reachable if this package registered twice: a programming error
	}
}

func (cpuDriver) Kind() Kind { return CPU }

func (cpuDriver) Devices() ([]PhysicalDevice, error) {
	return []PhysicalDevice{{
		Name:        "/physical_device:CPU:0",
		Kind:        CPU,
		Index:       0,
		Description: fmt.Sprintf("%s/%s, %d logical cores", runtime.GOOS, runtime.GOARCH, runtime.NumCPU()),
	}}, nil
}

func (cpuDriver) NewMachine(index int, g *gorgonia.ExprGraph, opts MachineOptions) (Machine, error) {
	if index != 0 {
		return nil, fmt.Errorf("device: there is one CPU device, /CPU:0; /CPU:%d does not exist", index)
	}
	if g == nil {
		return nil, fmt.Errorf("device: NewMachine called with a nil graph")
	}
	var machineOpts []gorgonia.VMOpt
	if len(opts.Learnables) > 0 {
		machineOpts = append(machineOpts, gorgonia.BindDualValues(opts.Learnables...))
	}
	return cpuMachine{gorgonia.NewTapeMachine(g, machineOpts...)}, nil
}

// cpuMachine adapts gorgonia's tape machine to Machine.
type cpuMachine struct{ tm gorgonia.VM }

func (m cpuMachine) RunAll() error { return m.tm.RunAll() }
func (m cpuMachine) Reset()        { m.tm.Reset() }
func (m cpuMachine) Close() error  { return m.tm.Close() }
