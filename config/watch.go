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
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fsnotify/fsnotify"
)

// DefaultDebounce is how long a Watcher waits after the last file event
// before it reads the files: editors save in several steps (truncate, write,
// rename), and reading in between would see a torn file.
const DefaultDebounce = 100 * time.Millisecond

// WatchOptions configures Watch. The zero value is usable.
type WatchOptions struct {
	// OnChange is called with every file whose contents changed since it
	// was last read (several at once when they changed within one debounce
	// time), in the order Watch was given them. Calls come from one
	// goroutine, one at a time; OnChange must not call Close.
	OnChange func(changes []Change)
	// PollInterval is the period of the stat-poll used when file events
	// are not available (default DefaultPollInterval; see SetPollInterval).
	PollInterval time.Duration
	// Debounce is the quiet time after an event before the files are
	// read. Zero means DefaultDebounce.
	Debounce time.Duration
	// ForcePoll skips file events and always stat-polls (network file
	// systems where inotify says nothing).
	ForcePoll bool
	// Logger gets a line when the watcher falls back to polling. Nil
	// means no logging.
	Logger *slog.Logger
	// DropIns are paths of Watch's that are drop-in directories
	// (managed-settings.d): such a directory's *.json files, not hidden,
	// are read together as its contents, each file's name, a NUL, its
	// contents and a NUL, in name order (Change.Data), so that a file
	// added, edited or removed there is a change of it.
	DropIns []string
}

// Change is one watched file's contents as read after a change.
type Change struct {
	Path   string // absolute
	Exists bool
	Data   []byte // nil when the file does not exist or could not be read
	// Err says why an existing file could not be read (permissions, not a
	// regular file, too large). A reader must not take that for an empty
	// file: an empty config would stop every server.
	Err error
}

// A Watcher follows a few files (the config file, the rule files, a
// project's settings) and reports every change of their contents, parsed
// or not: what a change means is the caller's business.
//
// It watches each file's parent directory, not the file: editors and
// UpdateFile replace a file by a rename, which a watch on the file itself
// would not survive. A directory that does not exist yet (a project without
// .freecode) is followed through its own parent, so its creation is an
// event too. Where fsnotify fails (no inotify left, neither directory
// exists) the Watcher stat-polls until fsnotify works again. A drop-in
// directory (WatchOptions.DropIns) is watched itself too. One fsnotify
// instance serves every file: instances are a per-user kernel limit that
// every open editor window's sidecar draws on.
type Watcher struct {
	files    []*watchedFile
	opts     WatchOptions
	fsw      *fsnotify.Watcher // nil if fsnotify could not start at all
	kick     chan struct{}     // a relevant event happened; buffered 1
	repoll   chan struct{}     // the poll interval changed; buffered 1
	rewatch  chan struct{}     // a watched file's directory came or went; buffered 1
	every    atomic.Int64      // the poll interval, in nanoseconds
	polling  atomic.Bool       // fsnotify does not cover every file
	done     chan struct{}     // closed by Close
	closeOne sync.Once
	wg       sync.WaitGroup

	// watched holds the directories fsnotify was asked to watch; only Watch
	// and then the loop goroutine use it.
	watched map[string]bool

	// curMu guards cur, the contents as last read, for Current.
	curMu sync.Mutex
	cur   []Change
}

// watchedFile is one file of a Watcher.
type watchedFile struct {
	path   string   // absolute
	names  []string // path, and the file it links to if it is a link
	dropIn bool     // a drop-in directory (WatchOptions.DropIns)
	// seen is what the loop read last; only the loop goroutine uses it.
	seen fileState
}

// fileState is the identity of a file's contents at one read.
type fileState struct {
	exists bool
	data   []byte
	info   fs.FileInfo // for os.SameFile: a rename over the file is a change
	mod    time.Time
	size   int64

	readErr error
}

// Watch reads the files at paths, then follows them until ctx is done or
// Close is called. It fails only if a path is empty or cannot be made
// absolute; a file that is missing or unreadable is reported by Current and
// followed all the same. OnChange is not called for this first read.
func Watch(ctx context.Context, paths []string, opts *WatchOptions) (*Watcher, error) {
	if len(paths) == 0 {
		return nil, errors.New("watching files: no paths")
	}
	w := &Watcher{
		kick:    make(chan struct{}, 1),
		repoll:  make(chan struct{}, 1),
		rewatch: make(chan struct{}, 1),
		done:    make(chan struct{}),
		watched: make(map[string]bool),
	}
	if opts != nil {
		w.opts = *opts
	}
	if w.opts.Debounce <= 0 {
		w.opts.Debounce = DefaultDebounce
	}
	w.setEvery(w.opts.PollInterval)
	for _, p := range paths {
		if p == "" {
			return nil, errors.New("watching files: empty path")
		}
		abs, err := filepath.Abs(p)
		if err != nil {
			return nil, fmt.Errorf("watching %s: %w", p, err)
		}
		if slices.ContainsFunc(w.files, func(f *watchedFile) bool { return f.path == abs }) {
			continue
		}
		f := &watchedFile{path: abs, names: []string{abs}, dropIn: slices.ContainsFunc(w.opts.DropIns, func(d string) bool {
			da, err := filepath.Abs(d)
			return err == nil && da == abs
		})}
		// A file that is a symbolic link (dotfiles) changes where the link
		// points: watch that file's directory too.
		if real, err := filepath.EvalSymlinks(abs); err == nil && real != abs {
			f.names = append(f.names, real)
		}
		f.seen = f.read()
		w.files = append(w.files, f)
	}
	w.cur = w.snapshot()

	w.polling.Store(true)
	if !w.opts.ForcePoll {
		fsw, err := fsnotify.NewWatcher()
		if err != nil {
			w.logf("file watcher: file events unavailable, polling instead", "err", err)
		} else {
			w.fsw = fsw
			w.addDirs()
			// fsnotify's channels must be drained even while the loop is
			// busy reading files, or its reader stalls: their own goroutine.
			w.wg.Go(w.drain)
		}
	}
	w.wg.Go(func() { w.loop(ctx) })
	return w, nil
}

// Current returns every file's contents as last read, in the order of
// Watch's paths (a path given twice appears once). The slice is the
// caller's; the Data slices are shared and must not be modified.
func (w *Watcher) Current() []Change {
	w.curMu.Lock()
	defer w.curMu.Unlock()
	return slices.Clone(w.cur)
}

// SetPollInterval changes the period of the stat-poll (the config file's
// mcp.pollInterval, once it is known). Zero or less means
// DefaultPollInterval.
func (w *Watcher) SetPollInterval(d time.Duration) {
	if w.setEvery(d) {
		select {
		case w.repoll <- struct{}{}:
		default:
		}
	}
}

// setEvery stores the poll interval and reports whether it changed.
func (w *Watcher) setEvery(d time.Duration) bool {
	if d <= 0 {
		d = DefaultPollInterval
	}
	return w.every.Swap(int64(d)) != int64(d)
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

// addDirs makes fsnotify watch what the files need: each file's directory
// or, while that does not exist, the directory above it. The watcher polls
// while some file is covered by neither.
func (w *Watcher) addDirs() {
	want := make(map[string]bool)
	covered := true
	for _, f := range w.files {
		for _, name := range f.names {
			dir := filepath.Dir(name)
			err := w.fsw.Add(dir) // again even if watched: a removed directory's watch is gone
			if errors.Is(err, fs.ErrNotExist) {
				dir = filepath.Dir(dir)
				err = w.fsw.Add(dir)
			}
			if err != nil {
				if !errors.Is(err, fs.ErrNotExist) {
					w.logf("file watcher: cannot watch directory, polling instead", "dir", dir, "err", err)
				}
				covered = false
				continue
			}
			want[dir] = true
			// A drop-in directory is watched itself too: its files'
			// events are its changes.
			if fi, err := os.Stat(name); err == nil && fi.IsDir() && f.dropIn {
				if err := w.fsw.Add(name); err != nil {
					w.logf("file watcher: cannot watch directory, polling instead", "dir", name, "err", err)
					covered = false
					continue
				}
				want[name] = true
			}
		}
	}
	for dir := range w.watched {
		if !want[dir] {
			_ = w.fsw.Remove(dir) // fails if the directory is gone, and then its watch is too
		}
	}
	w.watched = want
	w.polling.Store(!covered)
}

// drain forwards the events that concern the files to the loop.
func (w *Watcher) drain() {
	for {
		select {
		case ev, ok := <-w.fsw.Events:
			if !ok {
				return
			}
			if w.relevant(filepath.Clean(ev.Name)) {
				w.signal()
			}
		case err, ok := <-w.fsw.Errors:
			if !ok {
				return
			}
			// An overflow lost events: read the files to be sure.
			w.logf("file watcher: file event error", "err", err)
			w.signal()
		}
	}
}

// relevant reports whether an event on name concerns a watched file. An
// event on a file's directory itself (made, removed, renamed) has the loop
// move the directory watches: not this goroutine, which fsnotify may need
// free to take an error while it holds the lock that Add takes.
func (w *Watcher) relevant(name string) bool {
	dirEvent, fileEvent := false, false
	for _, f := range w.files {
		for _, n := range f.names {
			switch {
			case name == n && f.dropIn: // made or removed: watch it, or not
				fileEvent, dirEvent = true, true
			case name == n, f.dropIn && filepath.Dir(name) == n:
				fileEvent = true
			case name == filepath.Dir(n):
				dirEvent = true
			}
		}
	}
	if dirEvent {
		select {
		case w.rewatch <- struct{}{}:
		default:
		}
	}
	return fileEvent || dirEvent // other files in the same directories are not ours
}

func (w *Watcher) signal() {
	select {
	case w.kick <- struct{}{}:
	default: // one pending kick is enough
	}
}

func (w *Watcher) loop(ctx context.Context) {
	debounce := time.NewTimer(time.Hour)
	debounce.Stop()
	defer debounce.Stop()
	pending := false // debounce is running
	poll := time.NewTimer(time.Duration(w.every.Load()))
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
		case <-w.rewatch:
			w.addDirs()
		case <-w.repoll:
			poll.Reset(time.Duration(w.every.Load()))
		case <-poll.C:
			if w.polling.Load() {
				if w.fsw != nil {
					w.addDirs() // a directory may exist now
				}
				// A poll faster than the debounce must not keep
				// pushing the read back.
				if w.statChanged() && !pending {
					debounce.Reset(w.opts.Debounce)
					pending = true
				}
			}
			poll.Reset(time.Duration(w.every.Load()))
		}
	}
}

// statChanged reports whether a stat shows a change of some file since it
// was read.
func (w *Watcher) statChanged() bool {
	for _, f := range w.files {
		if f.stat().changedFrom(f.seen) {
			return true
		}
	}
	return false
}

// reload reads the files and reports those whose contents changed.
func (w *Watcher) reload() {
	var changes []Change
	for _, f := range w.files {
		st := f.read()
		same := st.exists == f.seen.exists && bytes.Equal(st.data, f.seen.data) && st.readErr == nil && f.seen.readErr == nil
		f.seen = st
		if !same { // not a touch, nor a rewrite with the same bytes
			changes = append(changes, st.change(f.path))
		}
	}
	if len(changes) == 0 {
		return
	}
	cur := w.snapshot()
	w.curMu.Lock()
	w.cur = cur
	w.curMu.Unlock()
	if w.opts.OnChange != nil {
		w.opts.OnChange(changes)
	}
}

// snapshot returns the files as last read. Only Watch and the loop call it.
func (w *Watcher) snapshot() []Change {
	out := make([]Change, len(w.files))
	for i, f := range w.files {
		out[i] = f.seen.change(f.path)
	}
	return out
}

func (st fileState) change(path string) Change {
	return Change{Path: path, Exists: st.exists, Data: st.data, Err: st.readErr}
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

// stat is statState of the file, or of a drop-in directory: its *.json
// files' latest modification and their count and sizes stand for its
// contents, since a file edited in place does not change the directory.
func (f *watchedFile) stat() fileState {
	st := statState(f.path)
	if !f.dropIn || !st.exists || !st.info.IsDir() {
		return st
	}
	for _, e := range dropIns(f.path) {
		if efi, err := os.Stat(e); err == nil {
			st.size += efi.Size() + 1
			if efi.ModTime().After(st.mod) {
				st.mod = efi.ModTime()
			}
		}
	}
	return st
}

// read is readState of the file, or reads a drop-in directory (see
// WatchOptions.DropIns).
func (f *watchedFile) read() fileState {
	if !f.dropIn {
		return readState(f.path)
	}
	st := f.stat()
	if !st.exists || !st.info.IsDir() {
		return readState(f.path) // a file in its place is an error, as any
	}
	var data []byte
	for _, e := range dropIns(f.path) {
		b, err := ReadFile(e)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil && st.readErr == nil {
			st.readErr = err
		}
		data = append(append(append(append(data, e...), 0), b...), 0)
	}
	st.data = data
	return st
}

// dropIns returns the *.json files of the drop-in directory dir, not
// hidden ones, in name order.
func dropIns(dir string) []string {
	names, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	out := names[:0]
	for _, n := range names {
		if !strings.HasPrefix(filepath.Base(n), ".") {
			out = append(out, n)
		}
	}
	return out
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
