package plan

// Observe, when not nil, is called with every machine New makes, once its
// buffers are allocated: for the tests and tools that measure a model's
// machines (Machine.Memory). Nothing else sets it.
var Observe func(*Machine)

// Memory is the device memory of a machine's own buffers (not the
// model's weights, State buffers and optimizer slots, which its machines
// share), in bytes.
type Memory struct {
	// Steps is the number of the plan's steps (a RunAll); Buffers of its
	// buffers.
	Steps, Buffers int
	// ByRole is the bytes of the machine's own buffers by their role, the
	// Temp buffers by what keeps them apart (gradient, read, moving,
	// scale, read first: see lifetimes.go) or "temp" when they may share.
	ByRole map[string]int64
	// ByKind is the bytes of the Temp buffers by the kind of the step
	// that first writes them (the gradients included).
	ByKind map[string]int64
	// Unshared is what the machine's own buffers take each in memory of
	// its own; Allocated what it allocates: the arena and the buffers kept
	// apart. A second set of inputs (a started step's, on a GPU) is not
	// counted.
	Unshared, Allocated int64
	// Arena is the bytes of the shared allocation, holding Shared buffers.
	Arena  int64
	Shared int
}

// Memory reports the machine's own device memory.
func (m *Machine) Memory() Memory {
	p := m.plan
	r := Memory{Steps: len(p.Steps), Buffers: len(p.Buffers), ByRole: map[string]int64{}, ByKind: map[string]int64{}}
	writer := make([]Kind, len(p.Buffers))
	for i := len(p.Steps) - 1; i >= 0; i-- {
		for _, b := range p.Steps[i].Out {
			if b >= 0 {
				writer[b] = p.Steps[i].Kind
			}
		}
	}
	why, life := p.pinned(), p.lifetimes()
	for b, buf := range p.Buffers {
		if buf.Role == Weight || buf.Role == State {
			continue
		}
		bytes := 4 * int64(max(buf.Elems, 1))
		role := buf.Role.String()
		if buf.Role == Temp {
			if why[b] != "" {
				role = why[b]
			} else if life[b].first < 0 {
				role = "read first"
			}
			r.ByKind[kindName(writer[b])] += bytes
		}
		r.ByRole[role] += bytes
		r.Unshared += bytes
		if m.layout != nil && m.layout.off[b] >= 0 {
			r.Shared++
			continue
		}
		r.Allocated += bytes
	}
	if m.layout != nil {
		r.Arena = 4 * int64(m.layout.size)
		r.Allocated += r.Arena
	}
	return r
}

// kindName names a step kind, "none" for a buffer no step writes.
func kindName(k Kind) string {
	if k == 0 {
		return "none"
	}
	return k.String()
}
