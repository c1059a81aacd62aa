package manifest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/freecode/freecode/internal/atomicfile"
	"github.com/freecode/freecode/internal/filelock"
)

// DefaultMaxBytes bounds a manifest file. A server whose definitions do not
// fit is neither pinned across runs nor started on demand: it is started
// with FreeCode, as if it had no manifest.
const DefaultMaxBytes = 16 << 20

// lockWait bounds how long an Update waits for another writer.
const lockWait = 20 * time.Second

// ErrTooLarge means a manifest would pass the store's bound; nothing was
// written.
var ErrTooLarge = errors.New("manifest too large")

// StoreOptions configures a Store. A nil *StoreOptions means defaults.
type StoreOptions struct {
	// MaxBytes bounds a file (default DefaultMaxBytes).
	MaxBytes int
}

// Store is a directory of manifests, one file per server entry. Its
// methods are safe for concurrent use, by goroutines and by processes.
type Store struct {
	dir      string
	maxBytes int
}

// NewStore returns the store in dir, which is created (0700) on the first
// write.
func NewStore(dir string, opts *StoreOptions) *Store {
	s := &Store{dir: dir, maxBytes: DefaultMaxBytes}
	if opts != nil && opts.MaxBytes > 0 {
		s.maxBytes = opts.MaxBytes
	}
	return s
}

// Dir returns the store's directory.
func (s *Store) Dir() string { return s.dir }

// Path returns the file of key.
func (s *Store) Path(key string) string { return filepath.Join(s.dir, key+".json") }

// Load returns the manifest of key. A missing file is an error that
// wraps fs.ErrNotExist; a file that is not to be trusted is a
// *CorruptError. Either way the caller goes on as if there were none.
func (s *Store) Load(key string) (*Manifest, error) {
	if !isHash(key) {
		return nil, fmt.Errorf("manifest key %q is not a hex SHA-256", key)
	}
	path := s.Path(key)
	data, err := s.read(path)
	if err != nil {
		return nil, err
	}
	return decode(path, key, data)
}

// read reads the file at path if it may be trusted: a regular file (not a
// link that could lead anywhere) that no one but its owner may write,
// within the bound.
func (s *Store) read(path string) ([]byte, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	switch {
	case !fi.Mode().IsRegular():
		return nil, &CorruptError{Path: path, Why: "not a regular file"}
	case fi.Mode().Perm()&0o022 != 0:
		return nil, &CorruptError{Path: path, Why: fmt.Sprintf("others may write it (mode %04o)", fi.Mode().Perm())}
	case fi.Size() > int64(s.maxBytes):
		return nil, &CorruptError{Path: path, Why: fmt.Sprintf("larger than %d bytes", s.maxBytes)}
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// The file opened must be the one looked at: not a link put in its
	// place meanwhile.
	if ofi, err := f.Stat(); err != nil || !os.SameFile(fi, ofi) {
		return nil, &CorruptError{Path: path, Why: "replaced while being read"}
	}
	data, err := io.ReadAll(io.LimitReader(f, int64(s.maxBytes)+1))
	if err != nil {
		return nil, err
	}
	if len(data) > s.maxBytes {
		return nil, &CorruptError{Path: path, Why: fmt.Sprintf("larger than %d bytes", s.maxBytes)}
	}
	return data, nil
}

// Update changes the manifest of key through fn, under the store's lock,
// and writes it if fn changed it. fn gets the manifest on disk, or an
// empty one (Key set, nothing else) when there is none or the file is not
// to be trusted; corrupt says why it was not (nil otherwise). Update
// returns the manifest as it now is. If fn returns an error nothing is
// written; nor is it when the result passes the bound (ErrTooLarge). The
// write is atomic: a crash leaves the old file or the new one.
func (s *Store) Update(ctx context.Context, key string, fn func(m *Manifest, corrupt error) error) (*Manifest, error) {
	if !isHash(key) {
		return nil, fmt.Errorf("manifest key %q is not a hex SHA-256", key)
	}
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return nil, fmt.Errorf("manifest directory: %w", err)
	}
	path := s.Path(key)
	ctx, cancel := context.WithTimeoutCause(ctx, lockWait, fmt.Errorf("gave up after %s", lockWait))
	defer cancel()
	lock, err := filelock.Acquire(ctx, path)
	if err != nil {
		return nil, fmt.Errorf("manifest %s: %w", path, err)
	}
	defer lock.Unlock()
	// Every write of this file holds the lock: a temporary file of it
	// found now is what a writer that died left.
	atomicfile.RemoveStale(path)

	var old []byte
	m, corrupt := s.loadLocked(path, key, &old)
	if m == nil {
		m = &Manifest{Key: key, Pins: map[string]*Pin{}}
	}
	if err := fn(m, corrupt); err != nil {
		return nil, err
	}
	m.Key = key
	data, err := m.encode()
	if err != nil {
		return nil, fmt.Errorf("manifest %s: %w", path, err)
	}
	if len(data) > s.maxBytes {
		return nil, fmt.Errorf("manifest %s: %w: %d bytes, bound %d", path, ErrTooLarge, len(data), s.maxBytes)
	}
	if corrupt == nil && bytes.Equal(data, old) {
		return m, nil
	}
	if err := writeAtomic(path, data); err != nil {
		return nil, fmt.Errorf("writing manifest %s: %w", path, err)
	}
	return m, nil
}

// loadLocked reads the manifest for Update, keeping its bytes in old.
func (s *Store) loadLocked(path, key string, old *[]byte) (*Manifest, error) {
	data, err := s.read(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	m, err := decode(path, key, data)
	if err != nil {
		return nil, err
	}
	*old = data
	return m, nil
}

// Adopt carries the manifest kept under the key from over to key, for
// files named by an earlier kind of key: if key has no file and from has
// one that may be trusted, it is written under key (its pins, list and
// reviews as they were) and from's file is removed. It reports whether it
// carried one over. A missing or untrusted file under from is no error:
// there is nothing to adopt.
func (s *Store) Adopt(ctx context.Context, key, from string) (bool, error) {
	if !isHash(key) || !isHash(from) {
		return false, fmt.Errorf("manifest keys %q, %q: not hex SHA-256s", key, from)
	}
	if key == from {
		return false, nil
	}
	if _, err := os.Lstat(s.Path(from)); err != nil {
		return false, nil // the common case, without a lock
	}
	adopted := false
	_, err := s.Update(ctx, key, func(m *Manifest, corrupt error) error {
		if corrupt == nil && (m.Pinned || len(m.Tools) > 0) {
			return errKeep // key has a manifest of its own
		}
		old, err := s.Load(from)
		if err != nil {
			return errKeep
		}
		*m = *old
		adopted = true
		return nil
	})
	if err != nil && !errors.Is(err, errKeep) {
		return false, err
	}
	if !adopted {
		return false, nil
	}
	return true, s.Remove(ctx, from)
}

// errKeep ends an Update that is to write nothing.
var errKeep = errors.New("nothing to write")

// Remove deletes the manifest of key, if there is one.
func (s *Store) Remove(ctx context.Context, key string) error {
	if !isHash(key) {
		return fmt.Errorf("manifest key %q is not a hex SHA-256", key)
	}
	path := s.Path(key)
	if _, err := os.Lstat(s.dir); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	lock, err := filelock.Acquire(ctx, path)
	if err != nil {
		return fmt.Errorf("manifest %s: %w", path, err)
	}
	defer lock.Unlock()
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// writeData writes a temporary file's contents; tests replace it to fail
// a write midway.
var writeData = func(f *os.File, data []byte) error {
	_, err := f.Write(data)
	return err
}

// writeAtomic writes data to a temporary file beside path (mode 0600),
// syncs it and renames it over path, so that a reader, or the next run
// after a crash, finds the old file or the new one, never a torn one.
func writeAtomic(path string, data []byte) error {
	return atomicfile.WriteWith(path, 0o600, func(f *os.File) error { return writeData(f, data) })
}
