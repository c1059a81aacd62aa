//go:build !linux

package sandbox

import (
	"fmt"
	"os"
	"runtime"
)

// execFiltered is the exec stub of a Linux sandbox (seccomp_linux.go);
// nothing starts it elsewhere.
func execFiltered([]string) int {
	fmt.Fprintf(os.Stderr, "freecode sandbox: the exec stub runs on Linux, not on %s\n", runtime.GOOS)
	return 126
}
