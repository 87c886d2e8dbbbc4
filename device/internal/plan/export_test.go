package plan

// For the external tests (package plan_test), which drive nn and so cannot
// live in package plan: the host backend.
type HostDevice = hostDevice

func NewHostBackend(d *HostDevice) Backend { return newHostBackend(d) }

// Updates counts the Update steps the host backend ran on d.
func (d *HostDevice) Updates() int { return d.updates }
