package mcp

import (
	"os"

	"golang.org/x/sys/unix"
)

// unreadInput returns how many bytes written to the pipe whose write end
// is f are still in the pipe, unread by the server. Linux answers FIONREAD
// on either end of a pipe.
func unreadInput(f *os.File) (int, bool) {
	sc, err := f.SyscallConn()
	if err != nil {
		return 0, false
	}
	var n int
	var ierr error
	if err := sc.Control(func(fd uintptr) { n, ierr = unix.IoctlGetInt(int(fd), unix.TIOCINQ) }); err != nil || ierr != nil {
		return 0, false
	}
	return n, true
}

// seesUnreadInput: unreadInput answers here.
const seesUnreadInput = true
