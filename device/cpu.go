package device

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"

	"github.com/gokeras/gokeras/blas"
	"github.com/gokeras/gokeras/internal/gemm"
	"gorgonia.org/gorgonia"
)

// cpuDriver runs graphs on the host: model graphs on the graph machine
// (cpu_graph.go), anything else and the reference on gorgonia's tape machine.
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
	if !opts.Reference {
		m, err := newGraphMachine(g, opts, cpuMultiplier())
		if err == nil {
			return m, nil
		}
		if !errors.Is(err, errGraphUnsupported) {
			return nil, err
		}
	}
	return newTapeMachine(g, opts), nil
}

// newTapeMachine binds g to gorgonia's tape machine: the reference machine,
// and the one for graphs the graph machine does not run.
func newTapeMachine(g *gorgonia.ExprGraph, opts MachineOptions) Machine {
	var machineOpts []gorgonia.VMOpt
	if len(opts.Learnables) > 0 {
		machineOpts = append(machineOpts, gorgonia.BindDualValues(opts.Learnables...))
	}
	return cpuMachine{gorgonia.NewTapeMachine(g, machineOpts...)}
}

// KernelsEnvVar names the environment variable that turns the CPU
// machine's AVX-512 kernels off: GOKERAS_CPU_KERNELS=blas computes every
// product with blas.Default instead.
const KernelsEnvVar = "GOKERAS_CPU_KERNELS"

// cpuMultiplier chooses how CPU machines multiply matrices.
func cpuMultiplier() multiplier {
	mm := multiplier{lib: blas.Default()}
	if gemm.Available() && !strings.EqualFold(strings.TrimSpace(os.Getenv(KernelsEnvVar)), "blas") {
		mm.ws = gemm.NewWorkspace(0)
	}
	return mm
}

// CPUKernels describes in one line how CPU machines multiply matrices, for
// programs to print when they start, e.g. "AVX-512 kernels for dense layers
// (2 threads); other products: OpenBLAS 0.3.21 (libopenblas.so.0, ...)" or,
// on a CPU without AVX-512, what blas.Default is.
func CPUKernels() string {
	mm := cpuMultiplier()
	if mm.ws == nil {
		return mm.lib.String()
	}
	other := mm.lib.Name() // its install hint matters little next to the kernels
	if mm.lib.Native() {
		other = mm.lib.String()
	}
	return fmt.Sprintf("AVX-512 kernels for dense layers (%d threads); other products: %s", mm.ws.Workers(), other)
}

// cpuMachine adapts gorgonia's tape machine to Machine.
type cpuMachine struct{ tm gorgonia.VM }

func (m cpuMachine) RunAll() error { return m.tm.RunAll() }
func (m cpuMachine) Reset()        { m.tm.Reset() }
func (m cpuMachine) Close() error  { return m.tm.Close() }
