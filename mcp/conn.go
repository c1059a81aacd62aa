package mcp

import (
	"context"
	"crypto/sha256"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/freecode/freecode/config"
	"github.com/freecode/freecode/internal/urlpolicy"
	"github.com/freecode/freecode/mcp/oauth"
	"github.com/freecode/freecode/mcp/proc"
	"github.com/freecode/freecode/mcp/tasks"
)

// A Conn is one configured MCP server: it starts it (stdio) or dials it
// (remote), keeps the session healthy, reconnects after a failure and
// serves tool calls. Its methods are safe for concurrent use.
type Conn struct {
	srv    config.Server
	opts   ConnOptions
	logger *slog.Logger
	client *mcpsdk.Client
	tail   tailBuffer

	// Knobs that tests turn.
	backoff    func(attempt int) time.Duration
	tries      int
	stableFor  time.Duration // uptime after which a session's loss resets the tries
	listBytes  int           // bound on one tools/list's definitions (maxToolListBytes)
	closeGrace time.Duration
	termGrace  time.Duration

	// onTools is the Manager's hook, called when the server's tool list is
	// first known and whenever it really changes (not on a reconnect with
	// equal tools), with the reason; tools is nil when the Conn stops or
	// fails.
	onTools func(reason string, tools []*mcpsdk.Tool)

	versions *VersionMemo // ConnOptions.Versions

	// onLists is the Manager's hook for ListChanged (lists.go).
	onLists       func(ListChanged)
	relistRes     chan struct{} // a resources/list_changed arrived; buffered 1
	relistPrompts chan struct{} // a prompts/list_changed arrived; buffered 1

	// inflightMu guards inflight: the requests in flight on each session,
	// with their Asker (asker.go).
	inflightMu sync.Mutex
	inflight   map[*mcpsdk.ClientSession][]*inflight

	relist chan struct{} // a tools/list_changed arrived; buffered 1
	stopCh chan struct{} // closed by Close
	wg     sync.WaitGroup

	kick    chan struct{} // a Start wants the next attempt now; buffered 1
	restart chan struct{} // Reconnect wants the live session ended; buffered 1

	// handoverMu is held from installing a new session until its tools
	// are handed to onTools, so that Wait returns only once whoever
	// registers the tools has the ones this session listed.
	handoverMu sync.Mutex

	// mu guards the fields below.
	mu         sync.Mutex
	state      State
	started    bool
	closed     bool
	attempting bool          // a connect attempt runs
	attempts   int           // connect attempts ended
	attemptCh  chan struct{} // closed and replaced when an attempt ends
	// announced counts the reconnect attempts whose outcome the
	// supervisor has told (tools, then status), and announceCh is closed
	// and replaced at each: what Reconnect waits for, so that its caller
	// finds the tools handed over.
	announced  int
	announceCh chan struct{}
	sess       *session      // the live session, nil unless connected
	ready      chan struct{} // non-nil while connecting/reconnecting; closed when that settles
	stateCh    chan struct{} // closed and replaced on every state change
	tools      []*mcpsdk.Tool
	haveTools  bool              // tools is a server's list (maybe empty), not "none yet"
	toolsKey   [sha256.Size]byte // toolList.key of tools, to see real changes
	transport  string
	pid        int
	// sandbox is Status.Sandbox: set by each sandboxed start, read
	// under mu or not.
	sandbox     atomic.Pointer[string]
	serverInfo  *ServerInfo
	protoVer    string
	connectedAt time.Time
	lastPing    time.Duration
	lastError   string
	// lastFailure is the Failure lastError was told from, for as long as
	// lastError is still failureText; retryNext is the try awaited
	// (failure.go).
	lastFailure *Failure
	failureText string
	retryNext   *Retry
	toolListCut string // why the held tool list was cut short, or ""
	drops       int    // messages the stdio filter dropped, ever
	lastDrop    string // why the last one was dropped
	// skipDiscovery makes the next attempt offer the fallback version at
	// once: a connect failed after a discovery that brought no answer (and
	// the attempt after it the newest again, see noteNegotiation).
	skipDiscovery bool
	// unanswered is set when an attempt failed after its discovery was
	// given up unanswered; patient makes the next discovery wait the
	// whole connect (see Conn.start's second attempt for NoRetry).
	unanswered, patient bool
	lists               listState // resources and prompts (lists.go)
	logLevel            string    // see SetLogLevel

	// redactor hides the secrets of the current session (a local server's
	// env values; a remote one's header values, URL userinfo, query and
	// ${env:} values) in what the server, the SDK or net/http write:
	// lastError, the stderr tail, logs, CallTool's errors.
	redactor atomic.Pointer[urlpolicy.Redactor]

	stepUps oauth.StepUps // sign-ins for more access, across sessions

	progressMu sync.Mutex
	progress   map[string]*progressSub // by progress token
	nextToken  atomic.Uint64
}

// session is one live MCP session and, for a local server, its process.
type session struct {
	cs        *mcpsdk.ClientSession
	proc      *proc.Process
	transport string
	tailFrom  int           // the stderr lines added before the session came up (tailBuffer.count)
	auth      *oauth.Flow   // a remote session's sign-in; nil for others
	done      chan struct{} // closed when the session has ended
	lostOnce  sync.Once
	lost      chan struct{} // closed when a call saw the transport fail

	// listed is closed once the supervisor first listed the session's
	// resources and prompts; relisted counts its listings by kind (read
	// and written by the supervisor alone). See lists.go.
	listed   chan struct{}
	relisted map[string]int

	// began is when the session was made (connect returned it); endedBy
	// why it ended, set by the supervisor before it closes the session
	// (nil: closed by FreeCode). For mcp.client.session.duration.
	began   time.Time
	endedBy error
}

// markLost records that a call saw the transport fail, so the supervisor
// and the next calls need not wait for the SDK to notice.
func (s *session) markLost() { s.lostOnce.Do(func() { close(s.lost) }) }

// exited is closed when a local server's process exits; nil for remote.
func (s *session) exited() <-chan struct{} {
	if s.proc == nil {
		return nil
	}
	return s.proc.Exited()
}

func (s *session) ended() bool {
	select {
	case <-s.done:
		return true
	case <-s.exited():
		return true
	case <-s.lost:
		return true
	default:
		return false
	}
}

// NewConn returns a Conn for srv, not yet started. srv must be validated;
// the defaults of the fields it leaves zero are filled in here
// (config.Server.WithDefaults), and ${env:NAME} references are expanded
// at each connect.
func NewConn(srv config.Server, opts *ConnOptions) *Conn {
	srv = srv.WithDefaults()
	c := &Conn{
		srv:        srv,
		backoff:    defaultBackoff,
		tries:      reconnectTries,
		stableFor:  stableUptime,
		listBytes:  maxToolListBytes,
		closeGrace: proc.CloseGrace,
		termGrace:  proc.TermGrace,
		relist:     make(chan struct{}, 1),
		kick:       make(chan struct{}, 1),
		restart:    make(chan struct{}, 1),
		attemptCh:  make(chan struct{}),
		announceCh: make(chan struct{}),
		stateCh:    make(chan struct{}),
		stopCh:     make(chan struct{}),
		progress:   make(map[string]*progressSub),
	}
	// Resources, prompts, the requests in flight (lists.go, asker.go).
	c.relistRes, c.relistPrompts = make(chan struct{}, 1), make(chan struct{}, 1)
	c.inflight = make(map[*mcpsdk.ClientSession][]*inflight)
	if opts != nil {
		c.opts = *opts
	}
	if c.opts.Logger == nil {
		c.opts.Logger = slog.New(slog.DiscardHandler)
	}
	if c.opts.PingInterval <= 0 {
		c.opts.PingInterval = config.DefaultPollInterval
	}
	if c.opts.Environ == nil {
		c.opts.Environ = os.Environ
	}
	if c.opts.ClientInfo == nil {
		c.opts.ClientInfo = &mcpsdk.Implementation{Name: "freecode", Version: "0.1.0"}
	}
	// An enabled server is about to connect (the Manager starts it right
	// away); a disabled one stays disabled until started by hand.
	c.state = StateConnecting
	c.ready = make(chan struct{})
	if !srv.Enabled {
		c.state = StateDisabled
		c.ready = nil
	}
	c.logger = slog.New(&redactingHandler{inner: c.opts.Logger.Handler(), red: c.redactor.Load}).With("server", srv.Name)
	copts := &mcpsdk.ClientOptions{
		Logger: c.logger,
		// Unless a ClientOptions hook declares them, we serve no roots,
		// sampling or elicitation: declaring none spares servers
		// (server-everything) a roots/list round trip per session. MCP
		// Apps and tasks are declared (apps.go, taskcalls.go).
		Capabilities:                &mcpsdk.ClientCapabilities{},
		ToolListChangedHandler:      c.onListChanged,
		ProgressNotificationHandler: c.onProgress,
		LoggingMessageHandler:       c.onLogMessage,
		ResourceListChangedHandler:  c.onResourcesChanged,
		PromptListChangedHandler:    c.onPromptsChanged,
	}
	declareApps(copts.Capabilities)
	tasks.Declare(copts.Capabilities) // taskcalls.go
	c.declareAskers(copts)
	if c.opts.ClientOptions != nil {
		c.opts.ClientOptions(srv, copts)
	}
	c.client = mcpsdk.NewClient(c.opts.ClientInfo, copts)
	c.client.AddSendingMiddleware(discoveryMiddleware, c.logLevelMiddleware, directAnswers) // negotiate.go, loglevel.go, stdioanswer.go
	if err := tasks.Register(c.client); err != nil {
		panic(err) // only a standard method's name fails, and the extension's are none
	}
	c.versions, c.logLevel = c.opts.Versions, c.opts.LogLevel
	if c.opts.OnClient != nil {
		c.opts.OnClient(srv, c.client)
	}
	return c
}

// notice tells the user, through OnNotice and the log, what FreeCode did
// about the server's start.
func (c *Conn) notice(msg string) {
	c.logger.Warn(msg)
	if c.opts.OnNotice != nil {
		c.opts.OnNotice(c.redactor.Load().String(msg))
	}
}

// noticeOnRow is notice for what a person waiting for the server should
// see on its row while it waits: the status's lastError says it until the
// connect ends, which sets lastError anew.
func (c *Conn) noticeOnRow(msg string) {
	c.notice(msg)
	c.mu.Lock()
	c.lastError = c.redactor.Load().String(msg)
	st := c.statusLocked()
	c.mu.Unlock()
	c.emitStatus(st)
}

// Name returns the server's name.
func (c *Conn) Name() string { return c.srv.Name }

// Config returns the server entry the Conn runs.
func (c *Conn) Config() config.Server { return c.srv }

// Tools returns the server's tools. While the Conn reconnects they are the
// tools of the last session, so the tool set does not flap.
func (c *Conn) Tools() []*mcpsdk.Tool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.tools
}

// Status returns a snapshot of the Conn.
func (c *Conn) Status() Status {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.statusLocked()
}

func (c *Conn) statusLocked() Status {
	st := StatusOf(c.srv, c.state)
	if c.opts.Dial != nil {
		st.Transport = "" // whatever the Dial hook makes of it
	}
	if c.transport != "" {
		st.Transport = c.transport
	}
	st.ToolCount = len(c.tools)
	st.PID = c.pid
	st.ProtocolVersion = c.protoVer
	st.ConnectedAt = c.connectedAt
	st.LastPing = c.lastPing
	st.LastError = c.lastError
	c.failureStatusLocked(&st)
	st.StderrTail = c.tail.snapshot()
	st.ToolListCut = c.toolListCut
	if d := c.sandbox.Load(); d != nil {
		st.Sandbox = *d
	}
	if c.serverInfo != nil {
		si := *c.serverInfo
		st.ServerInfo = &si
	}
	return st
}

func (c *Conn) emitStatus(st Status) {
	if c.opts.OnStatus != nil {
		c.opts.OnStatus(st)
	}
}

func (c *Conn) emitTools(reason string, tools []*mcpsdk.Tool) {
	if c.onTools != nil {
		c.onTools(reason, tools)
	}
}

// setState changes the state under mu and returns the status to emit
// once mu is released.
func (c *Conn) setStateLocked(s State) Status {
	c.state = s
	close(c.stateCh)
	c.stateCh = make(chan struct{})
	if s != StateConnecting && s != StateReconnecting && c.ready != nil {
		close(c.ready)
		c.ready = nil
	}
	return c.statusLocked()
}

// setSessionLocked installs a new live session and its tools; it reports
// whether the tools differ from the ones held.
func (c *Conn) setSessionLocked(s *session, tools toolList) bool {
	c.sess = s
	c.transport = s.transport
	c.pid = 0
	if s.proc != nil {
		c.pid = s.proc.PID()
	}
	c.serverInfo, c.protoVer = nil, ""
	if ir := s.cs.InitializeResult(); ir != nil {
		c.protoVer = ir.ProtocolVersion
		if ir.ServerInfo != nil {
			c.serverInfo = &ServerInfo{Name: ir.ServerInfo.Name, Version: ir.ServerInfo.Version}
		}
	}
	c.connectedAt = time.Now()
	c.lastPing = 0
	c.lastError = ""
	return c.setToolsLocked(tools)
}

// setToolsLocked holds list as the server's tools; it reports whether
// they differ from the ones held (a cut that differs is no tools change).
func (c *Conn) setToolsLocked(list toolList) bool {
	changed := !c.haveTools || list.key != c.toolsKey
	c.tools, c.toolsKey, c.toolListCut, c.haveTools = list.tools, list.key, list.cut, true
	return changed
}

// clearToolsLocked drops the tools: the server is gone.
func (c *Conn) clearToolsLocked() {
	c.tools, c.toolsKey, c.toolListCut, c.haveTools = nil, [sha256.Size]byte{}, "", false
}

// withStop returns ctx, also cancelled when the Conn closes.
func (c *Conn) withStop(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		select {
		case <-c.stopCh:
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, cancel
}

// liveSession returns the connected session, waiting within ctx while the
// Conn connects or reconnects.
func (c *Conn) liveSession(ctx context.Context) (*session, error) {
	for {
		c.mu.Lock()
		state, s, ready, changed := c.state, c.sess, c.ready, c.stateCh
		c.mu.Unlock()
		switch state {
		case StateConnected:
			if !s.ended() {
				return s, nil
			}
			// Dead, and the supervisor is about to say so: wait for that.
			select {
			case <-changed:
			case <-ctx.Done():
				return nil, fmt.Errorf("%w: connection lost: %w", ErrNotConnected, ctx.Err())
			}
		case StateConnecting, StateReconnecting:
			if ready == nil { // cannot happen: set with the state
				return nil, fmt.Errorf("%w (%v)", ErrNotConnected, state)
			}
			select {
			case <-ready:
			case <-ctx.Done():
				return nil, fmt.Errorf("%w: still %v: %w", ErrNotConnected, state, ctx.Err())
			}
		default:
			return nil, fmt.Errorf("%w (%v)", ErrNotConnected, state)
		}
	}
}

// Wait returns once the server is connected, waiting within ctx while the
// Conn connects or reconnects, and once the tools the session listed were
// handed over (ManagerOptions.OnToolsChanged), so that whoever registers
// them has them when Wait returns. It fails at once for a Conn that is
// idle, failed or stopped.
func (c *Conn) Wait(ctx context.Context) error {
	if _, err := c.liveSession(ctx); err != nil {
		return fmt.Errorf("%s: %w", c.srv.Name, err)
	}
	c.handoverMu.Lock()
	c.handoverMu.Unlock() //nolint:staticcheck // an empty critical section: a barrier
	return nil
}

// Close stops the server: the session ends, a local server's process group
// is stopped and reaped, and every goroutine of the Conn has returned.
func (c *Conn) Close() error {
	return c.closeWith("stopped")
}

func (c *Conn) closeWith(reason string) error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		c.wg.Wait()
		return nil
	}
	c.closed = true
	close(c.stopCh)
	// A server started on demand that goes idle keeps its tools: they
	// stay registered, and its status counts them. Its resources and
	// prompts go, as they do when any server stops.
	idle := reason == reasonIdle
	hadTools := c.haveTools && !idle
	if !idle {
		c.clearToolsLocked()
	}
	hadLists := c.clearListsLocked()
	c.sess = nil
	c.pid = 0
	prev := c.state
	next := StateStopped
	if idle {
		next = StateIdle
	}
	st := c.setStateLocked(next)
	if prev == StateDisabled {
		c.state = StateDisabled
		st.State = StateDisabled
	}
	c.mu.Unlock()
	c.wg.Wait()
	if prev != StateDisabled && prev != StateAwaitingApproval && prev != StateIdle {
		c.lifeLog(LevelInfo, reason)
	}
	c.emitStatus(st)
	if hadTools {
		c.emitTools(reason, nil)
	}
	for _, k := range hadLists {
		c.emitList(k, reason)
	}
	return nil
}

// reasonIdle is the close reason of a server started on demand that
// stops for want of calls: its state is idle, its tools stay.
const reasonIdle = "idle"

// markIdle makes a Conn that was never started idle, holding the tools,
// server info and protocol version its manifest lists, for its status.
// It returns the status to emit.
func (c *Conn) markIdle(l *Listing) Status {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.tools = l.Tools
	c.serverInfo, c.protoVer = l.ServerInfo, l.ProtocolVersion
	return c.setStateLocked(StateIdle)
}
