// Package atomicfile replaces a file's contents so that a reader, or the
// next run after a crash, finds the old file or the new one, never a torn
// one: the data goes to a temporary file beside it, which is synced and
// renamed over it.
package atomicfile

import (
	"fmt"
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
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, tempPrefix(path)+"*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp) // nothing to remove after the rename
	if err := f.Chmod(mode); err != nil {
		f.Close()
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("replacing %s: %w", path, err)
	}
	// The rename is durable once the directory is synced. Not every
	// system can sync a directory, and the data is safe either way.
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
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
