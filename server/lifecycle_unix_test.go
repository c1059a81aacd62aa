//go:build unix

package server_test

import (
	"encoding/json"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/freecode/freecode/internal/frontend"
	"github.com/freecode/freecode/internal/proctest"
	"github.com/freecode/freecode/internal/protocol"
	"github.com/freecode/freecode/server"
	"github.com/freecode/freecode/server/servertest"
)

// A serve.json left by a sidecar that died, whose pid now runs another
// process, names no sidecar: nothing answers at its address with its
// token. It keeps no new sidecar from starting, and is removed.
func TestStaleServeFileWithReusedPID(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "serve.json")
	unrelated := exec.Command("sleep", "60")
	if err := unrelated.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { unrelated.Process.Kill(); unrelated.Wait() }()
	// The dead sidecar's socket file is left too: nobody listens on it.
	sock := filepath.Join(dir, "serve.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	ln.Close()
	stale := protocol.ServeFile{Address: "unix:" + sock, PID: unrelated.Process.Pid, Token: server.NewToken()}
	b, _ := json.Marshal(stale)
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := server.CheckServeFile(path); err != nil {
		t.Errorf("CheckServeFile with a stale serve.json naming a live, unrelated pid: %v", err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the stale serve.json is still there: %v", err)
	}
	if err := syscall.Kill(unrelated.Process.Pid, 0); err != nil {
		t.Errorf("the unrelated process was signalled: %v", err)
	}
}

// A serve.json whose address another program took after the sidecar was
// killed, its pid reused meanwhile: the program takes any token and
// answers everything, but cannot prove it holds the file's. It keeps no
// new sidecar from starting, the file is removed, and the token of the
// file is not sent to it.
func TestStaleServeFileImpostor(t *testing.T) {
	path := filepath.Join(t.TempDir(), "serve.json")
	unrelated := exec.Command("sleep", "60")
	if err := unrelated.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { unrelated.Process.Kill(); unrelated.Wait() }()
	im := servertest.NewImpostor(t, "tcp", "")
	stale := protocol.ServeFile{Address: im.Address, PID: unrelated.Process.Pid, Token: server.NewToken()}
	b, _ := json.Marshal(stale)
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := server.CheckServeFile(path); err != nil {
		t.Errorf("CheckServeFile with an impostor at the address: %v", err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the stale serve.json is still there: %v", err)
	}
	if got, conns := im.Received(); conns != 1 || strings.Contains(got, stale.Token) {
		t.Errorf("the impostor took %d connections and was sent:\n%s", conns, got)
	}
}

// A signal stops the sidecar that listens cleanly: every server stopped,
// serve.json removed, exit status 0.
func TestSignal(t *testing.T) {
	servertest.Run(t, oneServer, func(t *testing.T, env *servertest.Env) {
		pid := env.Editor.AwaitStatus("srv", protocol.StateConnected).PID
		env.Signal(syscall.SIGTERM)
		if code := env.AwaitExit(); code != 0 {
			t.Errorf("exit status after SIGTERM: %d", code)
		}
		proctest.WantGone(t, pid, "after SIGTERM")
		if _, err := os.Stat(env.Sandbox.ServeFile); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("serve.json after SIGTERM: %v", err)
		}
	}, servertest.Modes(servertest.Binary))
}

// freecode-serve on stdio stops cleanly on SIGTERM while the editor still
// holds stdin open: status 0, its server gone.
func TestBinaryStdioSignal(t *testing.T) {
	binaryStdio(t, func(t *testing.T, _ *frontend.Client, cmd *exec.Cmd) {
		if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
	}, 0)
}
