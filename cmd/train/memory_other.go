//go:build !linux

package main

// physicalMemory is 0 where train does not read the machine's memory.
func physicalMemory() uint64 { return 0 }
