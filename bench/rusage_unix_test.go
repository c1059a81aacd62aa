//go:build unix

package bench

import "syscall"

// rusage is this process's CPU time so far (user + system), in
// microseconds, and how many times its threads gave up the CPU, waiting
// (voluntary context switches: each a sleep and a wake-up) or preempted.
func rusage() (cpuUs float64, switches int64) {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0, 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e3, int64(ru.Nvcsw) + int64(ru.Nivcsw)
}
