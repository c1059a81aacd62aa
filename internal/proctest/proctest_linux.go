package proctest

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// SigkillPending reports whether pid is gone, a zombie, or has a SIGKILL
// on its way: the kernel delivers that one for sure.
func SigkillPending(t testing.TB, pid int) bool {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return true
	}
	for _, l := range strings.Split(string(b), "\n") {
		k, v, _ := strings.Cut(l, ":")
		switch k {
		case "State":
			if strings.HasPrefix(strings.TrimSpace(v), "Z") {
				return true
			}
		case "ShdPnd", "SigPnd":
			mask, _ := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			if mask&(1<<(syscall.SIGKILL-1)) != 0 {
				return true
			}
		}
	}
	return false
}

// AwaitExit waits until the process of pidfd, which need not be a child
// of this process, has exited.
func AwaitExit(t testing.TB, pidfd int) {
	t.Helper()
	fds := []unix.PollFd{{Fd: int32(pidfd), Events: unix.POLLIN}}
	for {
		if _, err := unix.Poll(fds, -1); err != unix.EINTR {
			return
		}
	}
}
