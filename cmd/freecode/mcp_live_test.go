package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/freecode/freecode/internal/frontend"
	"github.com/freecode/freecode/internal/proctest"
	"github.com/freecode/freecode/internal/protocol"
	"github.com/freecode/freecode/server"
	"github.com/freecode/freecode/server/servertest"
	"github.com/freecode/freecode/workspace"
)

// hangGuard bounds the waits of these tests; no test depends on it.
const hangGuard = 60 * time.Second

// liveEnv is a test's config, HOME (where serve.json is looked for) and
// project.
type liveEnv struct {
	cfg, home, project string
	// sidecarLog, when set, gets the log of the sidecar startSidecar
	// runs.
	sidecarLog io.Writer
}

// newLiveEnv writes a config holding demo (the demo server) and noisy (the
// demo server behind a shell that writes "start #N" to stderr, N counting
// its starts), with HOME pointed at a directory of the test.
func newLiveEnv(t *testing.T) *liveEnv {
	t.Helper()
	dir := t.TempDir()
	e := &liveEnv{cfg: filepath.Join(dir, "config.json"), home: filepath.Join(dir, "home"), project: filepath.Join(dir, "project")}
	for _, d := range []string{e.home, e.project} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("HOME", e.home)
	mustRun(t, "--config", e.cfg, "mcp", "add", "demo", "local", "--", demoServer)
	mustRun(t, "--config", e.cfg, "mcp", "add", "noisy", "local", "--", "sh", "-c",
		`n=$(($(cat "$1" 2>/dev/null || echo 0)+1)); echo $n >"$1"; echo "start #$n" >&2; exec "$0"`,
		demoServer, filepath.Join(dir, "starts"))
	return e
}

// startSidecar runs a sidecar in this process, listening on a unix
// socket, with serve.json in HOME, as `freecode serve --listen` does; it
// stops when the test ends. It returns the socket's address.
func (e *liveEnv) startSidecar(t *testing.T) string {
	t.Helper()
	// Short: a unix socket's path has a small limit.
	sockDir, err := os.MkdirTemp("", "fc")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(sockDir) })
	ctx, cancel := context.WithCancel(context.Background())
	listening := make(chan string, 1)
	done := make(chan error, 1)
	sopts := server.Options{Workspace: workspace.Options{ConfigPath: e.cfg, Root: e.project, ResultsDir: t.TempDir()}}
	if e.sidecarLog != nil {
		sopts.Logger = slog.New(slog.NewTextHandler(e.sidecarLog, nil))
	}
	go func() {
		done <- server.Run(ctx, &server.RunOptions{
			Listen:      "unix:" + filepath.Join(sockDir, "s"),
			ServeFile:   filepath.Join(e.home, ".freecode", "serve.json"),
			Server:      sopts,
			OnListening: func(addr string) { listening <- addr },
		})
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("sidecar: %v", err)
		}
	})
	select {
	case addr := <-listening:
		return addr
	case err := <-done:
		t.Fatalf("the sidecar ended before it listened: %v", err)
	case <-time.After(hangGuard):
		t.Fatal("the sidecar did not listen")
	}
	return ""
}

// dial connects a frontend to the sidecar startSidecar runs, through
// serve.json as the CLI finds it; the test's end closes it.
func (e *liveEnv) dial(t *testing.T) *frontend.Client {
	t.Helper()
	c, err := frontend.DialServeFile(t.Context(), filepath.Join(e.home, ".freecode", "serve.json"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := c.Initialize(t.Context()); err != nil {
		t.Fatal(err)
	}
	return c
}

// liveRun runs the CLI with --config; see run.
func (e *liveEnv) run(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	return run(t, append([]string{"--config", e.cfg}, args...)...)
}

func (e *liveEnv) mustRun(t *testing.T, args ...string) string {
	t.Helper()
	return mustRun(t, append([]string{"--config", e.cfg}, args...)...)
}

// statuses decodes `mcp status --json`.
func statuses(t *testing.T, out string) []protocol.ServerStatus {
	t.Helper()
	var sts []protocol.ServerStatus
	if err := json.Unmarshal([]byte(out), &sts); err != nil {
		t.Fatalf("status --json: %v\n%s", err, out)
	}
	return sts
}

func byName(sts []protocol.ServerStatus) map[string]protocol.ServerStatus {
	m := make(map[string]protocol.ServerStatus)
	for _, st := range sts {
		m[st.Name] = st
	}
	return m
}

// With no sidecar, status says so and how to get one, with its own exit
// status; stop, restart and logs have nothing to talk to; start is the
// one-shot check it always was.
func TestLiveNoSidecar(t *testing.T) {
	e := newLiveEnv(t)
	out, errOut, code := e.run(t, "mcp", "status")
	for _, want := range []string{"No sidecar is running for " + e.cfg, "there is no " + filepath.Join(e.home, ".freecode", "serve.json"),
		"freecode serve --listen unix:", "freecode mcp status --probe"} {
		if !strings.Contains(out, want) {
			t.Errorf("status output lacks %q:\n%s", want, out)
		}
	}
	if code != exitNoSidecar || errOut != "" {
		t.Errorf("status: exit %d, stderr %q; want exit %d", code, errOut, exitNoSidecar)
	}

	out, errOut, code = e.run(t, "mcp", "status", "--json")
	if code != exitNoSidecar || out != "" || !strings.Contains(errOut, "No sidecar is running") {
		t.Errorf("status --json: exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}

	for _, verb := range []string{"stop", "restart", "logs"} {
		_, errOut, code := e.run(t, "mcp", verb, "demo")
		if code != 1 || !strings.Contains(errOut, "no sidecar serves "+e.cfg) || !strings.Contains(errOut, "freecode serve --listen") {
			t.Errorf("%s: exit %d\n%s", verb, code, errOut)
		}
	}

	out = e.mustRun(t, "mcp", "start", "demo")
	if !strings.Contains(out, `✓ Server "demo" started with 7 tools`) {
		t.Errorf("start without a sidecar is not the one-shot check:\n%s", out)
	}
	if _, errOut, code := e.run(t, "mcp", "start", "demo", "--json"); code != 1 || !strings.Contains(errOut, "--json") {
		t.Errorf("start --json without a sidecar: exit %d\n%s", code, errOut)
	}
}

// A serve.json that a killed sidecar left behind is no sidecar.
func TestLiveStaleServeFile(t *testing.T) {
	e := newLiveEnv(t)
	sock := filepath.Join(t.TempDir(), "gone.sock")
	b, _ := json.Marshal(protocol.ServeFile{Address: "unix:" + sock, PID: 999999, Token: "t"})
	if err := os.MkdirAll(filepath.Join(e.home, ".freecode"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(e.home, ".freecode", "serve.json"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	out, _, code := e.run(t, "mcp", "status")
	if code != exitNoSidecar || !strings.Contains(out, "names pid 999999 at unix:"+sock+", which does not answer") {
		t.Errorf("exit %d:\n%s", code, out)
	}
	out = e.mustRun(t, "mcp", "start", "demo")
	if !strings.Contains(out, `✓ Server "demo" started with 7 tools`) {
		t.Errorf("start with a dead sidecar's serve.json is not the one-shot check:\n%s", out)
	}
}

// A killed sidecar leaves serve.json behind, and another program (another
// user's) may take the address it names. The CLI does not send it the
// token, nor show what it says: it refuses, saying why, since the listener
// cannot prove it holds the file's token. start does not fall back to the
// one-shot check either: something does listen there.
func TestLiveImpostor(t *testing.T) {
	for _, network := range []string{"tcp", "unix"} {
		t.Run(network, func(t *testing.T) {
			e := newLiveEnv(t)
			im := servertest.NewImpostor(t, network, e.cfg)
			token := server.NewToken()
			path := filepath.Join(e.home, ".freecode", "serve.json")
			b, _ := json.Marshal(protocol.ServeFile{Address: im.Address, PID: 999999, Token: token})
			if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, b, 0o600); err != nil {
				t.Fatal(err)
			}
			for _, args := range [][]string{{"mcp", "status"}, {"mcp", "status", "--json"}, {"mcp", "stop", "demo"}, {"mcp", "start", "demo"}} {
				out, errOut, code := e.run(t, args...)
				want := "refusing the listener at " + im.Address + ": it is not the sidecar " + path + " names (pid 999999)"
				if code != 1 || !strings.Contains(errOut, want) || !strings.Contains(errOut, "The token was not sent") {
					t.Errorf("%v: exit %d, stderr:\n%s\nwant exit 1 and %q", args, code, errOut, want)
				}
				if strings.Contains(out, "4242") || strings.Contains(out, "connected") || strings.Contains(out, "started") {
					t.Errorf("%v printed what the impostor said, or ran the server:\n%s", args, out)
				}
			}
			got, conns := im.Received()
			if conns != 4 || !strings.Contains(got, protocol.MethodChallenge) {
				t.Errorf("the impostor took %d connections, and was sent:\n%s", conns, got)
			}
			if strings.Contains(got, token) || strings.Contains(got, protocol.MethodInitialize) {
				t.Errorf("the impostor was sent the token or an initialize:\n%s", got)
			}
		})
	}
}

// status --probe connects each server from the CLI's own process and
// reports the fields a sidecar would, then stops them.
func TestLiveProbe(t *testing.T) {
	e := newLiveEnv(t)
	e.mustRun(t, "mcp", "add", "bad", "local", "--", "sh", "-c", "echo boom >&2; exit 3")
	e.mustRun(t, "mcp", "add", "off", "local", "--disabled", "--", demoServer)

	out, errOut, code := e.run(t, "mcp", "status", "--probe", "--json", "--project", e.project)
	if code != 1 {
		t.Errorf("probe with a failing server: exit %d, want 1\n%s", code, errOut)
	}
	got := byName(statuses(t, out))
	demo, noisy, bad := got["demo"], got["noisy"], got["bad"]
	if demo.State != protocol.StateConnected || demo.ToolCount != 7 || demo.PID == 0 || demo.Transport != "stdio" ||
		demo.ProtocolVersion == "" || demo.ServerInfo == nil || demo.ServerInfo.Name != "freecode-demo" || demo.ConnectedAt.IsZero() {
		t.Errorf("demo = %+v", demo)
	}
	if diff := cmp.Diff([]string{"start #1"}, noisy.StderrTail); diff != "" || noisy.State != protocol.StateConnected {
		t.Errorf("noisy = %+v; stderr tail (-want +got):\n%s", noisy, diff)
	}
	if bad.State != protocol.StateFailed || bad.LastError == "" || !cmp.Equal([]string{"boom"}, bad.StderrTail) {
		t.Errorf("bad = %+v", bad)
	}
	if got["off"].State != protocol.StateDisabled {
		t.Errorf("off = %+v", got["off"])
	}
	// Stopped and reaped before the command returned.
	for _, st := range []protocol.ServerStatus{demo, noisy} {
		proctest.WantGone(t, st.PID, "of "+st.Name+" after the probe")
	}

	out, _, code = e.run(t, "mcp", "status", "--probe", "demo", "bad", "--project", e.project)
	for _, re := range []string{
		`(?m)^Probed from this process`,
		`(?m)^✓ demo: connected\n    scope      user, local\n    transport  stdio, pid \d+\n`,
		`(?m)^    tools      7$`,
		`(?m)^    last ping  none yet$`,
		`(?m)^✗ bad: failed$`,
		`(?m)^    last error .+$`,
		`(?m)^    stderr     boom$`,
	} {
		if !regexp.MustCompile(re).MatchString(out) {
			t.Errorf("probe output does not match %s:\n%s", re, out)
		}
	}
	if strings.Contains(out, "noisy") || code != 1 {
		t.Errorf("probe of demo and bad: exit %d\n%s", code, out)
	}
	if _, errOut, code := e.run(t, "mcp", "status", "--probe", "nosuch", "--project", e.project); code != 1 || !strings.Contains(errOut, `no server named "nosuch"`) {
		t.Errorf("probe of an unknown server: exit %d\n%s", code, errOut)
	}
}

// The live commands against a running sidecar: what they print is what
// the sidecar answers, and what they do happens in it.
func TestLiveSidecar(t *testing.T) {
	e := newLiveEnv(t)
	addr := e.startSidecar(t)
	pid := os.Getpid()

	out := e.mustRun(t, "mcp", "start", "demo")
	if !strings.Contains(out, fmt.Sprintf(`Started "demo" in the sidecar (pid %d).`, pid)) || !strings.Contains(out, "✓ demo: connected") {
		t.Errorf("start:\n%s", out)
	}
	e.mustRun(t, "mcp", "start", "noisy")

	// What status prints is what the sidecar answers any frontend.
	c := e.dial(t)
	want, err := c.Servers(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	got := statuses(t, e.mustRun(t, "mcp", "status", "--json"))
	if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(protocol.ServerStatus{}, "LastPingMs")); diff != "" {
		t.Errorf("status --json differs from freecode/servers (-sidecar +cli):\n%s", diff)
	}
	noisy := byName(got)["noisy"]

	out = e.mustRun(t, "mcp", "status")
	for _, re := range []string{
		`^Sidecar pid ` + fmt.Sprint(pid) + ` at ` + regexp.QuoteMeta(addr) + `, project ` + regexp.QuoteMeta(e.project) + `\n`,
		`(?m)^✓ demo: connected$`,
		`(?m)^✓ noisy: connected\n    scope      user, local\n    transport  stdio, pid ` + fmt.Sprint(noisy.PID) + `\n`,
		`(?m)^    connected  since \d{4}-\d\d-\d\d \d\d:\d\d:\d\d \(\d+s ago\)$`,
		`(?m)^    stderr     start #1$`,
	} {
		if !regexp.MustCompile(re).MatchString(out) {
			t.Errorf("status output does not match %s:\n%s", re, out)
		}
	}
	if out := e.mustRun(t, "mcp", "status", "noisy"); strings.Contains(out, "demo:") {
		t.Errorf("status noisy shows demo:\n%s", out)
	}
	if _, errOut, code := e.run(t, "mcp", "status", "nosuch"); code != 1 || !strings.Contains(errOut, "has: demo, noisy") {
		t.Errorf("status nosuch: exit %d\n%s", code, errOut)
	}

	out = e.mustRun(t, "mcp", "stop", "demo")
	if !strings.Contains(out, `Stopped "demo" in the sidecar`) || !strings.Contains(out, "- demo: stopped") {
		t.Errorf("stop:\n%s", out)
	}
	if st := byName(statuses(t, e.mustRun(t, "mcp", "status", "--json")))["demo"]; st.State != protocol.StateStopped || st.PID != 0 {
		t.Errorf("after stop, demo = %+v", st)
	}
	var restarted protocol.ServerStatus
	if err := json.Unmarshal([]byte(e.mustRun(t, "mcp", "restart", "demo", "--json")), &restarted); err != nil || restarted.State != protocol.StateConnected || restarted.PID == 0 {
		t.Errorf("restart --json: %v %+v", err, restarted)
	}
	if _, errOut, code := e.run(t, "mcp", "start", "nosuch"); code != 1 || !strings.Contains(errOut, "no such MCP server") || !strings.Contains(errOut, "the sidecar has: demo, noisy") {
		t.Errorf("start nosuch: exit %d\n%s", code, errOut)
	}

	// --local is the one-shot check, sidecar or not.
	if out := e.mustRun(t, "mcp", "start", "demo", "--local"); !strings.Contains(out, `✓ Server "demo" started with 7 tools`) {
		t.Errorf("start --local:\n%s", out)
	}

	out = e.mustRun(t, "mcp", "logs", "noisy")
	if want := fmt.Sprintf("✓ noisy: connected, pid %d\nstart #1\n", noisy.PID); out != want {
		t.Errorf("logs = %q, want %q", out, want)
	}

	// A CLI with another config file has no sidecar.
	other := filepath.Join(t.TempDir(), "other.json")
	out, _, code := run(t, "--config", other, "mcp", "status")
	if code != exitNoSidecar || !strings.Contains(out, "serves "+e.cfg) {
		t.Errorf("status with another config: exit %d\n%s", code, out)
	}
}

// A config file that stops loading while the sidecar runs: status says
// where and why, as a compiler would, and the sidecar logs it once, however
// often it is asked; fixed, both say so.
func TestLiveStatusShowsConfigProblems(t *testing.T) {
	e := newLiveEnv(t)
	var log notifyBuffer
	e.sidecarLog = &log
	e.startSidecar(t)
	good, err := os.ReadFile(e.cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(e.cfg, []byte("{\"mcp\": {\"servers\": [\n  oops\n]}}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	log.await(t, "config problem")

	c := e.dial(t)
	p, err := c.Project(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Problems) != 1 || p.Problems[0].Path != e.cfg || len(p.Problems[0].Problems) != 1 {
		t.Fatalf("freecode/project's problems: %+v", p.Problems)
	}
	prob := p.Problems[0].Problems[0]
	if prob.Line != 2 || prob.Column != 3 {
		t.Errorf("the problem is not placed at line 2, column 3: %+v", prob)
	}
	line := fmt.Sprintf("  %s:2:3: %s\n", e.cfg, prob.Message)

	out := e.mustRun(t, "mcp", "status")
	if !strings.Contains(out, "Config problems") || !strings.Contains(out, line) {
		t.Errorf("status does not show the problem %q:\n%s", line, out)
	}
	// The servers the file held before go on.
	if !regexp.MustCompile(`(?m)^. demo: `).MatchString(out) {
		t.Errorf("status lost the servers the file last held:\n%s", out)
	}
	stdout, stderr, code := e.run(t, "mcp", "status", "--json")
	if code != 0 || !strings.Contains(stderr, line) || len(statuses(t, stdout)) != 2 {
		t.Errorf("status --json: exit %d, stderr:\n%s", code, stderr)
	}
	if n := strings.Count(log.String(), "config problem"); n != 1 {
		t.Errorf("the sidecar logged the problem %d times, want once:\n%s", n, log.String())
	}
	if !strings.Contains(log.String(), "level=ERROR msg=\"config problem\" at="+e.cfg+":2:3") {
		t.Errorf("the sidecar's log does not place the problem:\n%s", log.String())
	}

	if err := os.WriteFile(e.cfg, good, 0o600); err != nil {
		t.Fatal(err)
	}
	log.await(t, "config file fixed")
	if out := e.mustRun(t, "mcp", "status"); strings.Contains(out, "Config problems") {
		t.Errorf("status still shows problems once the file is fixed:\n%s", out)
	}
}

// logs --follow prints what the server writes after the tail, and its
// state changes, until it is interrupted.
func TestLiveLogsFollow(t *testing.T) {
	e := newLiveEnv(t)
	e.startSidecar(t)
	e.mustRun(t, "mcp", "start", "noisy")

	ctx, cancel := context.WithCancel(t.Context())
	var out, errOut notifyBuffer
	done := make(chan int, 1)
	go func() { done <- runContext(ctx, &out, &errOut, "--config", e.cfg, "mcp", "logs", "noisy", "--follow") }()
	errOut.await(t, "-- following noisy's log")
	e.mustRun(t, "mcp", "restart", "noisy")
	out.await(t, "[stderr] start #2")
	out.await(t, "-- noisy: connected --")
	cancel() // Ctrl-C
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("logs --follow interrupted: exit %d\n%s", code, errOut.String())
		}
	case <-time.After(hangGuard):
		t.Fatal("logs --follow did not end when interrupted")
	}
	if !strings.HasPrefix(out.String(), "✓ noisy: connected, pid ") || !strings.Contains(out.String(), "\nstart #1\n") {
		t.Errorf("logs --follow did not start with the status and the tail:\n%s", out.String())
	}
}

// runContext runs the CLI in-process with ctx (its cancel is Ctrl-C) and
// returns the exit code.
func runContext(ctx context.Context, stdout, stderr io.Writer, args ...string) int {
	cmd := newRootCmd()
	cmd.SetOut(stdout)
	cmd.SetErr(stderr)
	cmd.SetArgs(args)
	if err := cmd.ExecuteContext(ctx); err != nil {
		var ec exitCoder
		if asExitCoder(err, &ec) {
			return ec.ExitCode()
		}
		fmt.Fprintln(stderr, "freecode:", err)
		return 1
	}
	return 0
}

// notifyBuffer is a buffer safe for concurrent use that a test can await
// text in.
type notifyBuffer struct {
	mu      sync.Mutex
	b       bytes.Buffer
	changed chan struct{} // closed and replaced on every write
}

func (nb *notifyBuffer) Write(p []byte) (int, error) {
	nb.mu.Lock()
	defer nb.mu.Unlock()
	if nb.changed != nil {
		close(nb.changed)
		nb.changed = nil
	}
	return nb.b.Write(p)
}

func (nb *notifyBuffer) String() string {
	nb.mu.Lock()
	defer nb.mu.Unlock()
	return nb.b.String()
}

// await waits until the buffer holds text.
func (nb *notifyBuffer) await(t *testing.T, text string) {
	t.Helper()
	nb.awaitFrom(t, 0, text)
}

// awaitFrom waits until the buffer holds text past its first from bytes.
func (nb *notifyBuffer) awaitFrom(t *testing.T, from int, text string) {
	t.Helper()
	nb.awaitFunc(t, fmt.Sprintf("%q", text), func(b string) bool { return strings.Contains(b[from:], text) })
}

// awaitFunc waits until ok holds of the buffer's text; what names it in
// the failure.
func (nb *notifyBuffer) awaitFunc(t *testing.T, what string, ok func(string) bool) {
	t.Helper()
	timer := time.NewTimer(hangGuard)
	defer timer.Stop()
	for {
		nb.mu.Lock()
		if ok(nb.b.String()) {
			nb.mu.Unlock()
			return
		}
		if nb.changed == nil {
			nb.changed = make(chan struct{})
		}
		ch := nb.changed
		nb.mu.Unlock()
		select {
		case <-ch:
		case <-timer.C:
			t.Fatalf("no %s within %v in:\n%s", what, hangGuard, nb.String())
		}
	}
}

// `freecode mcp restart` in a live sidecar is a reconnect: the server's
// tools stay registered, so a frontend gets no freecode/tools/changed
// from it and its provider prompt cache survives.
func TestLiveRestartKeepsTools(t *testing.T) {
	e := newLiveEnv(t)
	e.startSidecar(t)
	e.mustRun(t, "mcp", "start", "demo")
	e.mustRun(t, "mcp", "start", "noisy")
	var changes notifyBuffer
	c, err := frontend.DialServeFile(t.Context(), filepath.Join(e.home, ".freecode", "serve.json"), &frontend.Options{
		OnNotification: func(n frontend.Notification) {
			var tc protocol.ToolsChanged
			if n.Method == protocol.NotifyToolsChanged && n.Decode(&tc) == nil {
				fmt.Fprintf(&changes, "%s %s\n", tc.Server, tc.Reason)
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := c.Initialize(t.Context()); err != nil {
		t.Fatal(err)
	}
	// Stopping noisy is a tools/changed of its own, which comes after
	// whatever came before it: the barrier.
	e.mustRun(t, "mcp", "stop", "noisy")
	changes.await(t, "noisy stopped\n")
	e.mustRun(t, "mcp", "start", "noisy")
	changes.await(t, "noisy connected\n")
	before, err := c.Definitions(t.Context(), protocol.FormatAnthropic)
	if err != nil {
		t.Fatal(err)
	}
	mark := len(changes.String())

	out := e.mustRun(t, "mcp", "restart", "demo")
	if !strings.Contains(out, `Restarted "demo" in the sidecar`) || !strings.Contains(out, "✓ demo: connected") {
		t.Errorf("restart:\n%s", out)
	}
	after, err := c.Definitions(t.Context(), protocol.FormatAnthropic)
	if err != nil || after.Hash != before.Hash {
		t.Errorf("definitions' hash after the restart: %s, was %s (%v)", after.Hash, before.Hash, err)
	}
	e.mustRun(t, "mcp", "stop", "noisy")
	changes.awaitFrom(t, mark, "noisy stopped\n")
	if got := changes.String()[mark:]; got != "noisy stopped\n" {
		t.Errorf("tools/changed since the restart:\n%swant only the barrier's (noisy stopped)", got)
	}
}
