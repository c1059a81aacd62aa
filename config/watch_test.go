package config

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	_ "github.com/freecode/freecode/internal/racetest" // helper processes exit without the race runtime's pause
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// hangGuard only stops a broken test from hanging; no test relies on it.
const hangGuard = 20 * time.Second

// next returns the next OnChange call's changes.
func next(t *testing.T, ch <-chan []Change) []Change {
	t.Helper()
	select {
	case c := <-ch:
		return c
	case <-time.After(hangGuard):
		t.Fatalf("no change reported within %v", hangGuard)
		return nil
	}
}

// one returns the only change of a call.
func one(t *testing.T, cs []Change) Change {
	t.Helper()
	if len(cs) != 1 {
		t.Fatalf("%d changes in one call, want 1: %+v", len(cs), cs)
	}
	return cs[0]
}

// servers returns the names of the servers of a changed config file.
func servers(t *testing.T, c Change) []string {
	t.Helper()
	if c.Err != nil || !c.Exists {
		t.Fatalf("change of %s: exists %v, err %v; want contents", c.Path, c.Exists, c.Err)
	}
	cfg, err := Parse(c.Path, c.Data)
	if err != nil {
		t.Fatalf("change of %s: %v", c.Path, err)
	}
	return names(cfg)
}

func names(c *Config) []string {
	var n []string
	for _, s := range c.MCP.Servers {
		n = append(n, s.Name)
	}
	return n
}

// watch starts a Watcher whose OnChange calls go to the returned channel.
func watch(t *testing.T, paths []string, opts WatchOptions) (*Watcher, <-chan []Change) {
	t.Helper()
	ch := make(chan []Change, 16)
	opts.OnChange = func(cs []Change) { ch <- cs }
	w, err := Watch(t.Context(), paths, &opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return w, ch
}

func TestWatchFileEvents(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config.json")
	if err := os.WriteFile(path, []byte(`{"model": "m"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	w, ch := watch(t, []string{path}, WatchOptions{PollInterval: time.Hour}) // events only
	if w.polling.Load() {
		t.Fatal("watcher is polling; want file events")
	}
	want := []Change{{Path: path, Exists: true, Data: []byte(`{"model": "m"}`)}}
	if diff := cmp.Diff(want, w.Current()); diff != "" {
		t.Fatalf("first read (-want +got):\n%s", diff)
	}

	// An atomic replace (rename over the file), as UpdateFile does.
	if err := AddServer(path, Server{Name: "a", Type: TypeLocal, Enabled: true, Command: []string{"a"}}); err != nil {
		t.Fatal(err)
	}
	if got := servers(t, one(t, next(t, ch))); !cmp.Equal(got, []string{"a"}) {
		t.Fatalf("after AddServer: servers %v, want a", got)
	}

	// Other files in the directory are not watched; an in-place write is.
	if err := os.WriteFile(filepath.Join(dir, "other.json"), []byte("garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(`{"mcp": {"servers": [`), 0o600); err != nil {
		t.Fatal(err)
	}
	c := one(t, next(t, ch))
	if diff := cmp.Diff(Change{Path: path, Exists: true, Data: []byte(`{"mcp": {"servers": [`)}, c); diff != "" {
		t.Fatalf("after an in-place write (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]Change{c}, w.Current()); diff != "" {
		t.Errorf("Current after the write (-want +got):\n%s", diff)
	}

	// Removed.
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(Change{Path: path}, one(t, next(t, ch))); diff != "" {
		t.Fatalf("after removal (-want +got):\n%s", diff)
	}
}

// Files in several directories, one of which does not exist yet (a project
// without .freecode): its creation is an event, through the directory
// above it, without polling. Changes within one debounce come together.
func TestWatchSeveralFiles(t *testing.T) {
	user := filepath.Join(t.TempDir(), "config.json")
	project := t.TempDir()
	settings := filepath.Join(project, ".freecode", "settings.json")
	local := filepath.Join(project, ".freecode", "settings.local.json")
	w, ch := watch(t, []string{user, settings, local, user}, WatchOptions{PollInterval: time.Hour})
	if w.polling.Load() {
		t.Fatal("watcher is polling; want file events through the project directory")
	}
	if diff := cmp.Diff([]Change{{Path: user}, {Path: settings}, {Path: local}}, w.Current()); diff != "" {
		t.Fatalf("first read (-want +got):\n%s", diff)
	}

	if err := AddServer(settings, Server{Name: "p", Type: TypeLocal, Enabled: true, Command: []string{"p"}}); err != nil {
		t.Fatal(err)
	}
	c := one(t, next(t, ch))
	if c.Path != settings || !cmp.Equal(servers(t, c), []string{"p"}) {
		t.Fatalf("after making .freecode/settings.json: %+v", c)
	}

	// Now inside the directory's own watch: two files at once.
	if err := os.WriteFile(local, []byte(`{}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(user, []byte(`{}`), 0o600); err != nil {
		t.Fatal(err)
	}
	var got []string
	for len(got) < 2 {
		for _, c := range next(t, ch) {
			got = append(got, c.Path)
		}
	}
	slices.Sort(got) // one call, or two if the debounce fell between the writes
	want := []string{user, local}
	slices.Sort(want)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("files reported after two writes (-want +got):\n%s", diff)
	}
}

// A file that exists but cannot be read is reported with the error, never
// as missing or empty.
func TestWatchUnreadable(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "settings.json")
	w, ch := watch(t, []string{path}, WatchOptions{PollInterval: time.Hour})
	if err := os.Mkdir(path, 0o700); err != nil { // a directory where the file should be
		t.Fatal(err)
	}
	c := one(t, next(t, ch))
	if !c.Exists || c.Err == nil || c.Data != nil {
		t.Fatalf("a directory in the file's place: %+v; want Exists and an error", c)
	}
	if cur := w.Current(); len(cur) != 1 || cur[0].Err == nil {
		t.Errorf("Current = %+v", cur)
	}
}

// recorder collects OnChange calls for synctest tests, which read it only
// after synctest.Wait.
type recorder struct {
	mu  sync.Mutex
	got [][]Change
}

func (r *recorder) on(cs []Change) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, cs)
}

func (r *recorder) calls() [][]Change {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([][]Change(nil), r.got...)
}

func TestWatchPolling(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// The directory does not exist yet.
		path := filepath.Join(t.TempDir(), "later", "config.json")
		var r recorder
		w, err := Watch(t.Context(), []string{path}, &WatchOptions{OnChange: r.on, ForcePoll: true, PollInterval: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()

		if err := AddServer(path, Server{Name: "a", Type: TypeLocal, Enabled: true, Command: []string{"a"}}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Second - time.Millisecond)
		synctest.Wait()
		if n := len(r.calls()); n != 0 {
			t.Fatalf("%d calls before the first poll, want 0", n)
		}
		time.Sleep(time.Millisecond + DefaultDebounce)
		synctest.Wait()
		if got := r.calls(); len(got) != 1 || !cmp.Equal(servers(t, one(t, got[0])), []string{"a"}) {
			t.Fatalf("after one poll: %v, want one call with server a", got)
		}

		// Nothing changes: no call.
		time.Sleep(5 * time.Second)
		synctest.Wait()
		if n := len(r.calls()); n != 1 {
			t.Fatalf("%d calls while nothing changed, want 1", n)
		}

		if err := SetEnabled(path, "a", false); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Second + DefaultDebounce)
		synctest.Wait()
		got := r.calls()
		if len(got) != 2 {
			t.Fatalf("after SetEnabled: %d calls, want 2", len(got))
		}
		if cfg, err := Parse(path, one(t, got[1]).Data); err != nil || cfg.MCP.Servers[0].Enabled {
			t.Fatalf("after SetEnabled: %v, %v; want a disabled", cfg, err)
		}
	})
}

func TestWatchDebounce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		path := writeFile(t, `{}`, 0o600)
		var r recorder
		w, err := Watch(t.Context(), []string{path}, &WatchOptions{OnChange: r.on, ForcePoll: true, PollInterval: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		if err := AddServer(path, Server{Name: "a", Type: TypeLocal, Enabled: true, Command: []string{"a"}}); err != nil {
			t.Fatal(err)
		}
		// A burst of events, as an editor's save makes: one read, after
		// the burst has been quiet for the debounce time.
		for range 5 {
			w.signal()
			time.Sleep(DefaultDebounce / 2)
		}
		synctest.Wait()
		if n := len(r.calls()); n != 0 {
			t.Fatalf("%d calls during the burst, want 0", n)
		}
		time.Sleep(DefaultDebounce / 2)
		synctest.Wait()
		if got := r.calls(); len(got) != 1 || !cmp.Equal(servers(t, one(t, got[0])), []string{"a"}) {
			t.Fatalf("after the burst: %v, want one call with server a", got)
		}
		// An event without a change of contents (a touch): no call.
		w.signal()
		time.Sleep(2 * DefaultDebounce)
		synctest.Wait()
		if n := len(r.calls()); n != 1 {
			t.Fatalf("%d calls after a touch, want 1", n)
		}
	})
}

func TestWatchStopsWithContext(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	w, err := Watch(ctx, []string{filepath.Join(t.TempDir(), "config.json")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	w.Close() // returns only once the goroutines have ended; goleak checks the rest
	w.Close()
	for _, paths := range [][]string{nil, {""}} {
		if _, err := Watch(t.Context(), paths, nil); err == nil {
			t.Errorf("Watch(%q): no error", paths)
		}
	}
}

// SetPollInterval takes effect at once, from the moment it is called (the
// workspace sets the config's mcp.pollInterval right after the first read).
func TestWatchSetPollInterval(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		path := writeFile(t, `{}`, 0o600)
		var r recorder
		w, err := Watch(t.Context(), []string{path}, &WatchOptions{OnChange: r.on, ForcePoll: true})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		w.SetPollInterval(3 * time.Second)
		if err := os.WriteFile(path, []byte(`{"mcp": {"maxResultChars": 7}}`), 0o600); err != nil {
			t.Fatal(err)
		}
		time.Sleep(3*time.Second - time.Millisecond)
		synctest.Wait()
		if n := len(r.calls()); n != 0 {
			t.Fatalf("%d calls before the interval passed, want 0", n)
		}
		time.Sleep(time.Millisecond + DefaultDebounce)
		synctest.Wait()
		if got := r.calls(); len(got) != 1 || string(one(t, got[0]).Data) != `{"mcp": {"maxResultChars": 7}}` {
			t.Fatalf("after the interval: %v, want one call with the new contents", got)
		}
	})
}

// A file that is a symbolic link into another directory (dotfiles): an
// edit of the target, through the link, is seen.
func TestWatchSymlinkedFile(t *testing.T) {
	target := writeFile(t, `{}`, 0o600)
	link := filepath.Join(t.TempDir(), "config.json")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	_, ch := watch(t, []string{link}, WatchOptions{PollInterval: time.Hour})
	if err := AddServer(link, Server{Name: "a", Type: TypeLocal, Enabled: true, Command: []string{"a"}}); err != nil {
		t.Fatal(err)
	}
	if got := servers(t, one(t, next(t, ch))); !cmp.Equal(got, []string{"a"}) {
		t.Fatalf("after an edit through the link: servers %v, want a", got)
	}
}

// The directory is removed and made again: the watcher keeps following,
// on file events (the poll would take an hour).
func TestWatchDirectoryRecreated(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "fc")
	path := filepath.Join(dir, "config.json")
	if err := AddServer(path, Server{Name: "a", Type: TypeLocal, Enabled: true, Command: []string{"a"}}); err != nil {
		t.Fatal(err)
	}
	_, ch := watch(t, []string{path}, WatchOptions{PollInterval: time.Hour})
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if c := one(t, next(t, ch)); c.Exists {
		t.Fatalf("after removing the directory: %+v; want the file gone", c)
	}
	if err := AddServer(path, Server{Name: "b", Type: TypeLocal, Enabled: true, Command: []string{"b"}}); err != nil {
		t.Fatal(err)
	}
	if got := servers(t, one(t, next(t, ch))); !cmp.Equal(got, []string{"b"}) {
		t.Fatalf("after making it again: servers %v, want b", got)
	}
	if err := SetEnabled(path, "b", false); err != nil {
		t.Fatal(err)
	}
	c := one(t, next(t, ch))
	if cfg, err := Parse(path, c.Data); err != nil || cfg.MCP.Servers[0].Enabled {
		t.Fatalf("after SetEnabled: %v, %v", cfg, err)
	}
}

// A poll faster than the debounce still lets the debounce fire.
func TestWatchFastPoll(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		path := writeFile(t, `{}`, 0o600)
		var r recorder
		w, err := Watch(t.Context(), []string{path}, &WatchOptions{OnChange: r.on, ForcePoll: true, PollInterval: DefaultDebounce / 5})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		if err := os.Remove(path); err != nil {
			t.Fatal(err)
		}
		time.Sleep(DefaultDebounce/5 + DefaultDebounce)
		synctest.Wait()
		if got := r.calls(); len(got) != 1 || one(t, got[0]).Exists {
			t.Fatalf("after removal: %v, want one call with the file gone", got)
		}
	})
}
