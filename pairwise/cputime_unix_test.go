//go:build unix

package pairwise

import "syscall"

// cpuNanos is the process's user+system CPU time: on a shared, loaded
// machine it measures the work of a single-threaded benchmark where wall
// time measures the machine's load.
func cpuNanos() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
