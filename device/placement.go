package device

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"github.com/gokeras/gokeras/device/driver"
	"io"
	"os"
	"strings"

	"gorgonia.org/gorgonia"
)

// ErrNoSuchDevice is wrapped by the errors Resolve, NewMachine, Place and
// Copy return when a well-formed spec names a device this process does not
// have, such as /GPU:0 in a build without CUDA or /GPU:3 on a machine with
// two GPUs. Soft placement turns exactly these errors into a fallback to
// /CPU:0.
var ErrNoSuchDevice = errors.New("device: no such device")

// cudaFix is the advice for a GPU spec in a build without a GPU driver.
const cudaFix = "rebuild with -tags cudavm (see README), or use /CPU:0, or enable soft placement (--soft-placement)"

// PlaceOptions says how Resolve treats a device that does not exist.
type PlaceOptions struct {
	// Soft turns on soft placement, like
	// tf.config.set_soft_device_placement(True): a device that does not
	// exist falls back to /CPU:0, with a one-line warning, instead of
	// being an error. Malformed specs are errors either way.
	Soft bool
	// Warn receives the soft-placement warning; nil means os.Stderr.
	Warn io.Writer
}

// noDeviceError says why a device does not exist and what to do instead.
type noDeviceError struct {
	spec   Spec
	reason string // why, in a few words (also used by the soft-placement warning)
	fix    string // what the user can do, or ""
	cause  error  // a driver error behind it, or nil
}

func (e *noDeviceError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%v %s: %s", ErrNoSuchDevice, e.spec.Short(), e.reason)
	if e.cause != nil {
		fmt.Fprintf(&b, ": %v", e.cause)
	}
	if e.fix != "" {
		fmt.Fprintf(&b, "; %s", e.fix)
	}
	return b.String()
}

func (e *noDeviceError) Unwrap() []error {
	if e.cause != nil {
		return []error{ErrNoSuchDevice, e.cause}
	}
	return []error{ErrNoSuchDevice}
}

// DefaultSpec returns the device TensorFlow would pick when nothing is
// asked for: /GPU:0 when a GPU driver is registered and sees at least one
// GPU, else /CPU:0.
func DefaultSpec() Spec {
	if d, ok := driverFor(GPU); ok {
		if devs, err := d.Devices(); err == nil && len(devs) > 0 {
			return NewSpec(GPU, 0)
		}
	}
	return NewSpec(CPU, 0)
}

// Resolve decides which device work goes on, and checks that it exists.
// The device is requested when that is not nil, else the innermost scope
// carried by ctx (see With and FromContext), else DefaultSpec. A nil ctx
// carries no scope. The result is in canonical form (job localhost filled
// in).
//
// A device that does not exist is an error wrapping ErrNoSuchDevice that
// names the device, says what exists and how to fix it; with opts.Soft it
// is instead replaced by /CPU:0 and one warning line is written to
// opts.Warn. A malformed Spec (unknown kind, negative index, remote job) is
// an error wrapping ErrInvalidSpec, soft placement or not.
func Resolve(ctx context.Context, requested *Spec, opts PlaceOptions) (Spec, error) {
	var s Spec
	if requested != nil {
		s = *requested
	} else if scope, ok := FromContext(ctx); ok {
		s = scope
	} else {
		return DefaultSpec(), nil
	}
	s = withDefaults(s)
	err := checkDevice(s)
	if err == nil {
		return s, nil
	}
	var missing *noDeviceError
	if !opts.Soft || !errors.As(err, &missing) {
		return Spec{}, err
	}
	fallback := NewSpec(CPU, 0)
	w := opts.Warn
	if w == nil {
		w = os.Stderr
	}
	// A lost warning must not fail placement, so the write error is dropped.
	_, _ = fmt.Fprintf(w, "gokeras: warning: soft placement: %s does not exist (%s); placing on %s instead\n",
		s.Short(), missing.reason, fallback.Short())
	return fallback, nil
}

// NewMachine binds g to the device s through the driver registered for
// s.Kind, after checking that the device exists (errors wrap
// ErrNoSuchDevice or ErrInvalidSpec as Resolve's do; s is used as given,
// so call Resolve first for scopes, defaults and soft placement).
//
// When opts.PlacementLog is set, NewMachine first writes to it one line
// per node of g, saying where the node lives or runs, like TensorFlow's
// tf.debugging.set_log_device_placement(True). Nodes come in execution
// order (gorgonia.Sort's topological order, inputs first):
//
//	dense/kernel: (VariableV2): /job:localhost/replica:0/task:0/device:CPU:0
//	x: (Placeholder): /job:localhost/replica:0/task:0/device:CPU:0
//	Executing op A × B(x, dense/kernel) in device /job:localhost/replica:0/task:0/device:CPU:0
//
// VariableV2 marks opts.Learnables, Placeholder the graph's other inputs
// and Const its constants.
func NewMachine(s Spec, g *gorgonia.ExprGraph, opts driver.MachineOptions) (driver.Machine, error) {
	if g == nil {
		return nil, fmt.Errorf("device: NewMachine called with a nil graph")
	}
	s = withDefaults(s)
	if err := checkDevice(s); err != nil {
		return nil, err
	}
	d, ok := driverFor(s.Kind)
	if !ok { // checkDevice found it a moment ago; only a test unregistering races here
		return nil, &noDeviceError{spec: s, reason: fmt.Sprintf("no %s driver is registered", s.Kind)}
	}
	if opts.PlacementLog != nil {
		if err := writePlacementLog(opts.PlacementLog, g, s, opts.Learnables); err != nil {
			return nil, err
		}
	}
	m, err := d.NewMachine(s.Index, g, opts)
	if err != nil {
		return nil, fmt.Errorf("device: binding the graph to %s: %w", s.Short(), err)
	}
	return m, nil
}

// withDefaults fills in the job of a Spec built by hand.
func withDefaults(s Spec) Spec {
	if s.Job == "" {
		s.Job = LocalJob
	}
	return s
}

// validateSpec checks a Spec's fields the way ParseSpec checks a string,
// for specs built by hand.
func validateSpec(s Spec) error {
	invalid := func(why string) error {
		return fmt.Errorf("%w %+v: %s", ErrInvalidSpec, s, why)
	}
	switch {
	case s.Kind != CPU && s.Kind != GPU:
		return invalid(fmt.Sprintf("unknown device type %q: gokeras knows CPU and GPU", s.Kind))
	case s.Job != LocalJob:
		return invalid(fmt.Sprintf("job %q does not exist: only the local job, /job:%s, exists", s.Job, LocalJob))
	case s.Index < 0 || s.Replica < 0 || s.Task < 0:
		return invalid("index, replica and task must not be negative")
	}
	return nil
}

// checkDevice reports whether the device s (with its job filled in)
// exists: nil, an ErrInvalidSpec error, or a *noDeviceError.
func checkDevice(s Spec) error {
	if err := validateSpec(s); err != nil {
		return err
	}
	if s.Replica != 0 || s.Task != 0 {
		return &noDeviceError{
			spec:   s,
			reason: fmt.Sprintf("replica %d, task %d is not this process", s.Replica, s.Task),
			fix:    "gokeras runs in one process, /job:localhost/replica:0/task:0",
		}
	}
	d, ok := driverFor(s.Kind)
	if !ok {
		if s.Kind == GPU {
			return &noDeviceError{spec: s, reason: "this binary was built without CUDA support", fix: cudaFix}
		}
		return &noDeviceError{spec: s, reason: fmt.Sprintf("no %s driver is registered", s.Kind), fix: "devices here: " + describeDevices()}
	}
	devs, err := d.Devices()
	if err != nil {
		return &noDeviceError{spec: s, reason: fmt.Sprintf("the %s driver could not list its devices", s.Kind), cause: err,
			fix: "use /CPU:0, or enable soft placement (--soft-placement)"}
	}
	for _, dev := range devs {
		if dev.Index == s.Index {
			return nil
		}
	}
	if len(devs) == 0 {
		return &noDeviceError{spec: s, reason: fmt.Sprintf("the %s driver sees no %s", s.Kind, s.Kind),
			fix: "check that the device is visible to this process (for GPUs: nvidia-smi, CUDA_VISIBLE_DEVICES), or use /CPU:0, or enable soft placement (--soft-placement)"}
	}
	return &noDeviceError{spec: s,
		reason: fmt.Sprintf("%s is out of range: the %s driver sees %s", s.Short(), s.Kind, listDevices(devs)),
		fix:    "use one of those, or enable soft placement (--soft-placement)"}
}

// listDevices writes devices as "1 GPU: /GPU:0 (NVIDIA H100 80GB HBM3)".
func listDevices(devs []PhysicalDevice) string {
	if len(devs) == 0 {
		return "no devices"
	}
	kind := devs[0].Kind
	var b strings.Builder
	fmt.Fprintf(&b, "%d %s", len(devs), kind)
	if len(devs) > 1 {
		b.WriteString("s")
	}
	b.WriteString(": ")
	for i, dev := range devs {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(NewSpec(dev.Kind, dev.Index).Short())
		if dev.Description != "" {
			fmt.Fprintf(&b, " (%s)", dev.Description)
		}
	}
	return b.String()
}

// describeDevices lists every device this process has, as short names.
func describeDevices() string {
	devs, err := ListPhysicalDevices("")
	if err != nil || len(devs) == 0 {
		return "none could be listed"
	}
	names := make([]string, len(devs))
	for i, dev := range devs {
		names[i] = NewSpec(dev.Kind, dev.Index).Short()
	}
	return strings.Join(names, ", ")
}

// writePlacementLog writes one line per node of g, in execution order,
// saying that it lives or runs on s. The lines are built first and written
// at once, so a graph that cannot be sorted writes nothing.
func writePlacementLog(w io.Writer, g *gorgonia.ExprGraph, s Spec, learnables []*gorgonia.Node) error {
	sorted, err := gorgonia.Sort(g)
	if err != nil {
		return fmt.Errorf("device: placement log: sorting the graph: %w", err)
	}
	isLearnable := make(map[*gorgonia.Node]bool, len(learnables))
	for _, n := range learnables {
		isLearnable[n] = true
	}
	device := s.String()
	var buf bytes.Buffer
	// gorgonia.Sort puts the root first; execution runs the other way.
	for i := len(sorted) - 1; i >= 0; i-- {
		n := sorted[i]
		switch {
		case n.Op() == nil && isLearnable[n]:
			fmt.Fprintf(&buf, "%s: (VariableV2): %s\n", n.Name(), device)
		case n.Op() == nil:
			fmt.Fprintf(&buf, "%s: (Placeholder): %s\n", n.Name(), device)
		case isConstant(n.Op()):
			fmt.Fprintf(&buf, "%s: (Const): %s\n", n.Name(), device)
		default:
			fmt.Fprintf(&buf, "Executing op %s(%s) in device %s\n", n.Op(), strings.Join(childNames(g, n), ", "), device)
		}
	}
	if _, err := w.Write(buf.Bytes()); err != nil {
		return fmt.Errorf("device: writing the placement log: %w", err)
	}
	return nil
}

// isConstant reports whether op is one of gorgonia's constant ops, which
// carry their value (gorgonia does not export the interface).
func isConstant(op gorgonia.Op) bool {
	_, ok := op.(interface{ Value() gorgonia.Value })
	return ok
}

// childNames returns the names of n's inputs, in argument order.
func childNames(g *gorgonia.ExprGraph, n *gorgonia.Node) []string {
	var names []string
	it := g.From(n.ID())
	for it.Next() {
		if child, ok := it.Node().(*gorgonia.Node); ok {
			names = append(names, child.Name())
		}
	}
	return names
}
