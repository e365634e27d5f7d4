package data

import (
	"os"
	"strconv"
	"strings"
	"syscall"
)

// physicalMemory returns the memory the process may use in bytes, 0 if
// unknown: the machine's total RAM, or less where the control group's
// memory.max (cgroup v2) or the address-space limit (RLIMIT_AS) is lower.
func physicalMemory() int64 {
	var si syscall.Sysinfo_t
	if err := syscall.Sysinfo(&si); err != nil {
		return 0
	}
	p := int64(si.Totalram) * int64(si.Unit)
	if c := cgroupMemoryMax(); c > 0 {
		p = min(p, c)
	}
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_AS, &rl); err == nil && rl.Cur > 0 && rl.Cur < uint64(p) {
		p = int64(rl.Cur)
	}
	return p
}

// cgroupMemoryMax returns the memory limit of the process's control
// group (cgroup v2 memory.max, or v1 memory.limit_in_bytes), 0 when there
// is none or it is unlimited.
func cgroupMemoryMax() int64 {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		var file string
		if path, ok := strings.CutPrefix(line, "0::"); ok {
			file = "/sys/fs/cgroup" + strings.TrimSpace(path) + "/memory.max"
		} else if _, rest, ok := strings.Cut(line, ":memory:"); ok {
			file = "/sys/fs/cgroup/memory" + strings.TrimSpace(rest) + "/memory.limit_in_bytes"
		} else {
			continue
		}
		v, err := os.ReadFile(file)
		if err != nil {
			continue
		}
		// "max" (v2) and the v1 value for no limit (near 2^63) are no
		// limit.
		n, err := strconv.ParseInt(strings.TrimSpace(string(v)), 10, 64)
		if err == nil && n > 0 && n < 1<<62 {
			return n
		}
	}
	return 0
}
