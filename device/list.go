package device

import (
	"fmt"
	"strings"
)

// ListPhysicalDevices lists the physical devices of the given kind that this
// process can use, like tf.config.list_physical_devices. An empty kind lists
// every kind, CPU first. The CPU is always there; GPUs are listed only when
// a GPU driver is registered (a binary built with -tags cudavm) and sees them,
// so in a default build ListPhysicalDevices(GPU) returns an empty list and
// no error. A kind gokeras does not know is an error.
func ListPhysicalDevices(kind Kind) ([]PhysicalDevice, error) {
	kinds := registeredKinds()
	if kind != "" {
		known, ok := normalizeKind(kind)
		if !ok {
			return nil, fmt.Errorf("device: unknown device type %q: gokeras knows CPU and GPU", kind)
		}
		kinds = []Kind{known}
	}
	var all []PhysicalDevice
	for _, k := range kinds {
		d, ok := driverFor(k)
		if !ok {
			continue // no driver for this kind in this build: no devices
		}
		devs, err := d.Devices()
		if err != nil {
			return nil, fmt.Errorf("device: listing %s devices: %w", k, err)
		}
		all = append(all, devs...)
	}
	return all, nil
}

// normalizeKind maps a kind spelled in any case to CPU or GPU.
func normalizeKind(kind Kind) (Kind, bool) {
	switch {
	case strings.EqualFold(string(kind), string(CPU)):
		return CPU, true
	case strings.EqualFold(string(kind), string(GPU)):
		return GPU, true
	}
	return "", false
}
