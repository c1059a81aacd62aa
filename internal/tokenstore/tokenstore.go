// Package tokenstore keeps secrets FreeCode must remember between runs, such
// as the OAuth tokens of remote MCP servers: in the OS keychain where one
// answers (the macOS Keychain, the Secret Service on Linux and the BSDs, the
// Windows Credential Manager), else in a file only the user can read.
//
// Each entry is a JSON document under a key the caller chooses. The file,
// tokens.json in the store's directory, is mode 0600 in a 0700 directory; it
// is rewritten whole through a temporary file and a rename, under
// internal/filelock, so FreeCode processes sharing it (the sidecar, the CLI)
// never lose each other's entries and a reader never sees half a file.
//
// An entry the keychain refuses (Windows keeps at most 2.5 KB per
// credential; a locked or absent keychain refuses everything) goes to the
// file instead, and an entry written to the keychain is removed from the
// file, so there is one copy. A keychain that does not answer within
// keyringTimeout (a Secret Service waiting on an unlock prompt nobody sees)
// is not asked again by this Store.
package tokenstore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/freecode/freecode/internal/atomicfile"
	"github.com/freecode/freecode/internal/filelock"
)

// ErrNotFound means the store holds nothing under the key.
var ErrNotFound = errors.New("no stored entry")

// FileName is the name of the store's file in its directory.
const FileName = "tokens.json"

// fileVersion is the format of the file; a file of another version is
// neither read nor overwritten.
const fileVersion = 1

// Options configure a Store. A nil *Options means defaults.
type Options struct {
	// Keyring, when true, keeps entries in the OS keychain where it
	// answers, and in the file only where it does not.
	Keyring bool
	// KeyringService names the keychain items ("FreeCode" if empty).
	KeyringService string
}

// A Store holds entries by key. Its methods are safe for concurrent use,
// and several processes may use stores of the same directory at once.
type Store struct {
	dir     string
	file    string
	keyring *keyring // nil: file only
}

// Open returns the store whose file lives in dir. Nothing is read or
// created until an entry is read or written.
func Open(dir string, opts *Options) *Store {
	s := &Store{dir: dir, file: filepath.Join(dir, FileName)}
	if opts != nil && opts.Keyring {
		service := opts.KeyringService
		if service == "" {
			service = "FreeCode"
		}
		// The directory is part of each item's name, so stores of
		// different directories (a test's, another config's) never share
		// keychain items.
		s.keyring = &keyring{service: service, prefix: dir + "\x00"}
	}
	return s
}

// Path returns the store's file.
func (s *Store) Path() string { return s.file }

// Where a Put went.
const (
	InKeyring = "the OS keychain"
	InFile    = "file"
)

// Get returns the entry under key, compacted (the file is indented), or an
// error wrapping ErrNotFound.
func (s *Store) Get(ctx context.Context, key string) (json.RawMessage, error) {
	if s.keyring != nil {
		v, err := s.keyring.get(key)
		if err == nil {
			return v, nil
		}
		if !errors.Is(err, ErrNotFound) && !errors.Is(err, errKeyringDown) {
			return nil, err
		}
	}
	f, err := s.read()
	if err != nil {
		return nil, err
	}
	v, ok := f.Entries[key]
	if !ok {
		return nil, fmt.Errorf("%w under %q", ErrNotFound, key)
	}
	var b bytes.Buffer
	if err := json.Compact(&b, v); err != nil {
		return nil, fmt.Errorf("the token store's entry %q does not parse: %v", key, err)
	}
	return b.Bytes(), nil
}

// Where returns where the entry under key is, InKeyring or InFile, or an
// error wrapping ErrNotFound.
func (s *Store) Where(ctx context.Context, key string) (string, error) {
	if s.keyring != nil {
		if _, err := s.keyring.get(key); err == nil {
			return InKeyring, nil
		}
	}
	f, err := s.read()
	if err != nil {
		return "", err
	}
	if _, ok := f.Entries[key]; !ok {
		return "", fmt.Errorf("%w under %q", ErrNotFound, key)
	}
	return InFile, nil
}

// Put stores value, which must be a JSON document, under key, replacing
// what was there. It returns where the entry went: InKeyring, or InFile.
func (s *Store) Put(ctx context.Context, key string, value json.RawMessage) (string, error) {
	if !json.Valid(value) {
		return "", errors.New("tokenstore: the value is not a JSON document")
	}
	if s.keyring != nil {
		if err := s.keyring.set(key, value); err == nil {
			// One copy only: an older one in the file goes.
			return InKeyring, s.update(ctx, func(f *fileData) bool {
				_, had := f.Entries[key]
				delete(f.Entries, key)
				return had
			})
		}
		// Get asks the keychain first: a copy left there would shadow
		// this one.
		if err := s.keyring.remove(key); err != nil && !errors.Is(err, ErrNotFound) && !errors.Is(err, errKeyringDown) {
			return "", fmt.Errorf("the keychain refused the entry and still holds an older one: %w", err)
		}
	}
	return InFile, s.update(ctx, func(f *fileData) bool {
		f.Entries[key] = value
		return true
	})
}

// Delete removes the entry under key from the keychain and the file. A key
// with no entry is no error.
func (s *Store) Delete(ctx context.Context, key string) error {
	var kerr error
	if s.keyring != nil {
		if err := s.keyring.remove(key); err != nil && !errors.Is(err, ErrNotFound) && !errors.Is(err, errKeyringDown) {
			kerr = err
		}
	}
	ferr := s.update(ctx, func(f *fileData) bool {
		_, had := f.Entries[key]
		delete(f.Entries, key)
		return had
	})
	return errors.Join(kerr, ferr)
}

// fileData is the file's content.
type fileData struct {
	Version int                        `json:"version"`
	Entries map[string]json.RawMessage `json:"entries"`
}

// read returns the file's entries; a missing file holds none.
func (s *Store) read() (*fileData, error) {
	data, err := os.ReadFile(s.file)
	if errors.Is(err, fs.ErrNotExist) {
		return &fileData{Version: fileVersion, Entries: map[string]json.RawMessage{}}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the token store: %w", err)
	}
	var f fileData
	if err := json.Unmarshal(data, &f); err != nil {
		// json's errors quote no input, so no secret.
		return nil, fmt.Errorf("the token store %s does not parse: %v", s.file, err)
	}
	if f.Version != fileVersion {
		return nil, fmt.Errorf("the token store %s has version %d; this FreeCode reads version %d", s.file, f.Version, fileVersion)
	}
	if f.Entries == nil {
		f.Entries = map[string]json.RawMessage{}
	}
	return &f, nil
}

// inProcess serializes updates within this process; filelock does it
// across processes (and, where the file system has no locks, within this
// one too, but the cost of saying it twice is nothing).
var inProcess sync.Mutex

// update applies edit to the file's entries under the file lock and, if
// edit reports a change, writes the file anew.
func (s *Store) update(ctx context.Context, edit func(*fileData) bool) error {
	inProcess.Lock()
	defer inProcess.Unlock()
	if _, err := os.Stat(s.file); errors.Is(err, fs.ErrNotExist) {
		// Nothing to remove from a file that does not exist: do not
		// create the directory for that.
		probe := &fileData{Entries: map[string]json.RawMessage{}}
		if !edit(probe) {
			return nil
		}
	}
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return fmt.Errorf("creating the token store's directory: %w", err)
	}
	// The directory holds secrets: whoever made it, only the user may
	// list it.
	if err := os.Chmod(s.dir, 0o700); err != nil {
		return fmt.Errorf("restricting the token store's directory: %w", err)
	}
	lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), lockWait)
	defer cancel()
	lock, err := filelock.Acquire(lctx, s.file)
	if err != nil {
		return fmt.Errorf("locking the token store: %w", err)
	}
	defer lock.Unlock()
	f, err := s.read()
	if err != nil {
		return err
	}
	if !edit(f) {
		return nil
	}
	f.Version = fileVersion
	data, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	return writeFile(s.file, append(data, '\n'))
}

// lockWait bounds the wait for another process's edit of the file: such an
// edit takes milliseconds, so a lock held longer is a stuck process.
const lockWait = 10 * time.Second

// writeFile replaces path with data atomically, readable by the user only.
func writeFile(path string, data []byte) error {
	if err := atomicfile.Write(path, data, 0o600); err != nil {
		return fmt.Errorf("writing the token store: %w", err)
	}
	return nil
}
