package mcpserve

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/freecode/freecode/config"
	"github.com/freecode/freecode/internal/filelock"
)

// A permission question asked by an input_required result outlives the
// server that asked it when the server keeps its states in a directory
// (Options.StateDir): the key that signs them is a 0600 file there, made
// by the first server and read by every later one, so a server restarted
// while the user answers (an update, a crash, a client that restarts its
// stdio server) honours the answer. The one-use rule holds across
// restarts and across the servers that run at once: the nonces of the
// answers taken are a 0600 file beside the key, read and written under
// the directory's lock each time an answer is taken, until they expire.
// An answer that cannot be recorded as used is not taken.

// Files in the state directory.
const (
	askKeyFile  = "mcp-serve-asks.key"
	askUsedFile = "mcp-serve-asks-used.json"
)

// askLockWait bounds the wait for the state directory's lock: held only
// for a small read and write, by the servers of one user.
const askLockWait = 5 * time.Second

// loadAskKey returns the key in dir, making it if there is none (or the
// file is not a key: the states it signed are then refused).
func loadAskKey(dir string) ([32]byte, error) {
	var key [32]byte
	path := filepath.Join(dir, askKeyFile)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return key, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), askLockWait)
	defer cancel()
	lock, err := filelock.Acquire(ctx, path)
	if err != nil {
		return key, fmt.Errorf("locking %s: %w", path, err)
	}
	defer lock.Unlock()
	b, err := os.ReadFile(path)
	if err == nil && len(b) == len(key) {
		copy(key[:], b)
		return key, nil
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return key, err
	}
	rand.Read(key[:]) // never fails (crypto/rand)
	if err := config.WriteFileAtomic(path, key[:], 0o600); err != nil {
		return key, err
	}
	return key, nil
}

// useNonce records nonce, which expires at expiry, as used in dir's file,
// unless it is there already (used reports that). Expired nonces are
// dropped on the way.
func useNonce(dir string, nonce [16]byte, expiry, now time.Time) (used bool, err error) {
	path := filepath.Join(dir, askUsedFile)
	ctx, cancel := context.WithTimeout(context.Background(), askLockWait)
	defer cancel()
	lock, err := filelock.Acquire(ctx, path)
	if err != nil {
		return false, fmt.Errorf("locking %s: %w", path, err)
	}
	defer lock.Unlock()
	nonces := map[string]int64{} // hex nonce → expiry, Unix seconds
	b, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return false, err
	default:
		if err := json.Unmarshal(b, &nonces); err != nil {
			// Not a record of used answers: taking one now could take one
			// again that it held.
			return false, fmt.Errorf("%s: %w", path, err)
		}
	}
	for n, exp := range nonces {
		if now.After(time.Unix(exp, 0)) {
			delete(nonces, n)
		}
	}
	key := hex.EncodeToString(nonce[:])
	if _, ok := nonces[key]; ok {
		return true, nil
	}
	nonces[key] = expiry.Unix()
	out, err := json.Marshal(nonces)
	if err != nil {
		return false, err
	}
	return false, config.WriteFileAtomic(path, out, 0o600)
}
