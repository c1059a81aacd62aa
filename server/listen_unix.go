//go:build unix

package server

import (
	"net"
	"sync"
	"syscall"
)

// umaskMu serializes the umask changes of listenUnix. The umask is the
// whole process's: a file another goroutine creates meanwhile is born
// without group and other bits, which is only ever stricter.
var umaskMu sync.Mutex

// listenUnix listens on a unix socket that is the user's alone from the
// moment it exists (mode 0700 at most): made with the usual umask and
// chmodded after, it would accept other users' connections in between.
func listenUnix(path string) (net.Listener, error) {
	umaskMu.Lock()
	defer umaskMu.Unlock()
	old := syscall.Umask(0o077)
	defer syscall.Umask(old)
	return net.Listen("unix", path)
}
