//go:build unix && !aix && !hurd

package filelock

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// lockDir: flock works on a directory's descriptor, so the target's
// directory is the lock and nothing is created.
const lockDir = true

// tryLock takes an exclusive flock on f without waiting, and reports
// whether it got it. flock binds the open file, not the process, so two
// opens in one process exclude each other too.
func tryLock(f *os.File) (bool, error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return false, err
	}
	var lerr error
	if err := rc.Control(func(fd uintptr) {
		for {
			lerr = unix.Flock(int(fd), unix.LOCK_EX|unix.LOCK_NB)
			if lerr != unix.EINTR {
				return
			}
		}
	}); err != nil {
		return false, err
	}
	switch {
	case errors.Is(lerr, unix.EWOULDBLOCK):
		return false, nil
	case errors.Is(lerr, unix.ENOTSUP), errors.Is(lerr, unix.EOPNOTSUPP), errors.Is(lerr, unix.ENOLCK):
		// ENOLCK is NFS without its lock daemon.
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
	if err := rc.Control(func(fd uintptr) { uerr = unix.Flock(int(fd), unix.LOCK_UN) }); err != nil {
		return err
	}
	return uerr
}
