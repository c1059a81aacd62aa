package mcp

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/freecode/freecode/config"
)

// npmModules returns $FREECODE_NPM (interop/node_modules, exported by the
// Makefile). Without it the test skips, unless CI=true.
func npmModules(tb testing.TB) string {
	tb.Helper()
	dir := os.Getenv("FREECODE_NPM")
	if dir == "" {
		if os.Getenv("CI") == "true" {
			tb.Fatal("FREECODE_NPM is not set (CI=true): run `make npm` and export FREECODE_NPM")
		}
		tb.Skip("FREECODE_NPM not set; `make test` sets it for the npm interop tests")
	}
	return dir
}

// lockedBuffer collects a process's output, for failure messages and for
// waiting until it says something.
type lockedBuffer struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	changed chan struct{} // closed and replaced on every write, once waited on
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.changed != nil {
		close(b.changed)
		b.changed = nil
	}
	return b.buf.Write(p)
}

// waitFor waits until the output holds s; it returns false if done is
// closed first.
func (b *lockedBuffer) waitFor(s string, done <-chan struct{}) bool {
	for {
		b.mu.Lock()
		if strings.Contains(b.buf.String(), s) {
			b.mu.Unlock()
			return true
		}
		if b.changed == nil {
			b.changed = make(chan struct{})
		}
		ch := b.changed
		b.mu.Unlock()
		select {
		case <-ch:
		case <-done:
			return false
		}
	}
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// freePort returns a loopback port that was free a moment ago.
func freePort(tb testing.TB) int {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// startEverything runs @modelcontextprotocol/server-everything in mode
// ("streamableHttp" or "sse") on a free loopback port (interop/preload.cjs
// keeps it off other interfaces) and returns its base URL. The process
// group is killed when the test ends.
func startEverything(tb testing.TB, mode string) string {
	tb.Helper()
	npm := npmModules(tb)
	_, file, _, _ := runtime.Caller(0)
	preload := filepath.Join(filepath.Dir(file), "..", "interop", "preload.cjs")
	entry := filepath.Join(npm, "@modelcontextprotocol", "server-everything", "dist", "index.js")
	port := freePort(tb)
	cmd := exec.Command("node", "-r", preload, entry, mode)
	cmd.Env = append(os.Environ(), "PORT="+strconv.Itoa(port))
	var stderr lockedBuffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	ownGroup(cmd)
	if err := cmd.Start(); err != nil {
		tb.Fatalf("starting server-everything: %v", err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	tb.Cleanup(func() { stopGroup(cmd, exited, 3*time.Second) })
	// Both modes say "… port <PORT>" on stderr once they listen.
	if !stderr.waitFor("port "+strconv.Itoa(port), exited) {
		tb.Fatalf("server-everything %s exited before listening:\n%s", mode, stderr.String())
	}
	return "http://" + net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
}

// TestRemoteInteropEverything connects to the TypeScript reference server
// over Streamable HTTP and legacy SSE, with each transport setting.
func TestRemoteInteropEverything(t *testing.T) {
	httpURL := startEverything(t, "streamableHttp") + "/mcp"
	sseURL := startEverything(t, "sse") + "/sse"
	for _, tc := range []struct {
		name, url, transport, want string
	}{
		{"http", httpURL, config.TransportHTTP, config.TransportHTTP},
		{"auto on http", httpURL, config.TransportAuto, config.TransportHTTP},
		{"sse", sseURL, config.TransportSSE, config.TransportSSE},
		{"auto on sse falls back", sseURL, config.TransportAuto, config.TransportSSE},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), remoteHangGuard)
			defer cancel()
			srv := remoteServer(tc.url, tc.transport)
			cs, transport, err := dialRemote(ctx, newTestClient(), srv, nil, nil)
			if err != nil {
				t.Fatalf("dialRemote: %v", err)
			}
			defer cs.Close()
			if transport != tc.want {
				t.Errorf("transport = %q, want %q", transport, tc.want)
			}
			tools, err := cs.ListTools(ctx, nil)
			if err != nil {
				t.Fatalf("ListTools: %v", err)
			}
			if len(tools.Tools) != 13 {
				t.Errorf("server-everything listed %d tools, want 13", len(tools.Tools))
			}
			res, err := cs.CallTool(ctx, &mcpsdk.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "hello"}})
			if err != nil {
				t.Fatalf("CallTool echo: %v", err)
			}
			if got := res.Content[0].(*mcpsdk.TextContent).Text; got != "Echo: hello" {
				t.Errorf("echo = %q, want %q", got, "Echo: hello")
			}
		})
	}
}

// TestRemoteInteropSessionExpired: the TypeScript server answers a request
// for a session it no longer knows with 400; the session must end (so the
// Conn re-initializes) and the call must fail, not hang.
func TestRemoteInteropSessionExpired(t *testing.T) {
	url := startEverything(t, "streamableHttp") + "/mcp"
	ctx, cancel := context.WithTimeout(context.Background(), remoteHangGuard)
	defer cancel()
	cs, _, err := dialRemote(ctx, newTestClient(), remoteServer(url, config.TransportHTTP), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	// End the session behind the client's back.
	req, _ := http.NewRequestWithContext(ctx, http.MethodDelete, url, nil)
	req.Header.Set("Mcp-Session-Id", cs.ID())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	http.DefaultClient.CloseIdleConnections()
	if _, err := cs.CallTool(ctx, &mcpsdk.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "x"}}); !errors.Is(err, mcpsdk.ErrSessionMissing) {
		t.Errorf("CallTool on a deleted session: %v, want ErrSessionMissing", err)
	}
	done := make(chan struct{})
	go func() { cs.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		t.Fatal("the session did not end")
	}
}

// TestConnRemoteInteropEverything: a Conn with a remote config connects to
// server-everything over each transport, reports which one won, lists its
// tools and calls echo.
func TestConnRemoteInteropEverything(t *testing.T) {
	for _, tc := range []struct{ mode, path, want string }{
		{"streamableHttp", "/mcp", config.TransportHTTP},
		{"sse", "/sse", config.TransportSSE},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			srv := remoteServer(startEverything(t, tc.mode)+tc.path, config.TransportAuto)
			srv.Enabled, srv.Scope = true, "user"
			c := startTestConn(t, srv, nil)
			st := c.Status()
			if st.State != StateConnected || st.Transport != tc.want || st.Type != config.TypeRemote || st.ToolCount < 13 {
				t.Errorf("status = %+v, want connected over %s with server-everything's tools", st, tc.want)
			}
			res, err := c.CallTool(t.Context(), "echo", map[string]any{"message": "via conn"}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := res.Content[0].(*mcpsdk.TextContent).Text; got != "Echo: via conn" {
				t.Errorf("echo = %q", got)
			}
		})
	}
}
