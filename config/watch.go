package config

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fsnotify/fsnotify"
)

// DefaultDebounce is how long a Watcher waits after the last file event
// before it reads the file: editors save in several steps (truncate, write,
// rename), and reading in between would see a torn file.
const DefaultDebounce = 100 * time.Millisecond

// WatchOptions configures Watch. The zero value is usable.
type WatchOptions struct {
	// OnChange is called after the file changed: with the new config, or
	// with a nil config and the *ParseError or *ValidationError that makes
	// the file unusable. After an error the caller keeps what it runs:
	// Last still returns the last good config. Calls come from one
	// goroutine, one at a time; OnChange must not call Close.
	OnChange func(cfg *Config, err error)
	// PollInterval is the period of the stat-poll used when file events
	// are not available. Zero means the config's mcp.pollInterval.
	PollInterval time.Duration
	// Debounce is the quiet time after an event before the file is read.
	// Zero means DefaultDebounce.
	Debounce time.Duration
	// ForcePoll skips file events and always stat-polls (network file
	// systems where inotify says nothing).
	ForcePoll bool
	// Logger gets a line when the watcher falls back to polling. Nil
	// means no logging.
	Logger *slog.Logger
}

// Watcher follows a config file and reports every change of its contents.
// It watches the file's parent directory, not the file: editors and
// UpdateFile replace the file by a rename, which a watch on the file itself
// would not survive. Where fsnotify fails (no inotify left, the directory
// does not exist yet) it stat-polls until fsnotify works again.
type Watcher struct {
	path     string   // absolute
	names    []string // path, and the file it links to if it is a link
	opts     WatchOptions
	fsw      *fsnotify.Watcher // nil if fsnotify could not start at all
	kick     chan struct{}     // a relevant event happened; buffered 1
	polling  atomic.Bool       // fsnotify is not watching the directory
	done     chan struct{}     // closed by Close
	closeOne sync.Once
	wg       sync.WaitGroup

	// seen is what the loop read last; only the loop goroutine uses it.
	seen fileState

	mu   sync.Mutex
	last *Config // last good config
	err  error   // error of the last read, nil if the file is good
}

// fileState is the identity of the file's contents at one read.
type fileState struct {
	exists bool
	data   []byte
	info   fs.FileInfo // for os.SameFile: a rename over the file is a change
	mod    time.Time
	size   int64

	readErr error
}

// Watch reads the config file at path, then follows it until ctx is done or
// Close is called. Watch fails only if opts are unusable; a file that does
// not parse is reported by Err and Last holds defaults until it is fixed.
// OnChange is not called for this first read.
func Watch(ctx context.Context, path string, opts *WatchOptions) (*Watcher, error) {
	if path == "" {
		return nil, errors.New("watching config: empty path")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("watching config: %w", err)
	}
	w := &Watcher{path: abs, kick: make(chan struct{}, 1), done: make(chan struct{})}
	w.names = []string{abs}
	// A config that is a symbolic link (dotfiles) changes where the link
	// points: watch that file's directory too.
	if real, err := filepath.EvalSymlinks(abs); err == nil && real != abs {
		w.names = append(w.names, real)
	}
	if opts != nil {
		w.opts = *opts
	}
	if w.opts.Debounce <= 0 {
		w.opts.Debounce = DefaultDebounce
	}
	w.seen = readState(w.path)
	w.last, w.err = w.parse(w.seen)
	if w.err != nil {
		w.last, _ = Parse(w.path, nil)
	}

	w.polling.Store(true)
	if !w.opts.ForcePoll {
		fsw, err := fsnotify.NewWatcher()
		if err != nil {
			w.logf("config watcher: file events unavailable, polling instead", "err", err)
		} else {
			w.fsw = fsw
			w.addDir()
			// fsnotify's channels must be drained even while the loop is
			// busy reading the file, or its reader stalls: their own goroutine.
			w.wg.Go(w.drain)
		}
	}
	w.wg.Go(func() { w.loop(ctx) })
	return w, nil
}

// Last returns the last good config: the one in force. It never returns
// nil. The config is shared: callers must not modify it.
func (w *Watcher) Last() *Config {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.last
}

// Err returns why the file as last read is unusable, or nil if it is good.
func (w *Watcher) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// Close stops the watcher and waits for its goroutines. It is safe to call
// more than once.
func (w *Watcher) Close() error {
	w.closeOne.Do(func() {
		close(w.done)
		if w.fsw != nil {
			w.fsw.Close() // ends drain
		}
	})
	w.wg.Wait()
	return nil
}

func (w *Watcher) logf(msg string, args ...any) {
	if w.opts.Logger != nil {
		w.opts.Logger.Warn(msg, args...)
	}
}

// addDir starts watching the file's directory, or leaves the watcher
// polling if that fails.
func (w *Watcher) addDir() {
	for _, name := range w.names {
		if err := w.fsw.Add(filepath.Dir(name)); err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				w.logf("config watcher: cannot watch directory, polling instead", "dir", filepath.Dir(name), "err", err)
			}
			w.polling.Store(true)
			return
		}
	}
	w.polling.Store(false)
}

// drain forwards the events that concern the file to the loop.
func (w *Watcher) drain() {
	for {
		select {
		case ev, ok := <-w.fsw.Events:
			if !ok {
				return
			}
			if w.relevant(filepath.Clean(ev.Name), ev.Op) {
				w.signal()
			}
		case err, ok := <-w.fsw.Errors:
			if !ok {
				return
			}
			// An overflow lost events: read the file to be sure.
			w.logf("config watcher: file event error", "err", err)
			w.signal()
		}
	}
}

// relevant reports whether an event on name concerns the config file.
func (w *Watcher) relevant(name string, op fsnotify.Op) bool {
	for _, n := range w.names {
		switch {
		case name == n:
			return true
		case name == filepath.Dir(n) && op.Has(fsnotify.Remove|fsnotify.Rename):
			// The directory went away and its watch with it.
			w.polling.Store(true)
			return true
		}
	}
	return false // another file in the same directory
}

func (w *Watcher) signal() {
	select {
	case w.kick <- struct{}{}:
	default: // one pending kick is enough
	}
}

func (w *Watcher) pollInterval() time.Duration {
	if w.opts.PollInterval > 0 {
		return w.opts.PollInterval
	}
	if d := w.Last().MCP.PollInterval; d > 0 {
		return d
	}
	return DefaultPollInterval
}

func (w *Watcher) loop(ctx context.Context) {
	debounce := time.NewTimer(time.Hour)
	debounce.Stop()
	defer debounce.Stop()
	pending := false // debounce is running
	poll := time.NewTimer(w.pollInterval())
	defer poll.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-w.done:
			return
		case <-w.kick:
			debounce.Reset(w.opts.Debounce)
			pending = true
		case <-debounce.C:
			pending = false
			w.reload()
		case <-poll.C:
			if w.polling.Load() {
				if w.fsw != nil {
					w.addDir() // the directory may exist now
				}
				// A poll faster than the debounce must not keep
				// pushing the read back.
				if st := statState(w.path); st.changedFrom(w.seen) && !pending {
					debounce.Reset(w.opts.Debounce)
					pending = true
				}
			}
			poll.Reset(w.pollInterval())
		}
	}
}

// reload reads the file and reports it if its contents changed.
func (w *Watcher) reload() {
	st := readState(w.path)
	if st.exists == w.seen.exists && bytes.Equal(st.data, w.seen.data) && st.readErr == nil && w.seen.readErr == nil {
		w.seen = st
		return // touched, or rewritten with the same bytes
	}
	w.seen = st
	cfg, err := w.parse(st)
	w.mu.Lock()
	if err == nil {
		w.last = cfg
	}
	w.err = err
	w.mu.Unlock()
	if w.opts.OnChange != nil {
		w.opts.OnChange(cfg, err)
	}
}

func (w *Watcher) parse(st fileState) (*Config, error) {
	if st.readErr != nil {
		// Unreadable (permissions): an error, not an empty config that
		// would stop every server.
		return nil, st.readErr
	}
	return Parse(w.path, st.data)
}

// changedFrom reports whether a stat shows a change since old was read.
func (st fileState) changedFrom(old fileState) bool {
	if st.exists != old.exists {
		return true
	}
	return st.exists && (!os.SameFile(st.info, old.info) || !st.mod.Equal(old.mod) || st.size != old.size)
}

func statState(path string) fileState {
	fi, err := os.Stat(path)
	if err != nil {
		return fileState{}
	}
	return fileState{exists: true, info: fi, mod: fi.ModTime(), size: fi.Size()}
}

func readState(path string) fileState {
	st := statState(path)
	if st.exists {
		st.data, st.readErr = ReadFile(path)
		if errors.Is(st.readErr, fs.ErrNotExist) { // removed since the stat
			return fileState{}
		}
	}
	return st
}
