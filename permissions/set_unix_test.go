//go:build unix

package permissions

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestLoadFIFO: a project rule file that is a FIFO is refused, not read.
func TestLoadFIFO(t *testing.T) {
	// Opening a FIFO with no writer blocks: Load must refuse it
	// instead (a link to /dev/stdin would steal the sidecar's input).
	opts := files(t, rules(``, ``, `"grep"`), "", "", false)
	path := filepath.Join(opts.ProjectDir, ".freecode", SettingsFile)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skipf("no FIFOs: %v", err)
	}
	done := make(chan error, 1)
	var s *Set
	go func() {
		var err error
		s, _, err = Load(opts)
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("Load error = %v, want not a regular file", err)
		}
		if got := summarize(s.Decide("grep", "", true)); got != (decided{"deny", "grep", "user"}) {
			t.Errorf("the user's rules beside a FIFO: %v", got)
		}
	case <-time.After(time.Minute): // hang guard only
		// Unblock the opener so the test can end.
		if f, err := os.OpenFile(path, os.O_WRONLY, 0); err == nil {
			f.Close()
		}
		t.Fatal("Load blocked on a FIFO")
	}
}
