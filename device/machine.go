package device

import (
	"errors"
	"fmt"
	"runtime"
	"sort"
	"sync"

	"github.com/gokeras/gokeras/device/driver"
	"gorgonia.org/gorgonia"
)

// Kind is a device type as TensorFlow spells it: "CPU" or "GPU".
type Kind = driver.Kind

// The device kinds gokeras knows.
const (
	CPU = driver.CPU
	GPU = driver.GPU
)

// PhysicalDevice describes one device the process can use.
type PhysicalDevice = driver.PhysicalDevice

var (
	driversMu sync.RWMutex
	drivers   = map[Kind]driver.Driver{}
)

// Register makes a backend's driver available for its kind, as
// database/sql's Register does; backends call it from an init function. It returns an error if a
// driver for that kind is already registered.
func Register(d driver.Driver) error {
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
func driverFor(kind Kind) (driver.Driver, bool) {
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

func (hostOnly) NewMachine(int, *gorgonia.ExprGraph, driver.MachineOptions) (driver.Machine, error) {
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
