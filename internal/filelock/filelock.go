// Package filelock holds an exclusive lock on a file across processes, for
// the read-modify-write of a file that several programs edit at once (the
// sidecar, the CLI and the FreeCode app all edit config.json).
//
// The lock is never taken on the target itself: writers replace the
// target by renaming a new file over it, and a lock on the file they
// replaced guards nothing. On Unix it is taken on the target's directory,
// which a rename does not replace, so no lock file is left in a user's
// project (where it would show in `git status`) or home; every file of one
// directory shares that lock, which costs nothing for edits this short.
// Elsewhere it is taken on a lock file beside the target, "."+name+".lock",
// created on first use and left in place: removing it would let one
// process hold a lock on the removed file while another locks a new one of
// the same name.
//
// On Unix the lock is flock(2), on Windows LockFileEx: both are advisory
// (they bind only programs that take them) and released by the system
// when the holder exits or is killed, so a crash never leaves a stale
// lock. On other systems (AIX, Plan 9, WebAssembly), and on a file system
// that refuses locks (some network and FUSE file systems), the lock binds
// only the goroutines of this process: a file there stays editable.
package filelock

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Path returns what is locked to guard target: its directory on Unix, a
// lock file beside it elsewhere.
func Path(target string) string {
	if lockDir {
		return filepath.Dir(target)
	}
	return filepath.Join(filepath.Dir(target), "."+filepath.Base(target)+".lock")
}

// Lock is a held lock; Unlock releases it.
type Lock struct {
	f    *os.File
	sys  bool // f holds a lock of the system's
	slot chan struct{}
}

// errNoLocks is tryLock's answer on a file system that has no locks.
var errNoLocks = errors.New("the file system does not support locks")

// Acquire takes the lock that guards target, creating the lock file (mode
// 0600) if one is needed; target's directory must exist. It waits while another
// process or goroutine holds the lock, until ctx is done: then the error
// names the lock file and wraps context.Cause(ctx). A free lock is taken
// even if ctx is done already, so a done ctx makes Acquire a try-lock.
func Acquire(ctx context.Context, target string) (*Lock, error) {
	path := Path(target)
	// One goroutine per process waits on the file; the others wait here,
	// where a release wakes them without polling.
	slot := inProcess(path)
	select {
	case slot <- struct{}{}:
	default:
		select {
		case slot <- struct{}{}:
		case <-ctx.Done():
			return nil, waitError(ctx, path)
		}
	}
	// Read-only is enough to lock, and works on a lock file this
	// process may read but not write.
	flag := os.O_RDONLY
	if !lockDir {
		flag |= os.O_CREATE
	}
	f, err := os.OpenFile(path, flag, 0o600)
	if err != nil {
		<-slot
		return nil, fmt.Errorf("opening lock file: %w", err)
	}
	// The system has no lock call that both waits and heeds ctx, so
	// contention between processes is polled, backing off to 32ms.
	delay := time.Millisecond
	for {
		ok, err := tryLock(f)
		if errors.Is(err, errNoLocks) {
			return &Lock{f: f, slot: slot}, nil
		}
		if err != nil {
			f.Close()
			<-slot
			return nil, fmt.Errorf("locking %s: %w", path, err)
		}
		if ok {
			return &Lock{f: f, sys: true, slot: slot}, nil
		}
		t := time.NewTimer(delay/2 + rand.N(delay))
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			f.Close()
			<-slot
			return nil, waitError(ctx, path)
		}
		delay = min(2*delay, 32*time.Millisecond)
	}
}

func waitError(ctx context.Context, path string) error {
	return fmt.Errorf("waiting for %s, held by another writer: %w", path, context.Cause(ctx))
}

// Unlock releases the lock. Calling it again does nothing.
func (l *Lock) Unlock() error {
	if l.f == nil {
		return nil
	}
	var err error
	if l.sys {
		err = unlock(l.f)
	}
	if cerr := l.f.Close(); err == nil {
		err = cerr
	}
	l.f = nil
	<-l.slot
	return err
}

// slots maps a lock file's path to a one-place channel that the goroutines
// of this process holding or waiting for that lock fill in turn. A process
// edits a handful of files, so the map stays small.
var (
	slotsMu sync.Mutex
	slots   = map[string]chan struct{}{}
)

func inProcess(path string) chan struct{} {
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	slotsMu.Lock()
	defer slotsMu.Unlock()
	s, ok := slots[path]
	if !ok {
		s = make(chan struct{}, 1)
		slots[path] = s
	}
	return s
}
