package server_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"go.lsp.dev/jsonrpc2"

	"github.com/freecode/freecode/internal/frontend"
	"github.com/freecode/freecode/internal/protocol"
	"github.com/freecode/freecode/server"
	"github.com/freecode/freecode/server/servertest"
	"github.com/freecode/freecode/workspace"
)

// openServer returns a sidecar in this process with a token and its
// workspace open on an empty project, as one that listens has; the test's
// end closes it.
func openServer(t *testing.T, logs io.Writer) (*server.Server, string) {
	t.Helper()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.json")
	if err := os.WriteFile(cfg, []byte(`{"mcp": {"servers": []}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	token := server.NewToken()
	opts := &server.Options{Token: token, Workspace: workspace.Options{Root: dir, ConfigPath: cfg, ResultsDir: t.TempDir()}}
	if logs != nil {
		opts.Logger = slog.New(slog.NewTextHandler(logs, nil))
	}
	srv := server.New(opts)
	if err := srv.Open(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv, token
}

// syncBuffer is a buffer safe for concurrent writers: a log.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// listenTCP serves srv on loopback TCP until the test ends, and returns
// the address.
func listenTCP(t *testing.T, srv *server.Server) string {
	t.Helper()
	ln, addr, err := server.Listen("tcp:127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	serveOn(t, srv, ln)
	return addr
}

// serveOn runs srv.Serve on ln until the test ends; it fails the test if
// Serve ends first.
func serveOn(t *testing.T, srv *server.Server, ln net.Listener) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-served; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
}

// dialTCP connects to addr ("tcp:HOST:PORT").
func dialTCP(t *testing.T, addr string) *net.TCPConn {
	t.Helper()
	c, err := net.Dial("tcp", strings.TrimPrefix(addr, "tcp:"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c.(*net.TCPConn)
}

// frame is body framed as LSP frames it.
func frame(body string) string { return fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body) }

// initialize is an initialize request presenting token.
func initialize(token string) string {
	return `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"initializationOptions":{"token":"` + token + `"}}}`
}

// answer reads the next message of s, which must answer a request
// without an error.
func answer(t *testing.T, s jsonrpc2.Stream, what string) {
	t.Helper()
	msg, _, err := s.Read(t.Context())
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if r, ok := msg.(*jsonrpc2.Response); !ok || r.Err() != nil {
		t.Fatalf("%s: answered %#v", what, msg)
	}
}

// wantCut reads what the sidecar sends on c until it closes the
// connection, and fails the test if that includes any answer.
func wantCut(t *testing.T, c net.Conn, what string) {
	t.Helper()
	if msg, _, err := protocol.NewStream(c, nil).Read(t.Context()); err == nil {
		t.Errorf("%s: the sidecar answered %#v, want the connection closed", what, msg)
	}
}

// allocated returns the bytes this process allocated while f ran.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// Over a socket anyone can connect to, a frame that announces a gigabyte
// before initialize is refused at its header and the connection closed:
// the sidecar allocates nothing like it. A frame past the handshake's cap
// is refused before initialize and taken after it; past the cap of the
// rest, it is refused after too.
func TestHandshakeFrameCap(t *testing.T) {
	srv, token := openServer(t, nil)
	addr := listenTCP(t, srv)

	c := dialTCP(t, addr)
	n := allocated(func() {
		io.WriteString(c, "Content-Length: 1000000000\r\n\r\n{")
		c.CloseWrite()
		io.Copy(io.Discard, c) // until the sidecar closes it
	})
	if n > 64<<20 {
		t.Errorf("a gigabyte announced before initialize: the process allocated %d MB", n>>20)
	}

	big := frame(`{"jsonrpc":"2.0","id":2,"method":"freecode/project","params":{"pad":"` + strings.Repeat("x", server.HandshakeFrame) + `"}}`)
	c = dialTCP(t, addr)
	io.WriteString(c, big)
	wantCut(t, c, "a frame past the handshake's cap before initialize")

	c = dialTCP(t, addr)
	s := protocol.NewStream(c, nil)
	io.WriteString(c, frame(initialize(token)))
	answer(t, s, "initialize")
	io.WriteString(c, big)
	answer(t, s, "the same frame after initialize")
	head := `{"jsonrpc":"2.0","id":3,"method":"freecode/project","params":{"pad":"`
	io.WriteString(c, frame(head+strings.Repeat("x", protocol.MaxFrame+1-len(head)-3)+`"}}`)) // fails once the sidecar closed it
	wantCut(t, c, "a frame past the cap after initialize")
}

// A header line that never ends, before initialize, is refused at the
// header's cap and the connection closed; it is not buffered.
func TestHandshakeHeaderLineCap(t *testing.T) {
	srv, token := openServer(t, nil)
	addr := listenTCP(t, srv)
	c := dialTCP(t, addr)
	n := allocated(func() {
		line := bytes.Repeat([]byte("a"), 1<<20)
		for range 64 {
			if _, err := c.Write(line); err != nil {
				break // the sidecar closed it
			}
		}
		c.CloseWrite()
		io.Copy(io.Discard, c)
	})
	if n > 16<<20 {
		t.Errorf("a header line of 64 MB without an end: the process allocated %d MB", n>>20)
	}
	// The sidecar goes on.
	fc, err := frontend.Dial(t.Context(), addr, &frontend.Options{Token: token})
	if err != nil {
		t.Fatal(err)
	}
	defer fc.Close()
	if _, err := fc.Initialize(t.Context()); err != nil {
		t.Errorf("a frontend after the long line: %v", err)
	}
}

// closed reports whether done is closed.
func closed(done <-chan struct{}) bool {
	select {
	case <-done:
		return true
	default:
		return false
	}
}

// A connection that has not presented the token within the handshake's
// deadline is closed: one that sends nothing, one that sends half a
// header, one that reads nothing of what it is answered. One that
// presented it keeps its connection past the deadline.
func TestHandshakeDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		token := server.NewToken()
		srv := server.New(&server.Options{Token: token})
		defer srv.Close()
		serve := func() (net.Conn, chan struct{}) {
			a, b := net.Pipe()
			done := make(chan struct{})
			go func() {
				srv.ServeConn(context.Background(), a)
				close(done)
			}()
			return b, done
		}
		for _, tc := range []struct {
			name string
			send string
		}{
			{"silent", ""},
			{"half a header", "Content-Len"},
			{"reads nothing", frame(`{"jsonrpc":"2.0","id":1,"method":"freecode/servers"}`)},
		} {
			c, done := serve()
			io.WriteString(c, tc.send)
			time.Sleep(server.HandshakeTimeout - time.Millisecond)
			synctest.Wait()
			if closed(done) {
				t.Errorf("%s: closed before the deadline", tc.name)
			}
			time.Sleep(2 * time.Millisecond)
			synctest.Wait()
			if !closed(done) {
				t.Errorf("%s: still open past the deadline", tc.name)
			}
			c.Close()
			<-done
		}

		c, done := serve()
		s := protocol.NewStream(c, nil)
		io.WriteString(c, frame(initialize(token)))
		answer(t, s, "initialize")
		time.Sleep(2 * server.HandshakeTimeout)
		synctest.Wait()
		if closed(done) {
			t.Fatal("a frontend that presented the token was closed at the deadline")
		}
		io.WriteString(c, frame(`{"jsonrpc":"2.0","id":2,"method":"freecode/challenge","params":{"nonce":"`+strings.Repeat("ab", 32)+`"}}`))
		answer(t, s, "a request past the deadline")
		c.Close()
		<-done
	})
}

// pipeListener hands out the server ends of in-memory pipes, counting
// the Accepts: what a synctest bubble can tell "Serve waits" from "Serve
// runs" with, which a socket's accept (a system call) cannot.
type pipeListener struct {
	conns    chan net.Conn
	closed   chan struct{}
	once     sync.Once
	accepted atomic.Int32
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		l.accepted.Add(1)
		return c, nil
	case <-l.closed:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Close() error {
	l.once.Do(func() { close(l.closed) })
	return nil
}

func (l *pipeListener) Addr() net.Addr { return &net.UnixAddr{Name: "pipe", Net: "unix"} }

// Serve accepts at most MaxHandshakes connections that have not
// presented the token; the next waits until one has, or has closed and
// HandshakePenalty passed.
func TestHandshakeSlots(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		token := server.NewToken()
		srv := server.New(&server.Options{Token: token})
		defer srv.Close()
		const more = 3
		ln := &pipeListener{conns: make(chan net.Conn, server.MaxHandshakes+more), closed: make(chan struct{})}
		var clients []net.Conn
		for range server.MaxHandshakes + more {
			a, b := net.Pipe()
			ln.conns <- a
			clients = append(clients, b)
		}
		ctx, cancel := context.WithCancel(context.Background())
		served := make(chan error, 1)
		go func() { served <- srv.Serve(ctx, ln) }()

		synctest.Wait()
		if got := ln.accepted.Load(); got != server.MaxHandshakes {
			t.Errorf("accepted %d connections without the token, want %d", got, server.MaxHandshakes)
		}
		io.WriteString(clients[0], frame(initialize(token)))
		answer(t, protocol.NewStream(clients[0], nil), "initialize")
		synctest.Wait()
		if got := ln.accepted.Load(); got != server.MaxHandshakes+1 {
			t.Errorf("once one presented the token: accepted %d, want %d", got, server.MaxHandshakes+1)
		}
		clients[1].Close()
		synctest.Wait()
		if got := ln.accepted.Load(); got != server.MaxHandshakes+1 {
			t.Errorf("as one closed: accepted %d, want %d until the penalty passed", got, server.MaxHandshakes+1)
		}
		time.Sleep(server.HandshakePenalty)
		synctest.Wait()
		if got := ln.accepted.Load(); got != server.MaxHandshakes+2 {
			t.Errorf("once one closed and the penalty passed: accepted %d, want %d", got, server.MaxHandshakes+2)
		}

		cancel()
		if err := <-served; err != nil {
			t.Errorf("Serve: %v", err)
		}
		for _, c := range clients {
			c.Close()
		}
		for len(ln.conns) > 0 {
			(<-ln.conns).Close()
		}
	})
}

// failingListener fails its first Accepts with errs, then accepts.
type failingListener struct {
	net.Listener
	errs []error // only Serve's goroutine accepts
}

func (l *failingListener) Accept() (net.Conn, error) {
	if len(l.errs) > 0 {
		err := l.errs[0]
		l.errs = l.errs[1:]
		return nil, err
	}
	return l.Listener.Accept()
}

// temporaryError is a net.Error that says it may pass.
type temporaryError struct{}

func (temporaryError) Error() string   { return "try again" }
func (temporaryError) Timeout() bool   { return false }
func (temporaryError) Temporary() bool { return true }

// acceptError is an accept's error of errno, as the net package makes it.
func acceptError(errno syscall.Errno) error {
	return &net.OpError{Op: "accept", Net: "tcp", Err: os.NewSyscallError("accept4", errno)}
}

// An accept that fails for want of descriptors (EMFILE, ENFILE) or with
// another temporary error does not end Serve, which stops every server:
// it is retried, and the next frontend is served. Any other error ends
// it.
func TestAcceptRetriesTemporaryErrors(t *testing.T) {
	var logs syncBuffer
	srv, token := openServer(t, &logs)
	ln, addr, err := server.Listen("tcp:127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	serveOn(t, srv, &failingListener{Listener: ln, errs: []error{
		acceptError(syscall.EMFILE), acceptError(syscall.EMFILE), acceptError(syscall.ENFILE),
		acceptError(syscall.ECONNABORTED), temporaryError{},
	}})
	c, err := frontend.Dial(t.Context(), addr, &frontend.Options{Token: token})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Initialize(t.Context()); err != nil {
		t.Fatalf("a frontend after the failed accepts: %v", err)
	}
	if _, err := c.Project(t.Context()); err != nil {
		t.Errorf("freecode/project: %v", err)
	}
	if got := strings.Count(logs.String(), "accepting a frontend failed; retrying"); got != 5 {
		t.Errorf("%d retries logged, want 5:\n%s", got, logs.String())
	}

	other, _ := openServer(t, nil)
	ln2, _, err := server.Listen("tcp:127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln2.Close()
	broken := errors.New("the listener broke")
	if err := other.Serve(t.Context(), &failingListener{Listener: ln2, errs: []error{broken}}); !errors.Is(err, broken) {
		t.Errorf("Serve on a listener that broke: %v", err)
	}
}

// A frontend that sends request after request and reads none of the
// answers is disconnected once too many wait to be written to it (or, on
// a busy machine, once too many are running: TestTooManyInFlight); the
// other frontends are served all along.
func TestFrontendThatNeverReads(t *testing.T) {
	servertest.Run(t, oneServer, func(t *testing.T, env *servertest.Env) {
		env.Editor.AwaitStatus("srv", protocol.StateConnected)
		sf, err := protocol.ReadServeFile(env.Sandbox.ServeFile)
		if err != nil {
			t.Fatal(err)
		}
		c, err := net.Dial("unix", strings.TrimPrefix(sf.Address, "unix:"))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		io.WriteString(c, frame(initialize(sf.Token)))
		answer(t, protocol.NewStream(c, nil), "initialize")
		sent := 0
		for i := range 20000 {
			if _, err := io.WriteString(c, frame(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"freecode/project"}`, i+2))); err != nil {
				break // disconnected
			}
			sent++
		}
		env.AwaitSidecarLog("disconnecting the frontend")
		if _, err := io.Copy(io.Discard, c); err != nil && !errors.Is(err, syscall.ECONNRESET) {
			t.Errorf("reading what was left for the frontend: %v", err)
		}
		if _, err := env.Editor.Servers(t.Context()); err != nil {
			t.Errorf("the other frontend, after %d requests of the one that reads nothing: %v", sent, err)
		}
		if closed(env.Editor.Done()) {
			t.Error("the other frontend was disconnected too")
		}
	}, servertest.Modes(servertest.Binary))
}

// A frontend with more than MaxInFlight requests running is told why and
// disconnected, its calls cancelled; the others are served all along.
func TestTooManyInFlight(t *testing.T) {
	servertest.Run(t, oneServer, func(t *testing.T, env *servertest.Env) {
		env.Editor.AwaitStatus("srv", protocol.StateConnected)
		greedy := env.Connect("greedy", nil)
		var calls sync.WaitGroup
		for i := range server.MaxInFlight + 1 {
			calls.Go(func() {
				greedy.Execute(context.Background(), call(fmt.Sprintf("g%d", i), "mcp__srv__block", `{"text":"g"}`))
			})
		}
		greedy.AwaitLogMessage(fmt.Sprintf("disconnecting this frontend: it has %d requests in flight", server.MaxInFlight))
		awaitDone(t, "the greedy frontend", greedy.Done())
		calls.Wait()
		if _, err := env.Editor.Servers(t.Context()); err != nil {
			t.Errorf("the other frontend: %v", err)
		}
		if r := execute(t, env.Editor, call("e1", "mcp__srv__echo", `{"text":"still here"}`)); r.IsError {
			t.Errorf("the other frontend's call: %+v", r)
		}
	}, servertest.Modes(servertest.MultiModes))
}
