//go:build windows

package filelock

import (
	"errors"
	"os"

	"golang.org/x/sys/windows"
)

// lockDir: LockFileEx needs a file; the lock is a file beside the target.
const lockDir = false

// tryLock takes an exclusive LockFileEx lock on the first byte of f
// without waiting, and reports whether it got it. The lock belongs to the
// handle, so two opens in one process exclude each other too.
func tryLock(f *os.File) (bool, error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return false, err
	}
	var lerr error
	if err := rc.Control(func(fd uintptr) {
		lerr = windows.LockFileEx(windows.Handle(fd), windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY,
			0, 1, 0, new(windows.Overlapped))
	}); err != nil {
		return false, err
	}
	switch {
	case errors.Is(lerr, windows.ERROR_LOCK_VIOLATION):
		return false, nil
	case errors.Is(lerr, windows.ERROR_NOT_SUPPORTED), errors.Is(lerr, windows.ERROR_INVALID_FUNCTION):
		return false, errNoLocks
	}
	return lerr == nil, lerr
}

func unlock(f *os.File) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var uerr error
	if err := rc.Control(func(fd uintptr) {
		uerr = windows.UnlockFileEx(windows.Handle(fd), 0, 1, 0, new(windows.Overlapped))
	}); err != nil {
		return err
	}
	return uerr
}
