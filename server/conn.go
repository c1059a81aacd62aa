package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.lsp.dev/jsonrpc2"
	lsp "go.lsp.dev/protocol"

	"github.com/freecode/freecode/internal/hoptrace"
	"github.com/freecode/freecode/internal/protocol"
	"github.com/freecode/freecode/mcp"
	"github.com/freecode/freecode/orchestrator"
	"github.com/freecode/freecode/workspace"
)

// session is one frontend's connection.
type session struct {
	srv *Server
	id  int
	// rwc is the frontend's connection, closed to cut it; one that takes
	// deadlines gets the handshake's.
	rwc io.Closer
	// cookie says the frontend authenticated when its connection was
	// made: a browser's WebSocket that carried the session cookie
	// (web.go). Its initialize needs no token.
	cookie bool
	conn   jsonrpc2.Conn
	logger *slog.Logger
	// cancel ends the session: its requests are cancelled, its prompts
	// answered deny, and ServeConn closes the connection.
	cancel context.CancelFunc
	wg     sync.WaitGroup // the notification forwarder
	out    *outbox        // the notifications waiting for the forwarder
	reqs   protocol.Requests
	// What limits.go keeps of it: whether it presented the token (or
	// needs none), its requests running, whether it is being
	// disconnected for asking too much; handshook frees its handshake
	// slot in Serve, once.
	trusted     atomic.Bool
	inFlight    atomic.Int32
	overloading atomic.Bool
	handshook   func()

	// mu guards the fields below.
	mu      sync.Mutex
	state   sessionState
	folders []string                    // its workspace folders, as paths: its share of the MCP roots
	root    string                      // from initialize: the project root, if it opens the workspace
	config  string                      // from initialize: the config file, likewise
	client  string                      // from initialize: clientInfo.name, to tell the user whose a task is
	caps    protocol.ClientCapabilities // from initialize: what it answers
	showDoc bool                        // from initialize: it takes window/showDocument
	// relay asks it what MCP servers ask during its requests (relay.go):
	// its Asker, set at initialize, the same pointer for all of them.
	relay *relay
}

// sessionState is where a frontend's connection is in the LSP lifecycle.
type sessionState int

const (
	sessionCreated      sessionState = iota // only initialize (and exit) are taken
	sessionInitializing                     // initialize answered; initialized not received yet
	sessionInitialized                      // notifications flow
	sessionShutDown                         // it sent shutdown: only exit is taken
	sessionRefused                          // its initialize had no valid token: closing
)

func (s sessionState) String() string {
	switch s {
	case sessionCreated:
		return "created"
	case sessionInitializing:
		return "initializing"
	case sessionInitialized:
		return "initialized"
	case sessionShutDown:
		return "shut down"
	case sessionRefused:
		return "refused"
	}
	return fmt.Sprintf("sessionState(%d)", int(s))
}

// ServeConn serves one frontend over rwc until the connection ends: the
// frontend closes it or sends exit, or the server closes. It closes rwc.
// Whatever the frontend still had running is cancelled. When the server
// has a token, the frontend gets what limits.go allows one that has not
// presented it until its initialize does.
func (s *Server) ServeConn(ctx context.Context, rwc io.ReadWriteCloser) error {
	return s.serveConn(ctx, framedLink(rwc, func() {}))
}

// link is a frontend's connection as serveConn takes it.
type link struct {
	// rwc is the connection; closing it cuts the frontend off.
	rwc io.Closer
	// newConn makes the JSON-RPC connection over it: LSP framing on a
	// stream (framedLink), a message per frame on a WebSocket (web.go).
	newConn func(*protocol.StreamOptions) jsonrpc2.Conn
	// cookie: see session.cookie.
	cookie bool
	// handshook is called once the frontend presented the token, or its
	// connection ended first.
	handshook func()
}

// framedLink is the link of a stream that carries LSP frames: stdio, a
// unix or TCP socket, a pipe.
func framedLink(rwc io.ReadWriteCloser, handshook func()) link {
	return link{rwc: rwc, handshook: handshook, newConn: func(o *protocol.StreamOptions) jsonrpc2.Conn { return protocol.NewConn(rwc, o) }}
}

// serveConn is ServeConn over any link.
func (s *Server) serveConn(ctx context.Context, l link) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	rwc := l.rwc
	sess := &session{srv: s, rwc: rwc, cookie: l.cookie, out: newOutbox(), cancel: cancel, handshook: sync.OnceFunc(l.handshook)}
	defer sess.leaveHandshake()
	id, ok := s.add(sess)
	if !ok {
		rwc.Close()
		return errShutDown
	}
	defer s.remove(sess)
	sess.logger = s.logger.With("frontend", id)
	if s.opts.Token == "" {
		sess.passHandshake()
	} else {
		sess.startHandshake()
	}
	sopts := &protocol.StreamOptions{
		MaxFrame:         sess.maxFrame,
		MaxPendingWrites: maxQueued,
		OnWriteBacklog: func() {
			sess.overloaded(fmt.Sprintf("it reads nothing: %d messages wait to be written to it", maxQueued), false)
		},
		// The frontend went away, or sent what no frontend may: nothing
		// it asked for is worth finishing.
		OnReadEnd: func(err error) {
			if errors.Is(err, protocol.ErrFrameTooLarge) || errors.Is(err, protocol.ErrHeaderTooLong) {
				// A stranger's is only a debug line: anyone who can
				// connect can make any number of them.
				level := slog.LevelDebug
				if sess.trusted.Load() {
					level = slog.LevelWarn
				}
				sess.logger.Log(ctx, level, "disconnecting the frontend", "reason", err)
			}
			cancel()
		},
		// A refused frontend's connection ends once the answer to its
		// initialize, which says why, is out: jsonrpc2 writes nothing more
		// once Close began.
		AfterWrite: func(error) {
			if sess.refused() {
				cancel()
			}
		},
	}
	if s.opts.Trace != nil {
		sopts.Trace = traceTo(s.opts.Trace, id, s.opts.Token)
	}
	sess.conn = l.newConn(sopts)
	sess.logger.Debug("frontend connected")
	sess.conn.Go(ctx, sess.handle)
	<-ctx.Done()
	sess.out.close()
	sess.leaveTasks()
	// Close waits for the requests in flight, which ctx has cancelled, to
	// be answered, then closes the connection. A frontend that stopped
	// reading would keep an answer, and so Close, waiting forever: after
	// closeGrace its connection is cut.
	closed := make(chan error, 1)
	go func() { closed <- sess.conn.Close() }()
	var err error
	select {
	case err = <-closed:
	case <-time.After(closeGrace):
		sess.logger.Warn("the frontend reads nothing; cutting its connection")
		rwc.Close()
		err = <-closed
	}
	sess.wg.Wait()
	sess.logger.Debug("frontend gone")
	sess.mu.Lock()
	shutDown := sess.state == sessionShutDown
	sess.mu.Unlock()
	if shutDown {
		s.finish()
	}
	return err
}

// closeGrace is how long a frontend's connection may take to close once
// its requests are cancelled: what the answers to them take to be read.
const closeGrace = 5 * time.Second

// refused says whether the frontend's initialize was refused.
func (sess *session) refused() bool {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	return sess.state == sessionRefused
}

// asker returns the session's Asker (see relay.go); nil before
// initialize.
func (sess *session) asker() orchestrator.Asker {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	if sess.relay == nil {
		return nil // not a nil *relay in a non-nil interface
	}
	return sess.relay
}

// takesShowDocument says whether the frontend declared window/showDocument.
func (sess *session) takesShowDocument() bool {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	return sess.showDoc
}

// end ends the session from the server's side.
func (sess *session) end() { sess.cancel() }

// traceTo writes each message of frontend id as one line, the token
// masked: a trace is a log, and a log holds no secret.
func traceTo(w io.Writer, id int, token string) func(protocol.Direction, []byte) {
	var mu sync.Mutex
	return func(dir protocol.Direction, body []byte) {
		if token != "" {
			body = bytes.ReplaceAll(body, []byte(token), []byte("***"))
		}
		body = maskSecrets(body)
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(w, "[%d] %s %s\n", id, dir, bytes.TrimSpace(body))
	}
}

// handler is one request's handler: params in, result out.
type handler func(sess *session, ctx context.Context, params jsonrpc2.RawMessage) (any, error)

// requests are the requests a frontend may send once initialized, by
// method; each runs on its own goroutine.
var requests = map[string]handler{
	protocol.MethodShutdown:         (*session).shutdown,
	protocol.MethodServers:          (*session).servers,
	protocol.MethodServersStart:     (*session).startServer,
	protocol.MethodServersStop:      (*session).stopServer,
	protocol.MethodServersRestart:   (*session).restartServer,
	protocol.MethodServersApprove:   (*session).approveServer,
	protocol.MethodTools:            (*session).tools,
	protocol.MethodToolsDefinitions: (*session).definitions,
	protocol.MethodToolsExecute:     (*session).execute,
	protocol.MethodPermissions:      (*session).permissions,
	protocol.MethodProject:          (*session).project,
	protocol.MethodProjectTrust:     (*session).trust,
	protocol.MethodSecretsSet:       (*session).secretsSet,
	protocol.MethodRegistrySearch:   (*session).registrySearch,
	protocol.MethodRegistryValues:   (*session).registryValues,
	protocol.MethodRegistryInstall:  (*session).registryInstall,
	protocol.MethodServersLogin:     (*session).login,
	protocol.MethodServersLogout:    (*session).logout,
	protocol.MethodResources:        (*session).resources,
	protocol.MethodResourcesRead:    (*session).readResource,
	protocol.MethodPrompts:          (*session).prompts,
	protocol.MethodPromptsGet:       (*session).getPrompt,
	protocol.MethodToolsReview:      (*session).toolsReview,
	protocol.MethodWebCode:          (*session).webCode,
	protocol.MethodGatewayOpen:      (*session).gatewayOpen,
	protocol.MethodTasks:            (*session).tasks,
	protocol.MethodTasksCancel:      (*session).cancelTask,
	protocol.MethodTasksAdopt:       (*session).adoptTask,
	// An Undo of "always allow".
	protocol.MethodPermissionsRemoveAllow: (*session).removeAllow,
}

// handle dispatches one message of the frontend. The lifecycle messages
// run in order on the read loop, since what follows them depends on them,
// and keep nothing of their ctx, which jsonrpc2 recycles once they return;
// every other request releases the loop at once.
func (sess *session) handle(ctx context.Context, req *jsonrpc2.Request) (any, error) {
	switch req.Method() {
	case protocol.MethodInitialize:
		return sess.initialize(req.Params())
	case protocol.MethodInitialized:
		sess.initialized()
		return nil, nil
	case protocol.MethodExit:
		sess.exit()
		return nil, nil
	case protocol.MethodDidChangeWorkspaceFolders:
		sess.didChangeFolders(req.Params())
		return nil, nil
	case protocol.MethodCancelRequest:
		sess.reqs.Cancel(req.Params())
		return nil, nil
	case protocol.MethodChallenge:
		return sess.challenge(req.Params())
	}
	if !req.IsCall() {
		// Notifications the sidecar does not know (LSP's optional $/…
		// ones among them) are ignored: an error here would end the
		// connection.
		return nil, nil
	}
	h, ok := requests[req.Method()]
	if !ok {
		return nil, fmt.Errorf("%q: %w", req.Method(), jsonrpc2.ErrMethodNotFound)
	}
	if err := sess.accepts(req.Method()); err != nil {
		return nil, err
	}
	if !sess.admit() {
		return nil, jsonrpc2.NewError(jsonrpc2.InvalidRequest, req.Method()+": too many requests in flight; the frontend is disconnected")
	}
	defer sess.release()
	ctx, done := sess.reqs.Detach(ctx, req)
	defer done()
	hoptrace.Stage(hoptrace.FromRequest, "1 request → released from the read loop")
	res, err := h(sess, ctx, req.Params())
	if ctx.Err() != nil {
		// $/cancelRequest, or the frontend went away.
		return nil, jsonrpc2.NewError(protocol.CodeRequestCancelled, req.Method()+" was cancelled")
	}
	if err != nil {
		return nil, wireError(err)
	}
	return res, nil
}

// accepts says whether the session takes a request now.
func (sess *session) accepts(method string) error {
	sess.mu.Lock()
	state := sess.state
	sess.mu.Unlock()
	switch state {
	case sessionCreated:
		return jsonrpc2.NewError(protocol.CodeNotInitialized, method+": the connection has not completed initialize")
	case sessionRefused:
		return jsonrpc2.NewError(protocol.CodeNotInitialized, method+": refused: initialize did not present the token of serve.json")
	case sessionShutDown:
		return jsonrpc2.NewError(jsonrpc2.InvalidRequest, method+": the frontend sent shutdown; only exit is taken")
	}
	return nil
}

// Errors of the server's own state.
var (
	errShutDown    = errors.New("the sidecar is shutting down")
	errNoWorkspace = errors.New("the workspace is not open: send initialized first")
)

// wireError maps an error of the workspace to the JSON-RPC error the
// protocol gives it.
func wireError(err error) error {
	var we *jsonrpc2.Error
	switch {
	case errors.As(err, &we):
		return err
	case errors.Is(err, mcp.ErrNoServer):
		return jsonrpc2.NewError(protocol.CodeNoSuchServer, err.Error())
	case errors.Is(err, workspace.ErrNoTask):
		return jsonrpc2.NewError(protocol.CodeInvalidParams, err.Error())
	case errors.Is(err, workspace.ErrNotYourTask):
		return jsonrpc2.NewError(protocol.CodeNotYourTask, err.Error())
	case errors.Is(err, errNoWorkspace):
		return jsonrpc2.NewError(protocol.CodeNotInitialized, err.Error())
	case errors.Is(err, errShutDown), errors.Is(err, workspace.ErrAwaitingApproval), errors.Is(err, errNoProject):
		return jsonrpc2.NewError(jsonrpc2.InvalidRequest, err.Error())
	case errors.Is(err, context.Canceled):
		return jsonrpc2.NewError(protocol.CodeRequestCancelled, err.Error())
	}
	return jsonrpc2.NewError(jsonrpc2.InternalError, err.Error())
}

// invalidParams is a -32602 error naming the field.
func invalidParams(field, format string, args ...any) error {
	return jsonrpc2.NewError(protocol.CodeInvalidParams, "invalid params: "+field+": "+fmt.Sprintf(format, args...))
}

// decode decodes params into v. Absent params are {}; an error names the
// field that does not decode.
func decode(params jsonrpc2.RawMessage, v any) error {
	params = bytes.TrimSpace(params)
	if len(params) == 0 || string(params) == "null" {
		params = []byte("{}")
	}
	err := json.Unmarshal(params, v)
	if err == nil {
		return nil
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		return invalidParams(te.Field, "want %s, got %s", te.Type, te.Value)
	}
	return jsonrpc2.NewError(protocol.CodeInvalidParams, "invalid params: "+err.Error())
}

// has reports whether params has the member key: a boolean that must be
// given cannot be told from false once decoded.
func has(params jsonrpc2.RawMessage, key string) bool {
	var m map[string]json.RawMessage
	if json.Unmarshal(params, &m) != nil {
		return false
	}
	_, ok := m[key]
	return ok
}

// required is the error for a missing required field.
func required(field string) error {
	return invalidParams(field, "required")
}

// notify sends a notification to the frontend. An error only means the
// frontend is gone, which ServeConn sees too.
func (sess *session) notify(method string, params any) {
	if err := sess.conn.Notify(context.Background(), method, params); err != nil {
		sess.logger.Debug("notifying the frontend", "method", method, "error", err)
	}
}

// logMessage sends window/logMessage.
func (sess *session) logMessage(typ lsp.MessageType, msg string) {
	sess.notify(protocol.MethodLogMessage, &lsp.LogMessageParams{Type: typ, Message: msg})
}

// field joins the parts of a field's path: field("calls", 2, "tool") is
// "calls[2].tool".
func field(parts ...any) string {
	var b strings.Builder
	for _, p := range parts {
		switch p := p.(type) {
		case int:
			fmt.Fprintf(&b, "[%d]", p)
		case string:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(p)
		}
	}
	return b.String()
}
