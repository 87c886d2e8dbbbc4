package device

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// LocalJob is the only job a gokeras process has: everything runs in this
// process, which TensorFlow calls /job:localhost/replica:0/task:0.
const LocalJob = "localhost"

// ErrInvalidSpec is wrapped by every error ParseSpec returns, so callers can
// tell a malformed device string (errors.Is(err, ErrInvalidSpec)) from a
// well-formed one that names a device this process does not have
// (ErrNoSuchDevice).
var ErrInvalidSpec = errors.New("device: invalid device spec")

// acceptedSpecs ends every ParseSpec error: it says what a spec looks like.
const acceptedSpecs = "write a device as /CPU:0, /GPU:1, /device:GPU:1, gpu " +
	"or /job:localhost/replica:0/task:0/device:GPU:1"

// Spec names one logical device, the way TensorFlow names devices in
// tf.device: a job, a replica and a task (always localhost, 0 and 0 in
// gokeras, which runs in one process), a device kind and the device's index
// among those of its kind.
//
// The zero Spec names no device; ParseSpec never returns it without an
// error. Use ParseSpec or NewSpec to make one.
type Spec struct {
	Job     string
	Replica int
	Task    int
	Kind    Kind
	Index   int
}

// NewSpec returns the spec of device index of the given kind in this
// process, e.g. NewSpec(GPU, 1) is /job:localhost/replica:0/task:0/device:GPU:1.
// It does not check that the device exists; Resolve does.
func NewSpec(kind Kind, index int) Spec {
	return Spec{Job: LocalJob, Kind: kind, Index: index}
}

// String returns the canonical, fully qualified name of the device, e.g.
// "/job:localhost/replica:0/task:0/device:GPU:0". ParseSpec(s.String())
// returns s. The zero Spec prints as the empty string.
func (s Spec) String() string {
	if s.Kind == "" {
		return ""
	}
	job := s.Job
	if job == "" {
		job = LocalJob
	}
	return fmt.Sprintf("/job:%s/replica:%d/task:%d/device:%s:%d", job, s.Replica, s.Task, s.Kind, s.Index)
}

// Short returns the short name of the device, e.g. "/GPU:0", the spelling
// most Keras code uses. Job, replica and task are left out: in gokeras they
// always name this process. The zero Spec prints as the empty string.
func (s Spec) Short() string {
	if s.Kind == "" {
		return ""
	}
	return fmt.Sprintf("/%s:%d", s.Kind, s.Index)
}

// ParseSpec parses a device string in any of the spellings TensorFlow
// accepts:
//
//	/GPU:0  /device:GPU:0  GPU:0  /gpu:0  gpu  /CPU:0  /cpu:0
//	/job:localhost/replica:0/task:0/device:GPU:1
//	/job:localhost/device:CPU:0
//
// Surrounding whitespace is ignored and the device kind is matched without
// regard to case. A missing index means 0; a missing job means localhost
// and a missing replica or task means 0. The spec must name a device kind,
// gokeras knows CPU and GPU, and the only job is localhost.
//
// ParseSpec only reads the string: it does not check that the device
// exists (see Resolve). Every error it returns wraps ErrInvalidSpec and
// quotes the input.
func ParseSpec(s string) (Spec, error) {
	input := s
	fail := func(format string, args ...any) (Spec, error) {
		return Spec{}, fmt.Errorf("%w %q: %s; %s", ErrInvalidSpec, input, fmt.Sprintf(format, args...), acceptedSpecs)
	}

	s = strings.TrimSpace(s)
	if s == "" {
		return fail("the spec is empty")
	}
	// "GPU:0" and "gpu" have no leading slash; every other spelling is a
	// sequence of /field components.
	s = strings.TrimPrefix(s, "/")
	if s == "" {
		return fail("the spec names no device")
	}

	spec := Spec{Job: LocalJob}
	seen := map[string]bool{}
	for _, part := range strings.Split(s, "/") {
		if part == "" {
			return fail("empty field (a doubled or trailing slash)")
		}
		name, value, hasValue := strings.Cut(part, ":")
		switch name {
		case "job", "replica", "task", "device":
			if seen[name] && name == "device" {
				return fail("the spec names two devices")
			}
			if seen[name] {
				return fail("the field %q appears twice", name)
			}
			seen[name] = true
		}
		switch name {
		case "job":
			if value != LocalJob {
				return fail("job %q does not exist: gokeras runs in one process and only the local job, /job:%s, exists", value, LocalJob)
			}
		case "replica", "task":
			n, ok := parseIndex(value)
			if !ok {
				return fail("%s %q is not a non-negative integer", name, value)
			}
			if name == "replica" {
				spec.Replica = n
			} else {
				spec.Task = n
			}
		case "device":
			if !hasValue || value == "" {
				return fail("/device: needs a device type, as in /device:GPU:0")
			}
			kindText, indexText, hasIndex := strings.Cut(value, ":")
			kind, index, err := parseDevice(kindText, indexText, hasIndex)
			if err != nil {
				return fail("%v", err)
			}
			spec.Kind, spec.Index = kind, index
		default:
			// A bare device component: CPU, GPU:1, gpu:0, TPU:0, ...
			if !looksLikeDeviceKind(name) {
				return fail("unknown field %q: a spec is made of /job:, /replica:, /task: and /device: fields, or a bare device such as /GPU:0", name)
			}
			if seen["device"] {
				return fail("the spec names two devices")
			}
			seen["device"] = true
			kind, index, err := parseDevice(name, value, hasValue)
			if err != nil {
				return fail("%v", err)
			}
			spec.Kind, spec.Index = kind, index
		}
	}
	if spec.Kind == "" {
		return fail("the spec names no device type (CPU or GPU)")
	}
	return spec, nil
}

// parseDevice reads the kind and optional index of a device component.
func parseDevice(kindText, indexText string, hasIndex bool) (Kind, int, error) {
	var kind Kind
	switch {
	case strings.EqualFold(kindText, string(CPU)):
		kind = CPU
	case strings.EqualFold(kindText, string(GPU)):
		kind = GPU
	default:
		return "", 0, fmt.Errorf("unknown device type %q: gokeras knows CPU and GPU", kindText)
	}
	if !hasIndex {
		return kind, 0, nil
	}
	if strings.Contains(indexText, ":") {
		return "", 0, fmt.Errorf("the device %s:%s has too many parts", kindText, indexText)
	}
	index, ok := parseIndex(indexText)
	if !ok {
		return "", 0, fmt.Errorf("device index %q is not a non-negative integer", indexText)
	}
	return kind, index, nil
}

// parseIndex parses a non-negative decimal integer made only of digits
// (no sign, no spaces), as device indices, replicas and tasks are written.
func parseIndex(s string) (int, bool) {
	if s == "" {
		return 0, false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return 0, false
		}
	}
	n, err := strconv.Atoi(s)
	if err != nil { // only overflow is left
		return 0, false
	}
	return n, true
}

// looksLikeDeviceKind reports whether a bare component's name is meant as a
// device kind: cpu or gpu in any case, or an upper-case identifier such as
// TPU (which ParseSpec then rejects as an unknown kind, with a better
// message than "unknown field").
func looksLikeDeviceKind(name string) bool {
	if strings.EqualFold(name, string(CPU)) || strings.EqualFold(name, string(GPU)) {
		return true
	}
	if name == "" || name[0] < 'A' || name[0] > 'Z' {
		return false
	}
	for _, r := range name {
		if (r < 'A' || r > 'Z') && (r < '0' || r > '9') && r != '_' {
			return false
		}
	}
	return true
}
