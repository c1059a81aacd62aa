package server_test

import (
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.lsp.dev/jsonrpc2"
	lsp "go.lsp.dev/protocol"

	"github.com/freecode/freecode/internal/frontend"
	"github.com/freecode/freecode/internal/proctest"
	"github.com/freecode/freecode/internal/protocol"
	"github.com/freecode/freecode/server"
	"github.com/freecode/freecode/server/servertest"
)

// oneServer is a config with the test MCP server srv.
const oneServer = `
-- config.json --
{"mcp": {"servers": [{{server "srv"}}]}}
`

// codeOf returns the JSON-RPC code of err, 0 if it has none.
func codeOf(err error) jsonrpc2.Code {
	var we *jsonrpc2.Error
	if errors.As(err, &we) {
		return we.Code
	}
	return 0
}

// wantCode fails the test unless err is a JSON-RPC error with code whose
// message holds text.
func wantCode(t *testing.T, what string, err error, code jsonrpc2.Code, text string) {
	t.Helper()
	if err == nil || codeOf(err) != code || !strings.Contains(err.Error(), text) {
		t.Errorf("%s: error %v (code %d), want code %d with %q", what, err, codeOf(err), code, text)
	}
}

// awaitDone waits for a connection to end.
func awaitDone(t *testing.T, what string, done <-chan struct{}) {
	t.Helper()
	select {
	case <-done:
	case <-time.After(servertest.HangGuard):
		t.Fatalf("%s: the connection did not end within %v", what, servertest.HangGuard)
	}
}

// Before initialize a request is refused with -32002; initialize answers
// with the protocol's version and the sidecar's name, and does not wait
// for the servers; a second initialize is an invalid request.
func TestInitialize(t *testing.T) {
	servertest.Run(t, oneServer, func(t *testing.T, env *servertest.Env) {
		ed := env.Editor
		_, err := ed.Servers(t.Context())
		wantCode(t, "freecode/servers before initialize", err, protocol.CodeNotInitialized, "initialize")
		res, err := ed.Initialize(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if res.Capabilities.Experimental.FreeCode.ProtocolVersion != protocol.Version || res.ServerInfo.Name != "freecode-serve" || res.ServerInfo.Version == "" {
			t.Errorf("initialize result %+v", res)
		}
		_, err = ed.Initialize(t.Context())
		wantCode(t, "a second initialize", err, jsonrpc2.InvalidRequest, "initialize was sent twice")
		ed.AwaitStatus("srv", protocol.StateConnected)
	}, servertest.WithEditor(servertest.EditorOptions{NoInitialize: true}))
}

// shutdown stops every server and leaves no process of the sidecar's;
// after it, requests are refused. Exit then ends the connection, and a
// sidecar that listens ends too, removing serve.json.
func TestShutdown(t *testing.T) {
	servertest.Run(t, `
-- config.json --
{"mcp": {"servers": [{{server "a"}}, {{server "b"}}]}}
`, func(t *testing.T, env *servertest.Env) {
		ed := env.Editor
		pids := []int{ed.AwaitStatus("a", protocol.StateConnected).PID, ed.AwaitStatus("b", protocol.StateConnected).PID}
		if runtime.GOOS == "linux" {
			kids := descendants(env.SidecarPID())
			for _, pid := range pids {
				if !slices.Contains(kids, pid) {
					t.Fatalf("server pid %d is not among the sidecar's processes %v", pid, kids)
				}
			}
		}
		if err := ed.Shutdown(t.Context()); err != nil {
			t.Fatal(err)
		}
		for _, pid := range pids {
			proctest.WantGone(t, pid, "after shutdown")
		}
		if runtime.GOOS == "linux" {
			if kids := descendants(env.SidecarPID()); len(kids) > 0 {
				t.Errorf("processes of the sidecar left after shutdown: %v", kids)
			}
		}
		_, err := ed.Servers(t.Context())
		wantCode(t, "freecode/servers after shutdown", err, jsonrpc2.InvalidRequest, "shutdown")
		if err := ed.Exit(t.Context()); err != nil {
			t.Fatal(err)
		}
		awaitDone(t, "exit", ed.Done())
		if env.Mode == servertest.Binary {
			if code := env.AwaitExit(); code != 0 {
				t.Errorf("exit status after shutdown: %d", code)
			}
			if _, err := os.Stat(env.Sandbox.ServeFile); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("serve.json after the sidecar ended: %v", err)
			}
		}
	})
}

// descendants returns the pids of the processes below pid, from /proc.
func descendants(pid int) []int {
	parent := map[int]int{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid …; comm may hold spaces and parentheses.
		s := string(b)
		fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(fields) < 2 || fields[0] == "Z" {
			continue
		}
		if pp, err := strconv.Atoi(fields[1]); err == nil {
			parent[p] = pp
		}
	}
	var out []int
	for p := range parent {
		for q := parent[p]; q > 1; q = parent[q] {
			if q == pid {
				out = append(out, p)
				break
			}
		}
	}
	return out
}

// A socket frontend without the token, or with another, is refused:
// its requests before initialize too, and its connection is closed once
// its initialize is answered. The other frontends go on. A Go frontend
// with another token does not even send it: the sidecar cannot prove it
// holds that one.
func TestToken(t *testing.T) {
	servertest.Run(t, oneServer, func(t *testing.T, env *servertest.Env) {
		if env.Mode == servertest.WebSocket {
			t.Skip("a tab presents the session cookie, not the token (web_test.go tests who may connect)")
		}
		env.Editor.AwaitStatus("srv", protocol.StateConnected)
		none, wrong := "", "0000"
		for _, tc := range []struct {
			name  string
			token *string
			want  string
		}{
			{"no token", &none, "required"},
			{"wrong token", &wrong, "does not match"},
		} {
			stranger := env.Dial(tc.name, &servertest.EditorOptions{Token: tc.token})
			_, err := stranger.Servers(t.Context())
			wantCode(t, tc.name+": freecode/servers before initialize", err, protocol.CodeNotInitialized, "initialize")
			if *tc.token != "" {
				if _, err := stranger.Initialize(t.Context()); !errors.Is(err, frontend.ErrNotSidecar) {
					t.Errorf("%s: Initialize: %v, want ErrNotSidecar", tc.name, err)
				}
			}
			// As a frontend that sends the token unproven would.
			opts := lsp.LSPAny(`{"token":"` + *tc.token + `"}`)
			err = stranger.Call(t.Context(), protocol.MethodInitialize, &lsp.InitializeParams{InitializationOptions: opts}, nil)
			wantCode(t, tc.name+": initialize", err, protocol.CodeInvalidParams, "initializationOptions.token: "+tc.want)
			awaitDone(t, tc.name, stranger.Done())
		}
		if _, err := env.Editor.Servers(t.Context()); err != nil {
			t.Errorf("the frontend with the token, after the refusals: %v", err)
		}
	}, servertest.Modes(servertest.MultiModes))
}

// The stdio sidecar: exit after shutdown ends it cleanly; exit without
// shutdown, or stdin closed, stops every server all the same but says so
// (LSP's exit status 1).
func TestRunStdio(t *testing.T) {
	for _, tc := range []struct {
		name     string
		shutdown bool
		end      func(c *frontend.Client, stdin io.Closer) error
		want     error
	}{
		{"shutdown then exit", true, func(c *frontend.Client, _ io.Closer) error { return c.Exit(t.Context()) }, nil},
		{"exit alone", false, func(c *frontend.Client, _ io.Closer) error { return c.Exit(t.Context()) }, server.ErrNoShutdown},
		{"stdin closed", false, func(_ *frontend.Client, stdin io.Closer) error { return stdin.Close() }, server.ErrNoShutdown},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			cfg := filepath.Join(dir, "config.json")
			if err := os.WriteFile(cfg, []byte(`{"mcp": {"servers": [`+servertest.Server("srv", nil)+`]}}`), 0o600); err != nil {
				t.Fatal(err)
			}
			inR, inW := io.Pipe()
			outR, outW := io.Pipe()
			opts := &server.RunOptions{Stdin: inR, Stdout: outW}
			opts.Server.Workspace.ResultsDir = t.TempDir()
			ran := make(chan error, 1)
			go func() {
				ran <- server.Run(t.Context(), opts)
				outW.Close()
			}()
			statuses := make(chan protocol.ServerStatus, 16)
			c := frontend.New(pipeConn{outR, inW}, &frontend.Options{
				Folders: []string{dir}, ConfigPath: cfg,
				OnNotification: func(n frontend.Notification) {
					var st protocol.ServerStatus
					if n.Method == protocol.NotifyServersStatus && n.Decode(&st) == nil && st.State == protocol.StateConnected {
						statuses <- st
					}
				},
			})
			defer c.Close()
			if _, err := c.Initialize(t.Context()); err != nil {
				t.Fatal(err)
			}
			var pid int
			select {
			case st := <-statuses:
				pid = st.PID
			case <-time.After(servertest.HangGuard):
				t.Fatal("srv did not connect")
			}
			if tc.shutdown {
				if err := c.Shutdown(t.Context()); err != nil {
					t.Fatal(err)
				}
			}
			if err := tc.end(c, inW); err != nil {
				t.Fatal(err)
			}
			select {
			case err := <-ran:
				if !errors.Is(err, tc.want) || (tc.want == nil && err != nil) {
					t.Errorf("Run = %v, want %v", err, tc.want)
				}
			case <-time.After(servertest.HangGuard):
				t.Fatal("Run did not return")
			}
			proctest.WantGone(t, pid, "after Run")
		})
	}
}

// pipeConn is the editor's end of a stdio sidecar.
type pipeConn struct {
	io.Reader
	io.WriteCloser
}

// Listen takes loopback addresses and unix sockets only, and replaces the
// socket of a sidecar that died but not that of one that answers.
func TestListen(t *testing.T) {
	for _, tc := range []struct {
		addr string
		ok   bool
	}{
		{"tcp:127.0.0.1:0", true},
		{"tcp:localhost:0", true},
		{"tcp:[::1]:0", true},
		{"tcp:0.0.0.0:0", false},
		{"tcp::0", false},
		{"tcp:192.0.2.1:0", false},
		{"tcp:example.com:0", false},
		{"udp:127.0.0.1:0", false},
		{"127.0.0.1:0", false},
	} {
		ln, addr, err := server.Listen(tc.addr)
		if tc.ok && err != nil && strings.Contains(tc.addr, "::1") && strings.Contains(err.Error(), "cannot assign") {
			continue // no IPv6 loopback on this machine
		}
		if (err == nil) != tc.ok {
			t.Errorf("Listen(%q) = %v, want ok %v", tc.addr, err, tc.ok)
		}
		if err == nil {
			if !strings.HasPrefix(addr, "tcp:") || strings.HasSuffix(addr, ":0") {
				t.Errorf("Listen(%q) address %q, want tcp: with the port chosen", tc.addr, addr)
			}
			ln.Close()
		}
		if !tc.ok && err != nil && strings.HasPrefix(tc.addr, "tcp:") && !strings.Contains(err.Error(), "loopback") {
			t.Errorf("Listen(%q): %v; want the refusal to say loopback only", tc.addr, err)
		}
	}

	sock := filepath.Join(t.TempDir(), "sock")
	ln, addr, err := server.Listen("unix:" + sock)
	if err != nil || addr != "unix:"+sock {
		t.Fatalf("Listen unix = %q, %v", addr, err)
	}
	if fi, err := os.Stat(sock); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("socket mode: %v, %v", fi.Mode(), err)
	}
	if _, _, err := server.Listen("unix:" + sock); err == nil {
		t.Error("a second Listen on a socket that answers succeeded")
	}
	// A dead sidecar's socket: the file stays, nobody answers.
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	ln.Close()
	ln, _, err = server.Listen("unix:" + sock)
	if err != nil {
		t.Fatalf("Listen on a dead sidecar's socket: %v", err)
	}
	ln.Close()
}

// freecode-serve on stdio, as the extension runs it: exit after shutdown
// is status 0, without shutdown 1 (TestBinaryStdioSignal: a signal).
func TestBinaryStdio(t *testing.T) {
	for _, tc := range []struct {
		name string
		end  func(t *testing.T, c *frontend.Client, cmd *exec.Cmd)
		want int
	}{
		{"shutdown and exit", func(t *testing.T, c *frontend.Client, _ *exec.Cmd) {
			if err := c.Shutdown(t.Context()); err != nil {
				t.Fatal(err)
			}
			if err := c.Exit(t.Context()); err != nil {
				t.Fatal(err)
			}
		}, 0},
		{"exit alone", func(t *testing.T, c *frontend.Client, _ *exec.Cmd) {
			if err := c.Exit(t.Context()); err != nil {
				t.Fatal(err)
			}
		}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) { binaryStdio(t, tc.end, tc.want) })
	}
}

// stdioSidecar is freecode-serve started on stdio, as the extension runs
// it, with one server, srv, in its config.
type stdioSidecar struct {
	dir    string // its HOME, and the folder the editor opens
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout io.ReadCloser
	stderr *strings.Builder
	exited chan error // gets what cmd.Wait returns
}

// startStdioSidecar starts one in a fresh temporary HOME.
func startStdioSidecar(t *testing.T) *stdioSidecar {
	t.Helper()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.json")
	if err := os.WriteFile(cfg, []byte(`{"mcp": {"servers": [`+servertest.Server("srv", nil)+`]}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(servertest.BinaryPath(t, "freecode-serve"), "--config", cfg)
	cmd.Env = append(os.Environ(), "HOME="+dir)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := new(strings.Builder)
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	return &stdioSidecar{dir: dir, cmd: cmd, stdin: stdin, stdout: stdout, stderr: stderr, exited: exited}
}

// binaryStdio runs freecode-serve on stdio with one server, connected, has
// end stop it, and checks its exit status is want and the server is gone.
func binaryStdio(t *testing.T, end func(t *testing.T, c *frontend.Client, cmd *exec.Cmd), want int) {
	sc := startStdioSidecar(t)
	cmd, stderr := sc.cmd, sc.stderr
	connected := make(chan int, 4)
	c := frontend.New(pipeConn{sc.stdout, sc.stdin}, &frontend.Options{
		Folders: []string{sc.dir},
		OnNotification: func(n frontend.Notification) {
			var st protocol.ServerStatus
			if n.Method == protocol.NotifyServersStatus && n.Decode(&st) == nil && st.State == protocol.StateConnected {
				connected <- st.PID
			}
		},
	})
	defer c.Close()
	if _, err := c.Initialize(t.Context()); err != nil {
		t.Fatal(err)
	}
	var pid int
	select {
	case pid = <-connected:
	case <-time.After(servertest.HangGuard):
		t.Fatalf("srv did not connect; stderr:\n%s", stderr.String())
	}
	end(t, c, cmd)
	select {
	case <-sc.exited:
	case <-time.After(servertest.HangGuard):
		cmd.Process.Kill()
		t.Fatalf("freecode-serve did not exit; stderr:\n%s", stderr.String())
	}
	if got := cmd.ProcessState.ExitCode(); got != want {
		t.Errorf("exit status %d, want %d; stderr:\n%s", got, want, stderr.String())
	}
	proctest.WantGone(t, pid, "after the sidecar ended")
}

// An editor that closes the sidecar's stdout while it still has an answer
// to write (it sent exit and went away) must not kill the sidecar with
// SIGPIPE before its servers are stopped: the write fails, the connection
// ends, the servers are reaped and the status is 1 (no shutdown came).
func TestBinaryStdoutClosed(t *testing.T) {
	sc := startStdioSidecar(t)
	cmd, stdin, stdout, stderr := sc.cmd, sc.stdin, sc.stdout, sc.stderr
	send := func(body string) {
		t.Helper()
		if _, err := io.WriteString(stdin, "Content-Length: "+strconv.Itoa(len(body))+"\r\n\r\n"+body); err != nil {
			t.Fatal(err)
		}
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"processId":null,"rootUri":null,"capabilities":{}}}`)
	send(`{"jsonrpc":"2.0","method":"initialized","params":{}}`)
	// Read the raw stream until srv is connected, and note its pid.
	pidRe := regexp.MustCompile(`"state":"connected"[^}]*?"pid":(\d+)|"pid":(\d+)[^}]*?"state":"connected"`)
	var seen []byte
	buf := make([]byte, 4096)
	pid := 0
	deadline := time.AfterFunc(servertest.HangGuard, func() { cmd.Process.Kill() })
	for pid == 0 {
		n, err := stdout.Read(buf)
		if err != nil {
			t.Fatalf("reading the sidecar: %v; stderr:\n%s", err, stderr.String())
		}
		seen = append(seen, buf[:n]...)
		if m := pidRe.FindSubmatch(seen); m != nil {
			pid, _ = strconv.Atoi(string(m[1]) + string(m[2]))
		}
	}
	deadline.Stop()
	// The editor goes away: its end of stdout closes, then it asks.
	stdout.Close()
	send(`{"jsonrpc":"2.0","id":2,"method":"freecode/servers","params":{}}`)
	select {
	case <-sc.exited:
	case <-time.After(servertest.HangGuard):
		stdin.Close()
		cmd.Process.Kill()
		t.Fatalf("freecode-serve did not end after its stdout closed; stderr:\n%s", stderr.String())
	}
	stdin.Close()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		t.Fatalf("freecode-serve was killed by %v; stderr:\n%s", ws.Signal(), stderr.String())
	}
	if got := cmd.ProcessState.ExitCode(); got != 1 {
		t.Errorf("exit status %d, want 1 (no shutdown); stderr:\n%s", got, stderr.String())
	}
	proctest.WantGone(t, pid, "after the sidecar ended")
}
