package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/freecode/freecode/config"
	"github.com/freecode/freecode/internal/frontend"
	"github.com/freecode/freecode/internal/protocol"
)

// The organization's managed settings are read from one place only,
// config.ManagedDir (/etc/freecode here), which nothing a user sets
// moves. So the tests of the policy run FreeCode's built binaries in a
// mount namespace in which /etc/freecode is a directory of the test:
// the real path, read by the real code, with no override that a user
// could use too. bubblewrap makes the namespace: the root as it is, /etc
// a tmpfs holding a bind of each of the host's entries (so the user
// database, DNS and certificates still work), and the test's directory
// bound at /etc/freecode. The host's /etc is never written.

// managedNS is one test's namespace and the user's files in it: a HOME
// with the config file in it, and a project.
type managedNS struct {
	dir     string // bound over /etc/freecode: the test writes the policy here
	home    string
	cfg     string // home/.freecode/config.json
	project string
	// argv is bwrap and its arguments, up to the command.
	argv []string
}

// managedFile is the managed file as the binaries in the namespace name
// it, which every refusal must name.
var managedFile = filepath.Join(config.ManagedDir(), config.ManagedSettingsName)

// newManagedNS makes a namespace with an empty policy directory (no
// policy), or skips the test where bubblewrap cannot make one; under
// CI=true, where it must run, a bwrap that is there but fails fails the
// test instead.
func newManagedNS(t *testing.T) *managedNS {
	t.Helper()
	if config.ManagedDir() != "/etc/freecode" {
		t.Fatalf("the managed directory is %s; these tests bind /etc/freecode", config.ManagedDir())
	}
	bwrap, err := exec.LookPath("bwrap")
	if err != nil {
		t.Skip("bubblewrap is not installed (make test installs it): the managed settings' tests need it to bind a directory over /etc/freecode")
	}
	base := t.TempDir()
	ns := &managedNS{
		dir:     filepath.Join(base, "etc-freecode"),
		home:    filepath.Join(base, "home"),
		project: filepath.Join(base, "project"),
	}
	ns.cfg = filepath.Join(ns.home, ".freecode", "config.json")
	for _, d := range []string{ns.dir, filepath.Dir(ns.cfg), ns.project} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	ns.argv, err = nsArgv(bwrap, ns.dir)
	if err != nil {
		t.Fatal(err)
	}
	// One run of cat proves the namespace works here: bwrap can be
	// missing its user namespace (unprivileged, where they are not
	// allowed), or the kernel can refuse a mount.
	probe := filepath.Join(ns.dir, "probe")
	if err := os.WriteFile(probe, []byte("bound"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := ns.command(t.Context(), "cat", "/etc/freecode/probe").CombinedOutput()
	os.Remove(probe)
	if err != nil || string(out) != "bound" {
		msg := fmt.Sprintf("bwrap cannot bind a directory over /etc/freecode here (%v): %s", err, out)
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return ns
}

// nsArgv is the bwrap command line that binds dir over /etc/freecode.
// bwrap takes every source from the root as it was, so the host's /etc
// entries are bound into the tmpfs after it is mounted.
func nsArgv(bwrap, dir string) ([]string, error) {
	ents, err := os.ReadDir("/etc")
	if err != nil {
		return nil, err
	}
	argv := []string{bwrap, "--dev-bind", "/", "/", "--tmpfs", "/etc"}
	for _, e := range ents {
		p := filepath.Join("/etc", e.Name())
		switch {
		case e.Name() == "freecode":
			// A policy of the host's own is not the test's.
			continue
		case e.Type()&os.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return nil, err
			}
			argv = append(argv, "--symlink", target, p)
		default:
			argv = append(argv, "--bind", p, p)
		}
	}
	return append(argv, "--bind", dir, "/etc/freecode", "--die-with-parent", "--"), nil
}

// command is name run with args in the namespace: in the project, with
// HOME the test's and no FREECODE_CONFIG of the caller's. Ending ctx
// kills bwrap, and with it (--die-with-parent) the command.
func (ns *managedNS) command(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, ns.argv[0], append(append(ns.argv[1:len(ns.argv):len(ns.argv)], name), args...)...)
	cmd.Dir = ns.project
	cmd.Env = append(withoutVars(os.Environ(), "HOME", "FREECODE_CONFIG"), "HOME="+ns.home)
	return cmd
}

// withoutVars drops the variables names from env.
func withoutVars(env []string, names ...string) []string {
	var out []string
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		keep := true
		for _, n := range names {
			keep = keep && name != n
		}
		if keep {
			out = append(out, kv)
		}
	}
	return out
}

// writePolicy replaces the managed file, as a configuration tool does: a
// new file renamed over the old, which the sidecar's watch sees.
func (ns *managedNS) writePolicy(t *testing.T, policy string) {
	t.Helper()
	tmp := filepath.Join(ns.dir, ".managed-settings.json.new")
	if err := os.WriteFile(tmp, []byte(policy), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(ns.dir, config.ManagedSettingsName)); err != nil {
		t.Fatal(err)
	}
}

// writeJSONFile writes v as JSON to path, making its directory.
func writeJSONFile(t *testing.T, path string, v any) {
	t.Helper()
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// writeServers writes the config file with servers as its mcp.servers.
func (ns *managedNS) writeServers(t *testing.T, servers ...map[string]any) {
	t.Helper()
	writeJSONFile(t, ns.cfg, map[string]any{"mcp": map[string]any{"servers": servers}})
}

// markedServer is an entry of the demo server (with args) named name, behind
// a shell that first writes its pid to marker: the marker exists if and
// only if the server was ever started, and holds the pid of its process
// (the shell execs the server).
func markedServer(name, marker string, args ...string) map[string]any {
	return map[string]any{"name": name, "command": markedArgv(marker, args...)}
}

func markedArgv(marker string, args ...string) []string {
	return append([]string{"sh", "-c", `echo $$ >"$0"; exec "$@"`, marker, demoServer}, args...)
}

// marker is the path of the marker of the server name.
func (ns *managedNS) marker(name string) string {
	return filepath.Join(filepath.Dir(ns.home), "started-"+name)
}

// wantStarted checks each server's marker: present for those in started,
// absent for those in never.
func (ns *managedNS) wantStarted(t *testing.T, started, never []string) {
	t.Helper()
	for _, name := range started {
		if _, err := os.Stat(ns.marker(name)); err != nil {
			t.Errorf("server %q was never started (the positive control): %v", name, err)
		}
	}
	for _, name := range never {
		if _, err := os.Stat(ns.marker(name)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("server %q, which the policy blocks, was started (its marker: %v)", name, err)
		}
	}
}

// cli runs the freecode binary with --config in the namespace and returns
// what it printed and its exit code.
func (ns *managedNS) cli(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), hangGuard)
	defer cancel()
	cmd := ns.command(ctx, freecodeBin, append([]string{"--config", ns.cfg}, args...)...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee) && ctx.Err() == nil:
		code = ee.ExitCode()
	case err != nil:
		t.Fatalf("freecode %s: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), err, o.String(), e.String())
	}
	return o.String(), e.String(), code
}

// mustCLI is cli, failing the test unless the command exits 0.
func (ns *managedNS) mustCLI(t *testing.T, args ...string) string {
	t.Helper()
	out, errOut, code := ns.cli(t, args...)
	if code != 0 {
		t.Fatalf("freecode %s: exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, out, errOut)
	}
	return out
}

var (
	serveOnce sync.Once
	serveBin  string
	serveErr  error
)

// freecodeServe returns the freecode-serve binary, built once beside the
// binaries TestMain builds (and removed with them).
func freecodeServe(t *testing.T) string {
	t.Helper()
	serveOnce.Do(func() {
		serveBin = filepath.Join(filepath.Dir(freecodeBin), "freecode-serve")
		if out, err := exec.Command("go", "build", "-o", serveBin, "../freecode-serve").CombinedOutput(); err != nil {
			serveErr = fmt.Errorf("building freecode-serve: %v\n%s", err, out)
		}
	})
	if serveErr != nil {
		t.Fatal(serveErr)
	}
	return serveBin
}

// nsSidecar is freecode-serve over stdio in the namespace, as an editor
// runs it, driven by the repository's frontend client: it keeps every
// notification for the test to await and answers permission requests
// with the decision set.
type nsSidecar struct {
	*frontend.Client
	t      *testing.T
	stderr notifyBuffer // the sidecar's log
	exited chan struct{}

	// mu guards the fields below.
	mu      sync.Mutex
	notes   []frontend.Notification
	prompts []protocol.PermissionRequest
	changed chan struct{} // closed and replaced when a note or a prompt comes
	answer  protocol.PermissionDecision
}

// startSidecar runs freecode-serve for the namespace's config and
// project, initialized; the test's end shuts it down.
func (ns *managedNS) startSidecar(t *testing.T) *nsSidecar {
	t.Helper()
	sc := &nsSidecar{t: t, exited: make(chan struct{}), changed: make(chan struct{}), answer: protocol.Deny}
	cmd := ns.command(context.Background(), freecodeServe(t), "--config", ns.cfg, "--project", ns.project, "--log-level", "debug", "--log-format", "text")
	cmd.Stderr = &sc.stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		cmd.Wait()
		close(sc.exited)
	}()
	sc.Client = frontend.New(stdioPipes{stdout, stdin}, &frontend.Options{
		ClientName: "managed-test", Folders: []string{ns.project}, ConfigPath: ns.cfg,
		OnNotification: sc.note, OnPermission: sc.prompt,
	})
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
		defer cancel()
		if err := sc.Shutdown(ctx); err == nil {
			sc.Exit(ctx)
		}
		sc.Close()
		select {
		case <-sc.exited:
		case <-time.After(hangGuard):
			t.Errorf("freecode-serve did not exit within %v of exit", hangGuard)
			cmd.Process.Kill()
			<-sc.exited
		}
		if t.Failed() {
			t.Logf("freecode-serve's log:\n%s", sc.stderr.String())
		}
	})
	if _, err := sc.Initialize(t.Context()); err != nil {
		t.Fatalf("initialize: %v\n%s", err, sc.stderr.String())
	}
	return sc
}

// stdioPipes is a process's stdout and stdin as one connection.
type stdioPipes struct {
	io.ReadCloser
	io.WriteCloser
}

// Close closes both: the process reads EOF, and reading ends.
func (p stdioPipes) Close() error {
	return errors.Join(p.WriteCloser.Close(), p.ReadCloser.Close())
}

func (sc *nsSidecar) note(n frontend.Notification) {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	sc.notes = append(sc.notes, n)
	close(sc.changed)
	sc.changed = make(chan struct{})
}

func (sc *nsSidecar) prompt(_ context.Context, req *protocol.PermissionRequest) (*protocol.PermissionResponse, error) {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	sc.prompts = append(sc.prompts, *req)
	close(sc.changed)
	sc.changed = make(chan struct{})
	resp := &protocol.PermissionResponse{Decision: sc.answer}
	if sc.answer == protocol.AllowAlways {
		resp.Scope = protocol.ScopeUser
	}
	return resp, nil
}

// setAnswer sets the decision the permission requests to come get.
func (sc *nsSidecar) setAnswer(d protocol.PermissionDecision) {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	sc.answer = d
}

// promptsSoFar returns the permission requests the sidecar made.
func (sc *nsSidecar) promptsSoFar() []protocol.PermissionRequest {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	return append([]protocol.PermissionRequest(nil), sc.prompts...)
}

// mark returns how many notifications came so far, for awaitFrom.
func (sc *nsSidecar) mark() int {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	return len(sc.notes)
}

// awaitFrom waits for a notification past the first from for which match
// is true, and returns it; what names it in the failure.
func (sc *nsSidecar) awaitFrom(from int, what string, match func(frontend.Notification) bool) frontend.Notification {
	sc.t.Helper()
	timer := time.NewTimer(hangGuard)
	defer timer.Stop()
	for {
		sc.mu.Lock()
		for _, n := range sc.notes[from:] {
			if match(n) {
				sc.mu.Unlock()
				return n
			}
		}
		from = len(sc.notes)
		ch := sc.changed
		sc.mu.Unlock()
		select {
		case <-ch:
		case <-sc.exited:
			sc.t.Fatalf("freecode-serve exited while the test waited for %s:\n%s", what, sc.stderr.String())
		case <-timer.C:
			sc.t.Fatalf("no %s within %v", what, hangGuard)
		}
	}
}

// awaitStatus waits for a status of server in state, past the first from
// notifications.
func (sc *nsSidecar) awaitStatus(from int, server string, state protocol.ServerState) protocol.ServerStatus {
	sc.t.Helper()
	n := sc.awaitFrom(from, fmt.Sprintf("status %s of %s", state, server), func(n frontend.Notification) bool {
		var st protocol.ServerStatus
		return n.Method == protocol.NotifyServersStatus && n.Decode(&st) == nil && st.Name == server && st.State == state
	})
	var st protocol.ServerStatus
	if err := n.Decode(&st); err != nil {
		sc.t.Fatal(err)
	}
	return st
}

// call runs one tool call through the sidecar.
func (sc *nsSidecar) call(tool, args string) protocol.ToolResult {
	sc.t.Helper()
	ctx, cancel := context.WithTimeout(sc.t.Context(), hangGuard)
	defer cancel()
	rs, err := sc.Execute(ctx, protocol.ToolCall{CallID: "c1", Tool: tool, Arguments: json.RawMessage(args)})
	if err != nil || len(rs) != 1 {
		sc.t.Fatalf("calling %s: %v, %d results", tool, err, len(rs))
	}
	return rs[0]
}

// statusOf returns the status freecode/servers lists for name.
func (sc *nsSidecar) statusOf(name string) protocol.ServerStatus {
	sc.t.Helper()
	sts, err := sc.Servers(sc.t.Context())
	if err != nil {
		sc.t.Fatal(err)
	}
	for _, st := range sts {
		if st.Name == name {
			return st
		}
	}
	sc.t.Fatalf("freecode/servers lists no %q: %+v", name, sts)
	return protocol.ServerStatus{}
}
