// Package server is freecode-serve's JSON-RPC surface: the frontend protocol
// (docs/protocol.md; names and wire types in internal/protocol) over one
// workspace.Workspace that every frontend of the sidecar shares.
//
// It is thin on purpose. Each file is one feature: lifecycle.go
// (initialize, initialized, shutdown, exit, workspace folders), servers.go,
// tools.go, permissions.go, project.go, notify.go (the events a frontend is
// told), approver.go (the permission prompts it answers), roots.go (the
// frontends' folders as MCP roots), login.go (OAuth sign-in, the page
// opened by a frontend), relay.go (servers' elicitation and sampling, asked
// of the frontend whose request caused them), resources.go (resources and
// prompts); conn.go is one frontend's connection, limits.go what one
// may cost the sidecar, wire.go the conversions to internal/protocol's
// types, listen.go and run.go the socket, serve.json and the process,
// web.go and webauth.go the browsers' listener (the page, the WebSocket,
// the one-time codes and session cookies), gateway.go the MCP endpoints
// of an editor's own chat, one per server, over this workspace. A
// handler decodes and checks its params, calls the workspace, and maps
// the result and the errors to the wire. The work is below, in workspace/
// and the packages it wires.
//
// A Server serves frontends with ServeConn, one connection each: the
// editor's stdio, or the connections Serve accepts on a socket. With stdio
// the editor's initialize names the project and the config, and the
// workspace opens at initialized; a sidecar that listens opens its
// workspace first (Open) and its frontends must present its token. Every
// request runs on its own goroutine, so a slow tool call never delays
// another request; $/cancelRequest cancels one.
package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"sync"

	"github.com/freecode/freecode/internal/protocol"
	"github.com/freecode/freecode/workspace"
)

// Options configure a Server. A nil *Options means defaults.
type Options struct {
	// Version is reported in initialize's serverInfo.
	Version string
	// Logger receives the server's and the workspace's logs (never
	// stdout: with stdio, stdout is the protocol). Nil means none.
	Logger *slog.Logger
	// Trace, if set, receives every JSON-RPC message of every frontend,
	// one line each (--trace).
	Trace io.Writer
	// Workspace is the workspace's options. Open uses them as they are;
	// without Open, the first frontend's initialize sets Root (its first
	// workspace folder) and ConfigPath (its initializationOptions) where
	// it names them.
	Workspace workspace.Options
	// Token, if set, must be presented by every frontend as
	// initializationOptions.token in initialize; until one has, each of
	// its requests is refused, and a wrong token closes its connection.
	// freecode/challenge proves the server holds it. Until a connection
	// presented it, it gets what limits.go allows a stranger.
	Token string
}

// Server is one sidecar: a workspace and the frontends connected to it.
// Its methods are safe for concurrent use.
type Server struct {
	opts     Options
	logger   *slog.Logger
	done     chan struct{} // see Done
	doneOnce sync.Once     // closes done (finish)
	wg       sync.WaitGroup

	// wsMu serializes opening and closing the workspace, which take a
	// while (files read, processes reaped), apart from mu.
	wsMu sync.Mutex

	// mu guards the fields below.
	mu       sync.Mutex
	ws       *workspace.Workspace
	project  string // the workspace's project root, absolute; "" for none
	state    serverState
	openErr  error // why the workspace a frontend named did not open
	sessions map[*session]struct{}
	nextID   int
	web      *webAuth // ServeWeb's: its codes and browser sessions; nil when not serving
	gateway  *gateway // the chat gateway (gateway.go), once a frontend opened it; closed with the workspace
}

// serverState is where the sidecar as a whole is in its life; each
// frontend's connection has its own lifecycle state too (sessionState).
type serverState int

const (
	serverRunning  serverState = iota
	serverShutDown             // a frontend sent shutdown: every server stopped
	serverClosed               // Close was called
)

func (s serverState) String() string {
	switch s {
	case serverRunning:
		return "running"
	case serverShutDown:
		return "shut down"
	case serverClosed:
		return "closed"
	}
	return fmt.Sprintf("serverState(%d)", int(s))
}

// New returns a Server with no workspace yet.
func New(opts *Options) *Server {
	s := &Server{done: make(chan struct{}), sessions: make(map[*session]struct{})}
	if opts != nil {
		s.opts = *opts
	}
	s.logger = s.opts.Logger
	if s.logger == nil {
		s.logger = slog.New(slog.DiscardHandler)
	}
	if s.opts.Workspace.Logger == nil {
		s.opts.Workspace.Logger = s.logger
	}
	return s
}

// Open opens the workspace now, from Options.Workspace, for every frontend
// to share: what a sidecar listening on a socket does at start. Its
// frontends' initialize then names roots, not the project.
func (s *Server) Open(ctx context.Context) error {
	s.wsMu.Lock()
	defer s.wsMu.Unlock()
	s.mu.Lock()
	if s.ws != nil || s.state != serverRunning {
		s.mu.Unlock()
		return errors.New("opening the workspace: it is open already, or the server stopped")
	}
	s.mu.Unlock()
	opts, err := s.workspaceOptions(s.opts.Workspace)
	if err != nil {
		return err
	}
	// The frontends that will answer elicitation and sampling come and go
	// after this: both are declared, and a question whose frontend did not
	// declare it is declined or refused without being sent (relay.go).
	opts.Elicitation, opts.Sampling = true, true
	if opts.Root != "" {
		opts.Roots = []string{opts.Root}
	}
	w, err := workspace.New(ctx, &opts)
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.ws, s.project = w, opts.Root
	s.mu.Unlock()
	return nil
}

// openFor opens the workspace for the project and config a frontend's
// initialize named, unless one is open: the stdio sidecar's workspace. The
// servers are told of elicitation and sampling as far as caps, what that
// frontend answers, says.
func (s *Server) openFor(ctx context.Context, root, configPath string, caps protocol.ClientCapabilities) (*workspace.Workspace, error) {
	s.wsMu.Lock()
	defer s.wsMu.Unlock()
	s.mu.Lock()
	w, state := s.ws, s.state
	s.mu.Unlock()
	if state != serverRunning {
		return nil, errShutDown
	}
	if w != nil {
		return w, nil
	}
	// What the frontend named wins over the defaults of the command line.
	opts := s.opts.Workspace
	if root != "" {
		opts.Root = root
	}
	if configPath != "" {
		opts.ConfigPath = configPath
	}
	opts.Elicitation = opts.Elicitation || caps.Elicitation
	opts.Sampling = opts.Sampling || caps.Sampling
	opts, err := s.workspaceOptions(opts)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.project = opts.Root
	s.mu.Unlock()
	opts.Roots = s.roots()
	w, err = workspace.New(ctx, &opts)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.ws = w
	s.mu.Unlock()
	return w, nil
}

// workspaceOptions completes what Open and openFor give the workspace:
// sign-in pages go to a frontend unless an opener was set, and the root
// is absolute.
func (s *Server) workspaceOptions(opts workspace.Options) (workspace.Options, error) {
	if opts.OpenURL == nil {
		opts.OpenURL = s.openURL
	}
	// Frontends were told of the tasks the sidecar follows: a sidecar
	// started anew follows them on (tasks.go).
	opts.KeepTasks = true
	if opts.Root != "" {
		abs, err := filepath.Abs(opts.Root)
		if err != nil {
			return opts, err
		}
		opts.Root = abs
	}
	return opts, nil
}

// workspace returns the open workspace, or the error a request gets
// without one.
func (s *Server) workspace() (*workspace.Workspace, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.state != serverRunning:
		return nil, errShutDown
	case s.ws == nil && s.openErr != nil:
		return nil, fmt.Errorf("the workspace did not open: %w", s.openErr)
	case s.ws == nil:
		return nil, errNoWorkspace
	}
	return s.ws, nil
}

// setOpenErr records why the workspace did not open.
func (s *Server) setOpenErr(err error) {
	s.mu.Lock()
	s.openErr = err
	s.mu.Unlock()
}

// stopWorkspace stops every MCP server and reaps every process: shutdown.
// The server takes no more requests after it.
func (s *Server) stopWorkspace(next serverState) {
	s.wsMu.Lock()
	defer s.wsMu.Unlock()
	s.mu.Lock()
	if s.state < next {
		s.state = next
	}
	w, g := s.ws, s.gateway
	s.ws, s.gateway = nil, nil
	s.mu.Unlock()
	if g != nil {
		g.Close() // its MCP servers are over the workspace
	}
	if w != nil {
		w.Close()
	}
}

// finish closes Done.
func (s *Server) finish() { s.doneOnce.Do(func() { close(s.done) }) }

// Done is closed once the frontend that sent shutdown has gone (it sent
// exit, or closed its connection; the answer to its shutdown is written
// first), or Close was called: a sidecar that listens then ends.
func (s *Server) Done() <-chan struct{} { return s.done }

// Close ends every frontend's connection (their requests cancelled, their
// prompts answered deny), stops every MCP server, reaps every process and
// waits for all of it. It is safe to call more than once.
func (s *Server) Close() error {
	s.mu.Lock()
	s.state = serverClosed // no new frontend (add), no new request
	s.mu.Unlock()
	for _, sess := range s.sessionsNow() {
		sess.end()
	}
	s.wg.Wait()
	s.stopWorkspace(serverClosed)
	s.finish()
	return nil
}

// add registers a frontend; it fails once the server is closed.
func (s *Server) add(sess *session) (id int, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state == serverClosed {
		return 0, false
	}
	s.nextID++
	// Under mu, before the session is in sessions: roots reads the ids
	// of the sessions it finds there.
	sess.id = s.nextID
	s.sessions[sess] = struct{}{}
	s.wg.Add(1)
	return s.nextID, true
}

// remove forgets a frontend whose connection ended; its folders are
// roots no more. One that never completed initialize had none, and
// strangers may come and go by the thousand: nothing changes then.
func (s *Server) remove(sess *session) {
	s.mu.Lock()
	delete(s.sessions, sess)
	s.mu.Unlock()
	sess.mu.Lock()
	counted := sess.state == sessionInitializing || sess.state == sessionInitialized
	sess.mu.Unlock()
	if counted {
		s.rootsChanged()
	}
	s.wg.Done()
}

// sessionsNow returns the frontends connected now.
func (s *Server) sessionsNow() []*session {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*session, 0, len(s.sessions))
	for sess := range s.sessions {
		out = append(out, sess)
	}
	return out
}
