// Package secretstore keeps the values of the ${secret:NAME} references a
// server entry may hold in its env values, headers, url and OAuth fields
// (issue 34): API keys and tokens the user would otherwise write into
// config.json, beside the config or in a project.
//
// A secret is an entry of the token store (internal/tokenstore) that keeps
// the OAuth tokens, under the key "secret/NAME": the same directory
// (config.SecretsDir, ~/.freecode/auth) and keychain service, so the OS
// keychain holds it where one answers, else tokens.json, mode 0600 in a
// 0700 directory. The keychain cannot list its items, so the names set are
// kept as well, in the file's entry "secret-index" (names only, never a
// value), which Set and Delete update under one lock of their own.
package secretstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/freecode/freecode/internal/filelock"
	"github.com/freecode/freecode/internal/tokenstore"
)

// ErrNotFound means no secret of that name is set.
var ErrNotFound = errors.New("secret not set")

// KeyringService names the keychain items: the OAuth tokens' service
// (oauth.DefaultStore's), so that a user finds FreeCode's items in one
// place. The leaf packages cannot import mcp/oauth to share it.
const KeyringService = "FreeCode MCP sign-in"

// InKeyring is where Set and Where say a secret in the OS keychain is;
// one in the file is said by the file's path.
const InKeyring = tokenstore.InKeyring

// Keys in the token store.
const (
	keyPrefix = "secret/"
	indexKey  = "secret-index"
)

// lockDir is the directory, in the store's, whose lock Set and Delete
// hold. It cannot be the store's directory itself: that is the lock of
// tokens.json (internal/filelock locks a file's directory on Unix), which
// the token store takes for each write inside ours.
const lockDir = "secrets.lock"

// lockWait bounds the wait for another process's Set or Delete. One may
// wait on the keychain (an unlock prompt: up to 20 s an operation in
// internal/tokenstore) while holding the lock.
const lockWait = time.Minute

// MaxNameLen is the longest name ValidName accepts.
const MaxNameLen = 128

// A Store holds secrets by name. Its methods are safe for concurrent use,
// and several processes may use stores of the same directory at once.
type Store struct {
	dir    string
	values *tokenstore.Store // the values: the keychain, else the file
	file   *tokenstore.Store // the same file, never the keychain: the index
}

// Open returns the store of dir, config.SecretsDir for the user's secrets.
// It uses the OS keychain as oauth.DefaultStore does, unless
// FREECODE_TOKEN_STORE=file keeps everything in the file. Nothing is read
// or created until a secret is read or written.
func Open(dir string) *Store {
	return open(dir, os.Getenv("FREECODE_TOKEN_STORE") != "file")
}

func open(dir string, keyring bool) *Store {
	var opts *tokenstore.Options
	if keyring {
		opts = &tokenstore.Options{Keyring: true, KeyringService: KeyringService}
	}
	return &Store{dir: dir, values: tokenstore.Open(dir, opts), file: tokenstore.Open(dir, nil)}
}

// Path returns the file that holds the secrets the keychain does not, and
// the index.
func (s *Store) Path() string { return s.values.Path() }

// ValidName reports whether name may name a secret, as ${secret:NAME}:
// 1 to 128 of A-Z a-z 0-9 _ . -.
func ValidName(name string) error {
	if name == "" {
		return errors.New("a secret's name is empty")
	}
	if len(name) > MaxNameLen {
		return fmt.Errorf("a secret's name is at most %d characters; this one has %d", MaxNameLen, len(name))
	}
	for _, c := range name {
		if !nameChar(c) {
			// %q: the name may hold anything a config file or a command
			// line gave; quoted, it cannot move a terminal's cursor.
			return fmt.Errorf("secret name %q: use only A-Z a-z 0-9 _ . -", name)
		}
	}
	return nil
}

func nameChar(c rune) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '.' || c == '-'
}

// Get returns the value of the secret name, or an error wrapping
// ErrNotFound.
func (s *Store) Get(ctx context.Context, name string) (string, error) {
	if err := ValidName(name); err != nil {
		return "", err
	}
	raw, err := s.values.Get(ctx, keyPrefix+name)
	if errors.Is(err, tokenstore.ErrNotFound) {
		return "", fmt.Errorf("%w: %s", ErrNotFound, name)
	}
	if err != nil {
		return "", err
	}
	var v string
	if err := json.Unmarshal(raw, &v); err != nil {
		// json's errors quote no input, so no secret.
		return "", fmt.Errorf("the stored secret %s is not a string: %v", name, err)
	}
	return v, nil
}

// Where returns where the secret name is: InKeyring, or the file's path;
// or an error wrapping ErrNotFound.
func (s *Store) Where(ctx context.Context, name string) (string, error) {
	if err := ValidName(name); err != nil {
		return "", err
	}
	w, err := s.values.Where(ctx, keyPrefix+name)
	if errors.Is(err, tokenstore.ErrNotFound) {
		return "", fmt.Errorf("%w: %s", ErrNotFound, name)
	}
	return s.where(w), err
}

func (s *Store) where(w string) string {
	if w == tokenstore.InFile {
		return s.Path()
	}
	return w
}

// Set stores value as the secret name, replacing what was there, and
// returns where it went: InKeyring, or the file's path. An empty value is
// refused: Delete removes a secret.
func (s *Store) Set(ctx context.Context, name, value string) (string, error) {
	if err := ValidName(name); err != nil {
		return "", err
	}
	if value == "" {
		return "", fmt.Errorf("secret %s: the value is empty (to remove a secret, delete it)", name)
	}
	if !utf8.ValidString(value) {
		// JSON would replace the bytes that are not UTF-8, and a
		// different secret would be kept.
		return "", fmt.Errorf("secret %s: the value is not UTF-8 text", name)
	}
	raw, err := json.Marshal(value)
	if err != nil {
		return "", err
	}
	unlock, err := s.lock(ctx)
	if err != nil {
		return "", err
	}
	defer unlock()
	w, err := s.values.Put(ctx, keyPrefix+name, raw)
	if err != nil {
		return "", fmt.Errorf("storing secret %s: %w", name, err)
	}
	if err := s.editIndex(ctx, func(names []string) []string {
		if slices.Contains(names, name) {
			return nil
		}
		return append(names, name)
	}); err != nil {
		return "", err
	}
	return s.where(w), nil
}

// Delete removes the secret name from the keychain and the file, or
// returns an error wrapping ErrNotFound if it is not set.
func (s *Store) Delete(ctx context.Context, name string) error {
	if err := ValidName(name); err != nil {
		return err
	}
	if _, err := os.Stat(s.dir); errors.Is(err, fs.ErrNotExist) {
		// Set makes the directory (its lock's, at least) wherever the
		// value goes: nothing was ever set here.
		return fmt.Errorf("%w: %s", ErrNotFound, name)
	}
	unlock, err := s.lock(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	_, err = s.values.Where(ctx, keyPrefix+name)
	stored := err == nil
	if err != nil && !errors.Is(err, tokenstore.ErrNotFound) {
		return err
	}
	names, err := s.index(ctx)
	if err != nil {
		return err
	}
	listed := slices.Contains(names, name)
	if !stored && !listed {
		return fmt.Errorf("%w: %s", ErrNotFound, name)
	}
	if err := s.values.Delete(ctx, keyPrefix+name); err != nil {
		return fmt.Errorf("deleting secret %s: %w", name, err)
	}
	return s.editIndex(ctx, func(names []string) []string {
		if !slices.Contains(names, name) {
			return nil
		}
		return slices.DeleteFunc(names, func(n string) bool { return n == name })
	})
}

// Names returns the names of the secrets set, sorted.
func (s *Store) Names(ctx context.Context) ([]string, error) {
	names, err := s.index(ctx)
	if err != nil {
		return nil, err
	}
	slices.Sort(names)
	return names, nil
}

// index reads the index; none means no names.
func (s *Store) index(ctx context.Context) ([]string, error) {
	raw, err := s.file.Get(ctx, indexKey)
	if errors.Is(err, tokenstore.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var names []string
	if err := json.Unmarshal(raw, &names); err != nil {
		return nil, fmt.Errorf("the secrets' index in %s is not a list of names: %v", s.Path(), err)
	}
	return names, nil
}

// editIndex replaces the index by what edit returns of it, unless that is
// nil (no change). The caller holds the lock.
func (s *Store) editIndex(ctx context.Context, edit func([]string) []string) error {
	names, err := s.index(ctx)
	if err != nil {
		return err
	}
	names = edit(names)
	if names == nil {
		return nil
	}
	slices.Sort(names)
	raw, err := json.Marshal(names)
	if err != nil {
		return err
	}
	if _, err := s.file.Put(ctx, indexKey, raw); err != nil {
		return fmt.Errorf("updating the secrets' index: %w", err)
	}
	return nil
}

// lock takes the lock Set and Delete hold across processes, so that a
// value and the index never disagree (a Set and a Delete of one name at
// once leave either both or neither), and no index edit is lost.
func (s *Store) lock(ctx context.Context) (func(), error) {
	dir := filepath.Join(s.dir, lockDir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("creating the secrets' lock directory: %w", err)
	}
	lctx, cancel := context.WithTimeout(ctx, lockWait)
	defer cancel()
	l, err := filelock.Acquire(lctx, filepath.Join(dir, "index"))
	if err != nil {
		return nil, fmt.Errorf("locking the secrets: %w", err)
	}
	return func() { l.Unlock() }, nil
}
