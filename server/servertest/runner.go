// Package servertest runs the sidecar under test and drives it like an
// editor does, in the manner of gopls's integration runner:
//
//	servertest.Run(t, files, func(t *testing.T, env *servertest.Env) {
//		env.Editor.AwaitStatus("srv", protocol.StateConnected)
//		...
//	})
//
// Run writes files (a txtar archive) into a sandbox, starts the real sidecar
// in each of the modes asked for (in this process over a pipe, or the built
// freecode-serve binary on a unix socket), connects a fake editor to it, and
// runs the test once per mode. The fake editor is a frontend.Client that
// keeps every notification for the test to await, and answers permission
// prompts by script. The JSON-RPC log of every frontend and the sidecar's
// own log are printed only when the test fails.
//
// The MCP servers of a test are real subprocesses: the test binary itself,
// re-executed as a server (Server, Main).
package servertest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"
	"golang.org/x/tools/txtar"

	"github.com/freecode/freecode/internal/frontend"
	"github.com/freecode/freecode/internal/mcptest"
	"github.com/freecode/freecode/internal/protocol"
	"github.com/freecode/freecode/mcp/sandbox"
	"github.com/freecode/freecode/server"
	"github.com/freecode/freecode/workspace"
)

// HangGuard bounds every wait of the harness. It only keeps a broken test
// from hanging; no test depends on it.
const HangGuard = 60 * time.Second

// Mode is a way of running the sidecar under test.
type Mode int

const (
	// Stdio runs a server.Server in the test process, serving one
	// frontend over a pipe as an editor's stdio: the workspace opens at
	// initialized, from the frontend's folder and config path.
	Stdio Mode = 1 << iota
	// Shared runs a server.Server in the test process that opened its
	// workspace first and wants a token, as one that listens does;
	// frontends connect to it over pipes.
	Shared
	// Binary runs the built freecode-serve with --listen on a unix socket;
	// frontends dial it and present the token of its serve.json.
	Binary
	// WebSocket runs a server.Server in the test process that serves
	// browsers (ServeWeb) on a loopback port; each frontend is a browser
	// tab: it signs in with a one-time code once, then opens /rpc with the
	// page's Origin and the session cookie, and presents no token.
	WebSocket

	// DefaultModes are the modes a test runs in unless it says otherwise.
	DefaultModes = Stdio | Binary
	// MultiModes are the modes in which several frontends can connect:
	// with the token, or as browser tabs with the session cookie.
	MultiModes = Shared | Binary | WebSocket
)

func (m Mode) String() string {
	switch m {
	case Stdio:
		return "stdio"
	case Shared:
		return "shared"
	case Binary:
		return "binary"
	case WebSocket:
		return "websocket"
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// Main is the TestMain of a package that uses Run: it serves MCP when the
// test binary is re-executed as a test server (Server, or
// mcptest.TracedServerEnv's), and checks that no goroutine is left after
// the tests.
func Main(m *testing.M) {
	sandbox.RunBridge() // a sandboxed test server's bridge to its proxy
	mcptest.RunTracedServerIfAsked()
	if os.Getenv(mcpServerEnv) != "" {
		os.Exit(runMCPServer())
	}
	if os.Getenv(browserEnv) != "" && len(os.Args) > 1 && !strings.HasPrefix(os.Args[len(os.Args)-1], "-test.") {
		os.Exit(runBrowser())
	}
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// Option configures Run.
type Option func(*runConfig)

type runConfig struct {
	modes  Mode
	editor EditorOptions
}

// Modes sets the modes the test runs in (default DefaultModes).
func Modes(m Mode) Option { return func(c *runConfig) { c.modes = m } }

// WithEditor configures the first frontend.
func WithEditor(o EditorOptions) Option { return func(c *runConfig) { c.editor = o } }

// Env is one run of a test: the sandbox, the sidecar and the frontends
// connected to it.
type Env struct {
	T       *testing.T
	Mode    Mode
	Sandbox *Sandbox
	// Editor is the first frontend, initialized.
	Editor *Editor

	log     *syncBuffer // the sidecar's log and every frontend's messages
	editors []*Editor

	// In this process (Stdio, Shared).
	srv   *server.Server
	token string
	conns sync.WaitGroup

	// Binary.
	cmd    *exec.Cmd
	exited chan struct{} // closed when the binary has exited
	addr   string

	// WebSocket (web.go).
	web *webEnv
}

// Run runs test once per mode, each time with a fresh sandbox holding
// files, the sidecar started and Env.Editor connected and initialized.
// files is a txtar archive; see Sandbox.Path for where its files go and
// Expand for its templates.
func Run(t *testing.T, files string, test func(t *testing.T, env *Env), opts ...Option) {
	cfg := runConfig{modes: DefaultModes}
	for _, o := range opts {
		o(&cfg)
	}
	for _, mode := range []Mode{Stdio, Shared, Binary, WebSocket} {
		if cfg.modes&mode == 0 {
			continue
		}
		t.Run(mode.String(), func(t *testing.T) {
			env := newEnv(t, mode, files)
			if cfg.editor.NoInitialize {
				env.Editor = env.Dial("editor", &cfg.editor)
			} else {
				env.Editor = env.Connect("editor", &cfg.editor)
			}
			test(t, env)
		})
	}
}

func newEnv(t *testing.T, mode Mode, files string) *Env {
	dir := t.TempDir()
	sb := &Sandbox{Home: filepath.Join(dir, "home"), Project: filepath.Join(dir, "project")}
	sb.ConfigDir = filepath.Join(sb.Home, ".freecode")
	sb.ConfigPath = filepath.Join(sb.ConfigDir, "config.json")
	sb.ServeFile = filepath.Join(sb.ConfigDir, "serve.json")
	for _, d := range []string{sb.ConfigDir, sb.Project} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range txtar.Parse([]byte(files)).Files {
		sb.WriteFile(t, f.Name, Expand(t, string(f.Data)))
	}
	env := &Env{T: t, Mode: mode, Sandbox: sb, log: &syncBuffer{}}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("sidecar and JSON-RPC log (%s):\n%s", mode, env.log.String())
		}
	})
	if mode != Binary {
		// The user's files (sign-ins: oauth.DefaultStore) are under $HOME,
		// as the binary's are under the HOME it is given: each run of a test
		// has its own, or a run would find what the one before it stored.
		t.Setenv("HOME", sb.Home)
	}
	switch mode {
	case Stdio:
		env.srv = server.New(env.serverOptions(t))
	case Shared, WebSocket:
		env.token = server.NewToken()
		opts := env.serverOptions(t)
		opts.Token = env.token
		opts.Workspace.Root, opts.Workspace.ConfigPath = sb.Project, sb.ConfigPath
		env.srv = server.New(opts)
		if err := env.srv.Open(t.Context()); err != nil {
			t.Fatal(err)
		}
		if mode == WebSocket {
			env.startWeb(t)
		}
	case Binary:
		env.startBinary(t)
	}
	t.Cleanup(env.stop)
	return env
}

// serverOptions are the options of a server in this process.
func (env *Env) serverOptions(t *testing.T) *server.Options {
	return &server.Options{
		Version:   "test",
		Logger:    slog.New(slog.NewTextHandler(env.log, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Trace:     env.log,
		Workspace: workspaceOptions(t),
	}
}

// workspaceOptions are the options of a workspace in this process.
func workspaceOptions(t *testing.T) workspace.Options {
	return workspace.Options{ResultsDir: t.TempDir()}
}

// stop ends the frontends and the sidecar, as an editor that quits does.
func (env *Env) stop() {
	for _, ed := range env.editors {
		ed.Close()
	}
	switch env.Mode {
	case Stdio, Shared, WebSocket:
		env.srv.Close()
		env.conns.Wait()
	case Binary:
		select {
		case <-env.exited:
		default:
			env.cmd.Process.Signal(syscall.SIGTERM)
		}
		select {
		case <-env.exited:
		case <-time.After(HangGuard):
			env.T.Errorf("freecode-serve did not exit within %v of SIGTERM", HangGuard)
			env.cmd.Process.Kill()
			<-env.exited
		}
	}
}

// CloseSidecar stops the sidecar in this process as a signal does, and
// waits for it.
func (env *Env) CloseSidecar() {
	env.T.Helper()
	if env.srv == nil {
		env.T.Fatal("CloseSidecar: the sidecar is not in this process")
	}
	done := make(chan struct{})
	go func() {
		env.srv.Close()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(HangGuard):
		env.T.Fatalf("the sidecar did not close within %v", HangGuard)
	}
}

// Connect connects and initializes another frontend. In Stdio mode only
// the first one may: the editor's stdio is one connection.
func (env *Env) Connect(name string, opts *EditorOptions) *Editor {
	t := env.T
	t.Helper()
	ed := env.Dial(name, opts)
	if _, err := ed.Initialize(t.Context()); err != nil {
		t.Fatalf("%s: initialize: %v", name, err)
	}
	return ed
}

// Dial connects another frontend without initializing it.
func (env *Env) Dial(name string, opts *EditorOptions) *Editor {
	t := env.T
	t.Helper()
	var o EditorOptions
	if opts != nil {
		o = *opts
	}
	var rwc io.ReadWriteCloser
	fopts := &frontend.Options{ClientName: name, Folders: []string{env.Sandbox.Project}}
	if o.Folders != nil {
		fopts.Folders = o.Folders
	}
	switch env.Mode {
	case WebSocket:
		ed := newEditor(t, name, nil, fopts, env.log, &o)
		ed.connectTab(env.web)
		env.editors = append(env.editors, ed)
		return ed
	case Stdio:
		if len(env.editors) > 0 {
			t.Fatal("Stdio mode has one frontend")
		}
		fopts.ConfigPath = env.Sandbox.ConfigPath
		rwc = env.pipe()
	case Shared:
		fopts.Token = env.token
		rwc = env.pipe()
	case Binary:
		sf, err := protocol.ReadServeFile(env.Sandbox.ServeFile)
		if err != nil {
			t.Fatal(err)
		}
		fopts.Token = sf.Token
		c, err := net.Dial("unix", strings.TrimPrefix(sf.Address, "unix:"))
		if err != nil {
			t.Fatal(err)
		}
		rwc = c
	}
	if o.Token != nil {
		fopts.Token = *o.Token
	}
	ed := newEditor(t, name, rwc, fopts, env.log, &o)
	env.editors = append(env.editors, ed)
	return ed
}

// pipe connects a frontend to the server in this process.
func (env *Env) pipe() io.ReadWriteCloser {
	a, b := net.Pipe()
	env.conns.Go(func() { env.srv.ServeConn(context.Background(), a) })
	return b
}

// SidecarPID is the pid of the sidecar: this process, or the binary's.
func (env *Env) SidecarPID() int {
	if env.Mode == Binary {
		return env.cmd.Process.Pid
	}
	return os.Getpid()
}

// Log returns the sidecar's log and the frontends' messages so far.
func (env *Env) Log() string { return env.log.String() }

// AwaitSidecarLog waits until the sidecar's log holds text.
func (env *Env) AwaitSidecarLog(text string) {
	env.T.Helper()
	timer := time.NewTimer(HangGuard)
	defer timer.Stop()
	for {
		ch, has := env.log.contains(text)
		if has {
			return
		}
		select {
		case <-ch:
		case <-timer.C:
			env.T.Fatalf("the sidecar's log has no %q within %v", text, HangGuard)
		}
	}
}

// syncBuffer is a bytes.Buffer safe for concurrent writers, which tells
// of every write.
type syncBuffer struct {
	mu      sync.Mutex
	b       bytes.Buffer
	changed chan struct{} // closed and replaced by every write
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.WriteString(string(p))
	return len(p), nil
}

func (s *syncBuffer) WriteString(p string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.b.WriteString(p)
	if s.changed != nil {
		close(s.changed)
		s.changed = nil
	}
}

// contains reports whether the buffer holds text, and returns a channel
// closed by the next write.
func (s *syncBuffer) contains(text string) (<-chan struct{}, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.changed == nil {
		s.changed = make(chan struct{})
	}
	return s.changed, strings.Contains(s.b.String(), text)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
