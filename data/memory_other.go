//go:build !linux

package data

// physicalMemory returns 0: the total RAM is not looked up on this system.
func physicalMemory() int64 { return 0 }
