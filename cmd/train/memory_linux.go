package main

import "syscall"

// physicalMemory is the machine's memory in bytes (sysinfo), or 0.
func physicalMemory() uint64 {
	var si syscall.Sysinfo_t
	if err := syscall.Sysinfo(&si); err != nil {
		return 0
	}
	return uint64(si.Totalram) * uint64(si.Unit)
}
