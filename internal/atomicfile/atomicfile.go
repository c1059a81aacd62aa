// Package atomicfile replaces a file's contents so that a reader, or the
// next run after a crash, finds the old file or the new one, never a torn
// one: the data goes to a temporary file beside it, which is synced and
// renamed over it.
package atomicfile

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Write replaces path's contents with data; the file gets mode. path's
// directory must exist.
func Write(path string, data []byte, mode fs.FileMode) error {
	return WriteWith(path, mode, func(f *os.File) error {
		_, err := f.Write(data)
		return err
	})
}

// WriteWith is Write with the contents written by write, into the
// temporary file, which it must not close.
func WriteWith(path string, mode fs.FileMode, write func(*os.File) error) error {
	tmp, _, err := prepare(path, mode, write)
	if err != nil {
		return err
	}
	defer os.Remove(tmp) // nothing to remove after the rename
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("replacing %s: %w", path, err)
	}
	syncDir(path)
	return nil
}

// prepare writes the new contents of path into a temporary file beside
// it, with mode, and syncs and closes it. It returns the temporary file's
// name and what it is (to know it again after a swap); on error nothing
// is left.
func prepare(path string, mode fs.FileMode, write func(*os.File) error) (tmp string, info fs.FileInfo, err error) {
	f, err := os.CreateTemp(filepath.Dir(path), tempPrefix(path)+"*")
	if err != nil {
		return "", nil, err
	}
	name := f.Name()
	defer func() {
		if err != nil {
			os.Remove(name)
		}
	}()
	if err := f.Chmod(mode); err != nil {
		f.Close()
		return "", nil, err
	}
	if err := write(f); err != nil {
		f.Close()
		return "", nil, err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return "", nil, err
	}
	if info, err = f.Stat(); err != nil {
		f.Close()
		return "", nil, err
	}
	if err := f.Close(); err != nil {
		return "", nil, err
	}
	return name, info, nil
}

// syncDir makes a rename in path's directory durable. Not every system
// can sync a directory, and the data is safe either way.
func syncDir(path string) {
	if d, err := os.Open(filepath.Dir(path)); err == nil {
		d.Sync()
		d.Close()
	}
}

// ErrChanged is WriteIf's error when path is no longer the file its
// caller read: another program wrote it in between. Nothing was written.
var ErrChanged = errors.New("the file changed since it was read")

// Stamp is a file as it was read: what it is (device and inode), its
// size and modification time, and a hash of its contents. The zero Stamp
// is a file that did not exist.
type Stamp struct {
	info fs.FileInfo // nil: there was no file
	sum  [sha256.Size]byte
}

// StampOf returns the Stamp of a file read as data, whose info is from
// Stat of the open file it was read from.
func StampOf(info fs.FileInfo, data []byte) Stamp {
	return Stamp{info: info, sum: sha256.Sum256(data)}
}

// matches reports whether the file at path is s's: the same file, of the
// same size and time, with the same contents (an in-place write within
// the clock's resolution changes only those), or, for the zero Stamp,
// none.
func (s Stamp) matches(path string) (bool, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return s.info == nil, nil
	}
	if err != nil {
		return false, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return false, err
	}
	if s.info == nil || !os.SameFile(fi, s.info) || fi.Size() != s.info.Size() || !fi.ModTime().Equal(s.info.ModTime()) {
		return false, nil
	}
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return false, err
	}
	return bytes.Equal(h.Sum(nil), s.sum[:]), nil
}

// Hooks for tests, run by WriteIf on its way: after the temporary file is
// synced, and between its last check and the swap or rename.
var testHookBeforeCheck, testHookBeforeReplace func()

// WriteIf replaces path's contents with data, as Write does, if path is
// still the file stamped was; otherwise it returns ErrChanged, having
// changed nothing. A program that writes the file without the lock its
// writers share (an editor, a script) must not have its write undone by
// a copy made before it.
//
// The file is checked once the new contents are written and synced,
// right before the rename. Where the system can swap two files in one
// step (Linux's renameat2 RENAME_EXCHANGE, macOS's RENAME_SWAP), the swap
// replaces the rename, and the file it took out is checked again: if it
// is not the one stamped (a write in the instant after the check), it is
// swapped back and WriteIf returns ErrChanged. Another program's reader
// may see the new contents in that instant. Elsewhere, or on a file
// system that cannot swap, that instant is unguarded.
func WriteIf(path string, data []byte, mode fs.FileMode, was Stamp) error {
	tmp, ours, err := prepare(path, mode, func(f *os.File) error {
		_, err := f.Write(data)
		return err
	})
	if err != nil {
		return err
	}
	keep := false // whether tmp holds another program's file after all
	defer func() {
		if !keep {
			os.Remove(tmp)
		}
	}()
	if testHookBeforeCheck != nil {
		testHookBeforeCheck()
	}
	if ok, err := was.matches(path); err != nil {
		return err
	} else if !ok {
		return ErrChanged
	}
	if testHookBeforeReplace != nil {
		testHookBeforeReplace()
	}
	if was.info == nil {
		// There was no file: put ours there only if there still is none.
		switch err := renameNoReplace(tmp, path); {
		case err == nil:
			syncDir(path)
			return nil
		case errors.Is(err, fs.ErrExist):
			return ErrChanged
		case !errors.Is(err, errors.ErrUnsupported):
			return fmt.Errorf("replacing %s: %w", path, err)
		}
	} else {
		switch err := exchange(tmp, path); {
		case err == nil:
			// tmp is what was at path.
			if ok, err := was.matches(tmp); err == nil && ok {
				syncDir(path)
				return nil
			}
			keep, err = putBack(tmp, path, ours)
			return err
		case errors.Is(err, fs.ErrNotExist):
			return ErrChanged // removed since the check
		case !errors.Is(err, errors.ErrUnsupported):
			return fmt.Errorf("replacing %s: %w", path, err)
		}
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("replacing %s: %w", path, err)
	}
	syncDir(path)
	return nil
}

// putBack undoes a swap that took out, into tmp, a file another program
// put at path after the check: it swaps again, and if what comes out is
// not ours (ours is the file that went in) but a save newer still, swaps
// once more to put that one back, leaving in tmp the save it superseded.
// It returns ErrChanged, and keep when tmp is left holding a file that is
// not to be removed (a swap failed).
func putBack(tmp, path string, ours fs.FileInfo) (keep bool, err error) {
	if err := exchange(tmp, path); err != nil {
		return true, fmt.Errorf("%s changed while being replaced, and putting back what another program wrote failed (it is in %s): %w", path, tmp, err)
	}
	if fi, err := os.Lstat(tmp); err == nil && os.SameFile(fi, ours) {
		return false, ErrChanged
	}
	if err := exchange(tmp, path); err != nil {
		return true, fmt.Errorf("%s changed while being replaced, and putting back what another program wrote failed (it is in %s): %w", path, tmp, err)
	}
	return false, ErrChanged
}

// tempPrefix is how the names of path's temporary files begin.
func tempPrefix(path string) string { return "." + filepath.Base(path) + ".tmp" }

// RemoveStale removes the temporary files that writes of path left when
// their process died between creating one and the rename. A live writer's
// temporary file looks the same: only a caller that holds what every
// writer of path holds (a lock of the file) may call it.
func RemoveStale(path string) {
	dir, prefix := filepath.Dir(path), tempPrefix(path)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), prefix) {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}
