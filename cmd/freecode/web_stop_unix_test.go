//go:build unix

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/freecode/freecode/internal/protocol"
)

// `freecode web` says how to stop the sidecar it leaves running, and
// `freecode web --stop` does: the sidecar shuts down, its serve.json goes,
// and a second --stop finds nothing to stop. Before, nothing said how,
// and no command did it.
func TestWebStop(t *testing.T) {
	e := newLiveEnv(t)
	serveFile := filepath.Join(e.home, ".freecode", "serve.json")
	out, errOut := runWeb(t, e, nil, "--no-browser")
	sf, err := protocol.ReadServeFile(serveFile)
	if err != nil {
		t.Fatalf("no serve.json after freecode web: %v\n%s", err, errOut)
	}
	t.Cleanup(func() {
		if syscall.Kill(sf.PID, 0) == nil {
			stopSidecar(t, serveFile, sf.PID)
		}
	})
	if want := "stop it with: freecode --config " + e.cfg + " web --stop\n"; !strings.Contains(out, want) {
		t.Errorf("freecode web does not say %q:\n%s", want, out)
	}

	stop := func() string {
		t.Helper()
		cmd := exec.Command(freecodeBin, "--config", e.cfg, "web", "--stop")
		cmd.Env = append(os.Environ(), "HOME="+e.home)
		b, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("freecode web --stop: %v\n%s", err, b)
		}
		return string(b)
	}
	if out := stop(); !strings.HasPrefix(out, "Stopped: Sidecar pid ") {
		t.Errorf("freecode web --stop:\n%s", out)
	}
	if _, err := os.Stat(serveFile); !os.IsNotExist(err) {
		t.Errorf("serve.json after --stop: %v", err)
	}
	gone := false
	for deadline := time.Now().Add(hangGuard); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		var ws syscall.WaitStatus
		syscall.Wait4(sf.PID, &ws, syscall.WNOHANG, nil) // a zombie of this process, if it is the subreaper
		if syscall.Kill(sf.PID, 0) != nil {
			gone = true
			break
		}
	}
	if !gone {
		t.Errorf("the sidecar (pid %d) still runs after --stop", sf.PID)
	}
	if out := stop(); !strings.HasPrefix(out, "Nothing to stop: no sidecar serves") {
		t.Errorf("a second --stop:\n%s", out)
	}
}
