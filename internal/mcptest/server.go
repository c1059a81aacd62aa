// Package mcptest runs scripted MCP servers in memory, for tests that drive
// the real mcp.Conn (through its ConnOptions.Dial hook) or anything built on
// it, and records what the code under test reports so a test can await it.
//
// A Server is a real go-sdk server reached over in-memory transports. A test
// changes its tools while it runs (the server sends tools/list_changed),
// kills its sessions the way a crashing process drops its pipes, makes the
// next connects fail, or mutes it so it answers nothing. A Recorder keeps the
// status and tool events the code under test publishes, and Await waits for
// expectations on them without polling. A LossyServer is a real HTTP one on
// loopback that loses the answers of first calls. NewStdioServer and
// AddBasicTools build the server a test binary re-executed as a stdio
// server runs, and RunCrashServerIfAsked and RunTasksServerIfAsked are whole
// ones.
//
// The package imports the go-sdk and config only, never mcp, so the mcp
// package's own tests can use it.
package mcptest

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/freecode/freecode/config"
)

// ErrConnectRefused is what a Server's Dial returns while FailConnects is in
// force.
var ErrConnectRefused = errors.New("mcptest: connect refused")

// A Server is a scripted MCP server. Its methods are safe for concurrent use,
// tool handlers included (a handler may Kill its own server).
type Server struct {
	name string
	sdk  *mcpsdk.Server
	wg   sync.WaitGroup // one goroutine per live session

	// mu guards the fields below.
	mu       sync.Mutex
	tools    map[string]bool // names of the tools served
	conns    []*serverConn   // the server ends of live sessions
	failNext int             // connects still to refuse; < 0 refuses all
	dials    int             // Dial calls, refused ones included
	muted    chan struct{}   // non-nil while muted; closed on unmute
	requests map[string]int  // requests received, by method
	reqCh    chan struct{}   // closed and replaced on every request
	closed   bool
	closedCh chan struct{}  // closed by Close
	calls    map[string]int // tools/call count, by tool name
}

// NewServer returns a server called name (its serverInfo) serving tools,
// each answering with the default handler (see Handler).
func NewServer(name string, tools ...*mcpsdk.Tool) *Server {
	s := &Server{
		name:     name,
		sdk:      mcpsdk.NewServer(&mcpsdk.Implementation{Name: name, Version: "1.0.0"}, nil),
		tools:    map[string]bool{},
		requests: map[string]int{},
		reqCh:    make(chan struct{}),
		closedCh: make(chan struct{}),
		calls:    map[string]int{},
	}
	s.sdk.AddReceivingMiddleware(s.middleware)
	s.AddTools(tools...)
	return s
}

// Tool returns a tool definition called name that takes any object.
// Options such as annotations can be set on the result.
func Tool(name string) *mcpsdk.Tool {
	return &mcpsdk.Tool{Name: name, Description: "tool " + name, InputSchema: map[string]any{"type": "object"}}
}

// Handler is the default tool handler: it answers with one text content,
// "<tool>: <arguments as JSON>" (no arguments show as {}).
func Handler(_ context.Context, req *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
	args := string(req.Params.Arguments)
	if args == "" || args == "null" {
		args = "{}"
	}
	return &mcpsdk.CallToolResult{Content: []mcpsdk.Content{&mcpsdk.TextContent{Text: req.Params.Name + ": " + args}}}, nil
}

// AddTools adds (or replaces) tools served by the default Handler. Connected
// clients are sent tools/list_changed.
func (s *Server) AddTools(tools ...*mcpsdk.Tool) {
	for _, t := range tools {
		s.AddTool(t, Handler)
	}
}

// AddTool adds (or replaces) one tool with its handler. Connected clients
// are sent tools/list_changed.
func (s *Server) AddTool(t *mcpsdk.Tool, h mcpsdk.ToolHandler) {
	s.mu.Lock()
	s.tools[t.Name] = true
	s.mu.Unlock()
	s.sdk.AddTool(t, h)
}

// RemoveTools stops serving the named tools. Connected clients are sent
// tools/list_changed.
func (s *Server) RemoveTools(names ...string) {
	s.mu.Lock()
	for _, n := range names {
		delete(s.tools, n)
	}
	s.mu.Unlock()
	s.sdk.RemoveTools(names...)
}

// SetTools makes tools, with the default Handler, the whole tool list.
func (s *Server) SetTools(tools ...*mcpsdk.Tool) {
	keep := map[string]bool{}
	for _, t := range tools {
		keep[t.Name] = true
	}
	s.mu.Lock()
	var drop []string
	for n := range s.tools {
		if !keep[n] {
			drop = append(drop, n)
		}
	}
	s.mu.Unlock()
	if len(drop) > 0 {
		s.RemoveTools(drop...)
	}
	s.AddTools(tools...)
}

// ToolNames returns the names of the tools served, sorted.
func (s *Server) ToolNames() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Sorted(maps.Keys(s.tools))
}

// SDK returns the underlying go-sdk server, for what this package does not
// script (prompts, resources, middleware).
func (s *Server) SDK() *mcpsdk.Server { return s.sdk }

// Dial connects a new session of s and returns the client's end, as
// mcp.ConnOptions.Dial wants it. srv is not looked at: use Dialer to route
// several servers by name.
func (s *Server) Dial(ctx context.Context, _ config.Server) (mcpsdk.Transport, error) {
	s.mu.Lock()
	s.dials++
	switch {
	case s.closed:
		s.mu.Unlock()
		return nil, fmt.Errorf("%w: server %s is closed", ErrConnectRefused, s.name)
	case s.failNext != 0:
		if s.failNext > 0 {
			s.failNext--
		}
		s.mu.Unlock()
		return nil, fmt.Errorf("%w: server %s", ErrConnectRefused, s.name)
	}
	s.mu.Unlock()

	serverEnd, clientEnd := mcpsdk.NewInMemoryTransports()
	rec := &recordingTransport{Transport: serverEnd}
	ss, err := s.sdk.Connect(ctx, rec, nil)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.conns = append(s.conns, rec.conn)
	s.mu.Unlock()
	s.wg.Go(func() {
		_ = ss.Wait()
		s.mu.Lock()
		s.conns = slices.DeleteFunc(s.conns, func(c *serverConn) bool { return c == rec.conn })
		s.mu.Unlock()
	})
	return clientEnd, nil
}

// Dials returns how many times Dial was called, refused calls included.
func (s *Server) Dials() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dials
}

// Sessions returns how many sessions are live.
func (s *Server) Sessions() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns)
}

// Kill drops every live session at the transport, the way a process that
// dies drops its pipes: calls in flight get no answer and the client sees
// its connection end. It is safe to call from a tool handler. The next Dial
// connects as usual, unless FailConnects says otherwise.
func (s *Server) Kill() {
	s.mu.Lock()
	conns := slices.Clone(s.conns)
	s.mu.Unlock()
	for _, c := range conns {
		_ = c.Connection.Close()
	}
}

// FailConnects makes the next n calls of Dial fail with ErrConnectRefused;
// n < 0 fails every call until FailConnects(0).
func (s *Server) FailConnects(n int) {
	s.mu.Lock()
	s.failNext = n
	s.mu.Unlock()
}

// Mute makes the server answer nothing, initialize and ping included, until
// Unmute: requests wait (their handlers stay blocked) until the client
// gives up on them, the session ends, or Unmute.
func (s *Server) Mute() {
	s.mu.Lock()
	if s.muted == nil {
		s.muted = make(chan struct{})
	}
	s.mu.Unlock()
}

// Unmute lets requests through again, the waiting ones included.
func (s *Server) Unmute() {
	s.mu.Lock()
	if s.muted != nil {
		close(s.muted)
		s.muted = nil
	}
	s.mu.Unlock()
}

// Requests returns how many requests of method the server has received
// (muted ones included), e.g. "ping", "tools/list", "tools/call".
func (s *Server) Requests(method string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests[method]
}

// Calls returns how many tools/call requests named tool have arrived.
func (s *Server) Calls(tool string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[tool]
}

// AwaitRequests waits, within ctx, until the server has received n requests
// of method.
func (s *Server) AwaitRequests(ctx context.Context, method string, n int) error {
	for {
		s.mu.Lock()
		got, ch := s.requests[method], s.reqCh
		s.mu.Unlock()
		if got >= n {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("server %s received %d %s requests, want %d: %w", s.name, got, method, n, ctx.Err())
		}
	}
}

// Close ends every session, releases muted requests, refuses later dials
// and waits until no goroutine of the server is left.
func (s *Server) Close() {
	s.mu.Lock()
	if !s.closed {
		s.closed = true
		close(s.closedCh)
	}
	s.mu.Unlock()
	s.Kill()
	s.wg.Wait()
}

func (s *Server) middleware(next mcpsdk.MethodHandler) mcpsdk.MethodHandler {
	return func(ctx context.Context, method string, req mcpsdk.Request) (mcpsdk.Result, error) {
		s.mu.Lock()
		s.requests[method]++
		if p, ok := req.GetParams().(*mcpsdk.CallToolParamsRaw); ok && method == "tools/call" {
			s.calls[p.Name]++
		}
		close(s.reqCh)
		s.reqCh = make(chan struct{})
		muted := s.muted
		s.mu.Unlock()
		if muted != nil {
			select {
			case <-muted:
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-s.closedCh:
				return nil, errors.New("mcptest: server closed")
			}
		}
		return next(ctx, method, req)
	}
}

// recordingTransport hands out its transport's connection and keeps it, so
// Kill can close the server's end under a live session.
type recordingTransport struct {
	mcpsdk.Transport
	conn *serverConn
}

func (t *recordingTransport) Connect(ctx context.Context) (mcpsdk.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	t.conn = &serverConn{Connection: c}
	return t.conn, nil
}

// serverConn is the server's end of one session.
type serverConn struct{ mcpsdk.Connection }

// Dialer returns a Dial function (the shape of mcp.ConnOptions.Dial) that
// reaches each server by its configured name: the entry named "a" dials
// the Server in servers whose key is "a". An unknown name is an error.
func Dialer(servers map[string]*Server) func(ctx context.Context, srv config.Server) (mcpsdk.Transport, error) {
	return func(ctx context.Context, srv config.Server) (mcpsdk.Transport, error) {
		s, ok := servers[srv.Name]
		if !ok {
			return nil, fmt.Errorf("mcptest: no server named %q", srv.Name)
		}
		return s.Dial(ctx, srv)
	}
}
