//go:build unix

package server

import (
	"errors"
	"io"
	"os"
	"syscall"
)

// processAlive reports whether a process of that pid exists.
func processAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// ownedByUser reports whether the file belongs to this process's user.
func ownedByUser(fi os.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Getuid()
}

// closableReader returns f as a reader whose Close interrupts a Read in
// progress: a signal must end the stdio sidecar while the editor keeps
// stdin open, and a blocking read of a pipe ignores Close. Made
// non-blocking, the descriptor goes through the runtime's poller, where
// Close wakes the reader.
func closableReader(f *os.File) io.ReadCloser {
	fd := f.Fd()
	if err := syscall.SetNonblock(int(fd), true); err != nil {
		return f
	}
	return os.NewFile(fd, f.Name())
}
