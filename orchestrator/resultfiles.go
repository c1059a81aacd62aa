package orchestrator

import (
	"cmp"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
)

// Saved results are cleaned up: a file older than resultMaxAge goes, and
// then the oldest files until the rest take at most resultMaxBytes.
const (
	resultMaxAge   = 7 * 24 * time.Hour
	resultMaxBytes = 500 << 20
	// cleanEvery is how often saving a result also cleans its directory:
	// a listing of the directory, at most once an hour in a process, not
	// on every saved result.
	cleanEvery = time.Hour
)

// savedResultName matches the names saveResult gives files; cleaning never
// touches anything else in the directory.
var savedResultName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,40}-[0-9a-f]{32}\.(txt|json)$`)

// defaultResultsDir is where whole results that were cut are saved when
// Options.ResultsDir is empty.
func defaultResultsDir() (string, error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "freecode", "results"), nil
}

// saveResult writes data to a new 0600 file in the results directory (made
// 0700) named after the call, with extension ext, and returns its path.
// Results may hold anything a tool read, so the directory is tightened to
// 0700 even if it existed with wider permissions, and the name carries 128
// random bits: no other user can read, list or guess it. It cleans the
// directory first when the last cleaning in this process is an hour old.
func (o *Orchestrator) saveResult(callID, data, ext string) (string, error) {
	dir := o.opts.ResultsDir
	if dir == "" {
		d, err := defaultResultsDir()
		if err != nil {
			return "", err
		}
		dir = d
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return "", err
	}
	if cleanDue(dir, time.Now()) {
		if n, err := cleanResults(dir, time.Now(), resultMaxAge, resultMaxBytes); err != nil {
			o.log.Warn("cleaning saved results", "dir", dir, "removed", n, "err", err)
		}
	}
	var rnd [16]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return "", err
	}
	name := filepath.Join(dir, fileSafe(callID)+"-"+hex.EncodeToString(rnd[:])+ext)
	// O_EXCL: never write through a file or symlink that is already there.
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", err
	}
	if _, err := f.WriteString(data); err != nil {
		f.Close()
		os.Remove(name)
		return "", err
	}
	if err := f.Close(); err != nil {
		os.Remove(name)
		return "", err
	}
	return name, nil
}

// fileSafe turns a call id (chosen by a model or a frontend) into a short
// file-name prefix that cannot leave the directory.
func fileSafe(s string) string {
	s = strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
			return r
		}
		return '_'
	}, s)
	if len(s) > 40 {
		s = s[:40]
	}
	if s == "" {
		s = "result"
	}
	return s
}

// lastCleaned is when this process last cleaned each results directory.
var lastCleaned = struct {
	mu sync.Mutex
	at map[string]time.Time
}{at: map[string]time.Time{}}

// cleanDue reports whether dir is due for cleaning at now, and if so
// records now as its last cleaning.
func cleanDue(dir string, now time.Time) bool {
	lastCleaned.mu.Lock()
	defer lastCleaned.mu.Unlock()
	if last, ok := lastCleaned.at[dir]; ok && now.Sub(last) < cleanEvery {
		return false
	}
	lastCleaned.at[dir] = now
	return true
}

// CleanResults removes the whole results that calls saved in dir ("" for
// the default directory, Options.ResultsDir's): those older than 7 days,
// then the oldest until the rest take at most 500 MB. Only files named as
// the orchestrator names them are considered. The sidecar calls it at
// start; after that, saving a result cleans at most once an hour. It
// returns how many files it removed.
func CleanResults(dir string) (int, error) {
	if dir == "" {
		d, err := defaultResultsDir()
		if err != nil {
			return 0, err
		}
		dir = d
	}
	now := time.Now()
	cleanDue(dir, now)
	n, err := cleanResults(dir, now, resultMaxAge, resultMaxBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return n, nil // nothing was ever saved
	}
	return n, err
}

// cleanResults removes the saved results in dir last modified before
// now-maxAge, then the oldest until the rest take at most maxBytes.
func cleanResults(dir string, now time.Time, maxAge time.Duration, maxBytes int64) (int, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0, err
	}
	type saved struct {
		path string
		mod  time.Time
		size int64
	}
	var files []saved
	var total int64
	for _, e := range entries {
		if !e.Type().IsRegular() || !savedResultName.MatchString(e.Name()) {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue // removed meanwhile
		}
		files = append(files, saved{filepath.Join(dir, e.Name()), info.ModTime(), info.Size()})
		total += info.Size()
	}
	slices.SortFunc(files, func(a, b saved) int { return cmp.Or(a.mod.Compare(b.mod), strings.Compare(a.path, b.path)) })
	removed := 0
	var errs []error
	for _, f := range files {
		if now.Sub(f.mod) <= maxAge && total <= maxBytes {
			break // oldest first: every later file is newer still
		}
		if err := os.Remove(f.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
			continue
		}
		removed++
		total -= f.size
	}
	return removed, errors.Join(errs...)
}
