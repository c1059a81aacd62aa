//go:build unix

package mcp

import (
	"syscall"
	"time"
)

// cpuTime is this process's CPU time so far (user + system) and its
// threads' context switches, so the benchmark can report what each client
// costs per call, not only how long it waits.
func cpuTime() (time.Duration, int64) {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0, 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), int64(ru.Nvcsw) + int64(ru.Nivcsw)
}
