package proctest

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Children returns the pids of this process's child processes, read from
// /proc; the test skips where there is no /proc to read.
func Children(t testing.TB) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Skip("no /proc to look for child processes in")
	}
	self := strconv.Itoa(os.Getpid())
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid …; comm may hold spaces and parentheses.
		rest := string(data[strings.LastIndexByte(string(data), ')')+1:])
		if f := strings.Fields(rest); len(f) > 1 && f[1] == self {
			out = append(out, pid)
		}
	}
	return out
}
