package config

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

type change struct {
	cfg *Config
	err error
}

// hangGuard only stops a broken test from hanging; no test relies on it.
const hangGuard = 20 * time.Second

func next(t *testing.T, ch <-chan change) change {
	t.Helper()
	select {
	case c := <-ch:
		return c
	case <-time.After(hangGuard):
		t.Fatalf("no change reported within %v", hangGuard)
		return change{}
	}
}

func names(c *Config) []string {
	if c == nil {
		return nil
	}
	var n []string
	for _, s := range c.MCP.Servers {
		n = append(n, s.Name)
	}
	return n
}

func TestWatchFileEvents(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config.json")
	if err := os.WriteFile(path, []byte(`{"model": "m"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	ch := make(chan change, 16)
	w, err := Watch(t.Context(), path, &WatchOptions{
		OnChange:     func(cfg *Config, err error) { ch <- change{cfg, err} },
		PollInterval: time.Hour, // events only
	})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if w.polling.Load() {
		t.Fatal("watcher is polling; want file events")
	}
	if w.Err() != nil || len(w.Last().MCP.Servers) != 0 {
		t.Fatalf("first read: %v, %v", w.Last(), w.Err())
	}

	// An atomic replace (rename over the file), as UpdateFile does.
	if err := AddServer(path, Server{Name: "a", Type: TypeLocal, Enabled: true, Command: []string{"a"}}); err != nil {
		t.Fatal(err)
	}
	if c := next(t, ch); c.err != nil || !cmp.Equal(names(c.cfg), []string{"a"}) {
		t.Fatalf("after AddServer: %v, %v; want server a", names(c.cfg), c.err)
	}

	// Other files in the directory are not the config.
	if err := os.WriteFile(filepath.Join(dir, "other.json"), []byte("garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	// An in-place write that breaks the file: reported, last good kept.
	if err := os.WriteFile(path, []byte(`{"mcp": {"servers": [`), 0o600); err != nil {
		t.Fatal(err)
	}
	c := next(t, ch)
	var pe *ParseError
	if !errors.As(c.err, &pe) || c.cfg != nil {
		t.Fatalf("after a broken write: %v, %v; want a nil config and a *ParseError", c.cfg, c.err)
	}
	if !cmp.Equal(names(w.Last()), []string{"a"}) || !errors.As(w.Err(), &pe) {
		t.Errorf("Last() = %v, Err() = %v; want the last good config and the parse error", names(w.Last()), w.Err())
	}

	// Fixed again.
	if err := os.WriteFile(path, []byte(`{"mcp": {"servers": [{"name": "b", "command": "b"}]}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if c := next(t, ch); c.err != nil || !cmp.Equal(names(c.cfg), []string{"b"}) {
		t.Fatalf("after the fix: %v, %v; want server b", names(c.cfg), c.err)
	}
	if w.Err() != nil {
		t.Errorf("Err() after the fix = %v", w.Err())
	}

	// Removed: no servers.
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if c := next(t, ch); c.err != nil || c.cfg == nil || len(c.cfg.MCP.Servers) != 0 {
		t.Fatalf("after removal: %v, %v; want an empty config", c.cfg, c.err)
	}
}

func TestWatchBadFirstRead(t *testing.T) {
	path := writeFile(t, `{"mcp": {"servers": [{"name": "a__b", "command": "x"}]}}`, 0o600)
	ch := make(chan change, 4)
	w, err := Watch(t.Context(), path, &WatchOptions{OnChange: func(c *Config, err error) { ch <- change{c, err} }})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	var ve *ValidationError
	if !errors.As(w.Err(), &ve) {
		t.Errorf("Err() = %v, want a *ValidationError", w.Err())
	}
	if diff := cmp.Diff(defaults(), w.Last()); diff != "" {
		t.Errorf("Last() after a bad first read (-want +got):\n%s", diff)
	}
	if err := RemoveServer(path, "a__b"); err != nil {
		t.Fatal(err)
	}
	if c := next(t, ch); c.err != nil || c.cfg == nil {
		t.Fatalf("after the fix: %v, %v", c.cfg, c.err)
	}
}

// recorder collects OnChange calls for synctest tests, which read it only
// after synctest.Wait.
type recorder struct {
	mu  sync.Mutex
	got []change
}

func (r *recorder) on(cfg *Config, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, change{cfg, err})
}

func (r *recorder) calls() []change {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]change(nil), r.got...)
}

func TestWatchPolling(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// The directory does not exist yet: fsnotify could not watch it.
		path := filepath.Join(t.TempDir(), "later", "config.json")
		var r recorder
		w, err := Watch(t.Context(), path, &WatchOptions{OnChange: r.on, ForcePoll: true, PollInterval: time.Second})
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
		if got := r.calls(); len(got) != 1 || !cmp.Equal(names(got[0].cfg), []string{"a"}) {
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
		if got := r.calls(); len(got) != 2 || got[1].cfg == nil || got[1].cfg.MCP.Servers[0].Enabled {
			t.Fatalf("after SetEnabled: %v, want a second call with a disabled", got)
		}
	})
}

func TestWatchDebounce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		path := writeFile(t, `{}`, 0o600)
		var r recorder
		w, err := Watch(t.Context(), path, &WatchOptions{OnChange: r.on, ForcePoll: true, PollInterval: time.Hour})
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
		if got := r.calls(); len(got) != 1 || !cmp.Equal(names(got[0].cfg), []string{"a"}) {
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
	w, err := Watch(ctx, filepath.Join(t.TempDir(), "config.json"), nil)
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	w.Close() // returns only once the goroutines have ended; goleak checks the rest
	w.Close()
	if _, err := Watch(ctx, "", nil); err == nil {
		t.Error("Watch with an empty path: no error")
	}
}

func TestWatchPollIntervalFromConfig(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		path := writeFile(t, `{"mcp": {"pollInterval": 3000}}`, 0o600)
		var r recorder
		w, err := Watch(t.Context(), path, &WatchOptions{OnChange: r.on, ForcePoll: true})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		if err := os.WriteFile(path, []byte(`{"mcp": {"pollInterval": 3000, "maxResultChars": 7}}`), 0o600); err != nil {
			t.Fatal(err)
		}
		time.Sleep(3*time.Second - time.Millisecond)
		synctest.Wait()
		if n := len(r.calls()); n != 0 {
			t.Fatalf("%d calls before mcp.pollInterval passed, want 0", n)
		}
		time.Sleep(time.Millisecond + DefaultDebounce)
		synctest.Wait()
		if got := r.calls(); len(got) != 1 || got[0].cfg == nil || got[0].cfg.MCP.MaxResultChars != 7 {
			t.Fatalf("after mcp.pollInterval: %v, want one call with the new config", got)
		}
	})
}

// A config that is a symbolic link into another directory (dotfiles): an
// edit of the target, through the link, is seen.
func TestWatchSymlinkedFile(t *testing.T) {
	target := writeFile(t, `{}`, 0o600)
	link := filepath.Join(t.TempDir(), "config.json")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	ch := make(chan change, 4)
	w, err := Watch(t.Context(), link, &WatchOptions{OnChange: func(c *Config, err error) { ch <- change{c, err} }, PollInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := AddServer(link, Server{Name: "a", Type: TypeLocal, Enabled: true, Command: []string{"a"}}); err != nil {
		t.Fatal(err)
	}
	if c := next(t, ch); c.err != nil || !cmp.Equal(names(c.cfg), []string{"a"}) {
		t.Fatalf("after an edit through the link: %v, %v; want server a", names(c.cfg), c.err)
	}
}

// The directory is removed and made again: the watcher keeps following.
func TestWatchDirectoryRecreated(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "fc")
	path := filepath.Join(dir, "config.json")
	if err := AddServer(path, Server{Name: "a", Type: TypeLocal, Enabled: true, Command: []string{"a"}}); err != nil {
		t.Fatal(err)
	}
	ch := make(chan change, 8)
	w, err := Watch(t.Context(), path, &WatchOptions{OnChange: func(c *Config, err error) { ch <- change{c, err} }, PollInterval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if c := next(t, ch); c.err != nil || len(names(c.cfg)) != 0 {
		t.Fatalf("after removing the directory: %v, %v; want an empty config", names(c.cfg), c.err)
	}
	if err := AddServer(path, Server{Name: "b", Type: TypeLocal, Enabled: true, Command: []string{"b"}}); err != nil {
		t.Fatal(err)
	}
	if c := next(t, ch); c.err != nil || !cmp.Equal(names(c.cfg), []string{"b"}) {
		t.Fatalf("after making it again: %v, %v; want server b", names(c.cfg), c.err)
	}
	// Back on file events: a later edit is seen too.
	if err := SetEnabled(path, "b", false); err != nil {
		t.Fatal(err)
	}
	if c := next(t, ch); c.err != nil || c.cfg == nil || c.cfg.MCP.Servers[0].Enabled {
		t.Fatalf("after SetEnabled: %v, %v", c.cfg, c.err)
	}
}

// A poll faster than the debounce still lets the debounce fire.
func TestWatchFastPoll(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		path := writeFile(t, `{}`, 0o600)
		var r recorder
		w, err := Watch(t.Context(), path, &WatchOptions{OnChange: r.on, ForcePoll: true, PollInterval: DefaultDebounce / 5})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		if err := os.Remove(path); err != nil {
			t.Fatal(err)
		}
		time.Sleep(DefaultDebounce/5 + DefaultDebounce)
		synctest.Wait()
		if got := r.calls(); len(got) != 1 || got[0].err != nil || got[0].cfg == nil {
			t.Fatalf("after removal: %v, want one call with an empty config", got)
		}
	})
}
