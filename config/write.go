package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/tailscale/hujson"
)

// UpdateFile edits the JSON-with-comments file at path in place through fn,
// keeping every byte fn does not touch (other keys, their order, comments).
// A missing file starts as "{}". If fn returns an error, or the file does not
// parse, nothing is written. The write is atomic and keeps the file's mode
// (0600 for a new file). Permission rules and config edits share it.
func UpdateFile(path string, fn func(root *hujson.Value) error) error {
	data, err := os.ReadFile(path)
	mode := fs.FileMode(0o600)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		data = []byte("{}\n")
	case err != nil:
		return err
	default:
		if fi, err := os.Stat(path); err == nil {
			mode = fi.Mode().Perm()
		}
	}
	root, err := hujson.Parse(data)
	if err != nil {
		return newParseError(path, err)
	}
	if err := fn(&root); err != nil {
		return err
	}
	root.Format()
	return WriteFileAtomic(path, root.Pack(), mode)
}

// WriteFileAtomic writes data to a temporary file in path's directory, syncs
// it and renames it over path, so a reader sees the old file or the new one,
// never a torn one. The directory is created (0700) if missing.
func WriteFileAtomic(path string, data []byte, mode fs.FileMode) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp) // no-op after a successful rename
	if err := f.Chmod(mode); err != nil {
		f.Close()
		return err
	}
	if _, err := f.Write(data); err != nil {
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
	return nil
}
