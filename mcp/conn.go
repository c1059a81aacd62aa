package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/freecode/freecode/config"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// ConnOptions configure a Conn. A nil *ConnOptions means defaults.
type ConnOptions struct {
	// Logger receives the Conn's logs, scoped with the server's name.
	Logger *slog.Logger
	// OnStatus is called, from a Conn goroutine, on every state change.
	OnStatus func(Status)
	// OnToolsChanged is called when the server's tool list is first known
	// and whenever it really changes (not on a reconnect with equal tools);
	// tools is nil when the Conn stops or fails.
	OnToolsChanged func(server string, tools []*mcpsdk.Tool)
	// PingInterval is the health-ping period (default config.DefaultPollInterval).
	PingInterval time.Duration
	// Environ returns the sidecar's environment (default os.Environ). It
	// feeds ${env:NAME} expansion and a local server's allowed variables.
	Environ func() []string
	// ClientInfo is what initialize reports as the client.
	ClientInfo *mcpsdk.Implementation
}

// Progress is one progress notification for a tool call.
type Progress struct {
	Progress float64
	Total    float64
	Message  string
}

// Reconnect policy: 0.5 s doubling to 30 s, jittered, 6 tries. A session
// that ends before it was up for stableUptime does not give the tries back:
// a server that connects and then crashes every time is a crash loop, and it
// ends in failed instead of being restarted forever.
const (
	reconnectTries = 6
	backoffMin     = 500 * time.Millisecond
	backoffMax     = 30 * time.Second
	stableUptime   = time.Minute
)

// maxToolPages bounds tools/list pagination against a server that never
// stops handing out cursors.
const maxToolPages = 1000

// maxToolListBytes bounds the tool definitions kept from one tools/list, all
// pages together. The page guard alone is no memory bound: 1,000 pages at the
// message cap each would be gigabytes held by one server.
const maxToolListBytes = 64 << 20

// defaultBackoff is the wait before reconnect attempt n (0-based): the
// doubling delay, jittered to between half and all of it so a fleet of
// servers that died together does not come back in lockstep.
func defaultBackoff(n int) time.Duration {
	d := backoffMin << min(n, 16)
	d = min(d, backoffMax)
	return d/2 + rand.N(d/2+1)
}

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

	// onTools is the Manager's hook: the same events as OnToolsChanged,
	// with a reason.
	onTools func(reason string, tools []*mcpsdk.Tool)

	relist chan struct{} // a tools/list_changed arrived; buffered 1
	stopCh chan struct{} // closed by Close
	wg     sync.WaitGroup

	// mu guards the fields below.
	mu          sync.Mutex
	state       State
	started     bool
	closed      bool
	sess        *session      // the live session, nil unless connected
	ready       chan struct{} // non-nil while connecting/reconnecting; closed when that settles
	stateCh     chan struct{} // closed and replaced on every state change
	tools       []*mcpsdk.Tool
	toolsKey    []byte // canonical JSON of tools, to see real changes
	transport   string
	pid         int
	serverInfo  *ServerInfo
	protoVer    string
	connectedAt time.Time
	lastPing    time.Duration
	lastError   string

	// redactor hides a remote server's secrets (header values, URL
	// password, query and ${env:} values) in errors that the SDK or
	// net/http wrote after connect: lastError, logs, CallTool's errors.
	redactor atomic.Pointer[strings.Replacer]

	progressMu sync.Mutex
	progress   map[string]*progressSub // by progress token
	nextToken  atomic.Uint64
}

// progressSub is one call's progress subscription. The SDK hands
// notifications to its handler on a queue of its own, so one sent just
// before the call's result can reach the handler after the result: the
// stdio line filter counts them as they arrive (seen) and CallTool waits,
// briefly, until the handler has delivered as many.
type progressSub struct {
	fn        func(Progress)
	seen      int
	delivered int
	caughtUp  chan struct{} // non-nil while CallTool waits
}

// session is one live MCP session and, for a local server, its process.
type session struct {
	cs        *mcpsdk.ClientSession
	proc      *process
	transport string
	done      chan struct{} // closed when the session has ended
	lostOnce  sync.Once
	lost      chan struct{} // closed when a call saw the transport fail
}

// markLost records that a call saw the transport fail, so the supervisor
// and the next calls need not wait for the SDK to notice.
func (s *session) markLost() { s.lostOnce.Do(func() { close(s.lost) }) }

// exited is closed when a local server's process exits; nil for remote.
func (s *session) exited() <-chan struct{} {
	if s.proc == nil {
		return nil
	}
	return s.proc.exited
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
// ${env:NAME} references are expanded at each connect.
func NewConn(srv config.Server, opts *ConnOptions) *Conn {
	c := &Conn{
		srv:        srv,
		backoff:    defaultBackoff,
		tries:      reconnectTries,
		stableFor:  stableUptime,
		listBytes:  maxToolListBytes,
		closeGrace: defaultCloseGrace,
		termGrace:  defaultTermGrace,
		relist:     make(chan struct{}, 1),
		stateCh:    make(chan struct{}),
		stopCh:     make(chan struct{}),
		progress:   make(map[string]*progressSub),
	}
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
	c.logger = c.opts.Logger.With("server", srv.Name)
	c.client = mcpsdk.NewClient(c.opts.ClientInfo, &mcpsdk.ClientOptions{
		Logger: c.logger,
		// We serve no roots, sampling or elicitation: declaring none spares
		// servers (server-everything) a roots/list round trip per session.
		Capabilities:                &mcpsdk.ClientCapabilities{},
		ToolListChangedHandler:      c.onListChanged,
		ProgressNotificationHandler: c.onProgress,
	})
	return c
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
	st := Status{
		Name:            c.srv.Name,
		Scope:           c.srv.Scope,
		Type:            c.srv.Type,
		Transport:       c.transport,
		State:           c.state,
		ToolCount:       len(c.tools),
		PID:             c.pid,
		ProtocolVersion: c.protoVer,
		ConnectedAt:     c.connectedAt,
		LastPing:        c.lastPing,
		LastError:       c.lastError,
		StderrTail:      c.tail.snapshot(),
	}
	if st.Type == "" {
		st.Type = config.TypeLocal
	}
	if st.Transport == "" && st.Type == config.TypeLocal {
		st.Transport = "stdio"
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
	if c.opts.OnToolsChanged != nil {
		c.opts.OnToolsChanged(c.srv.Name, tools)
	}
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

// Start connects the server once, within its timeout, and from then on
// keeps it connected. It returns the connect error; the Conn is then
// failed. A second call waits, within ctx, for the first connect to settle.
func (c *Conn) Start(ctx context.Context) error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return fmt.Errorf("starting %s: %w", c.srv.Name, ErrNotConnected)
	}
	if c.started {
		// Started already: wait for that first connect to settle.
		c.mu.Unlock()
		if _, err := c.liveSession(ctx); err != nil {
			return fmt.Errorf("starting %s: %w", c.srv.Name, err)
		}
		return nil
	}
	c.started = true
	c.wg.Add(1) // under mu with !closed, so Close's Wait sees it
	defer c.wg.Done()
	if c.ready == nil {
		c.ready = make(chan struct{})
	}
	c.lastError = ""
	st := c.setStateLocked(StateConnecting)
	c.mu.Unlock()
	c.emitStatus(st)

	s, tools, err := c.connect(ctx)
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		if s != nil {
			c.closeSession(s)
		}
		return fmt.Errorf("starting %s: %w", c.srv.Name, ErrNotConnected)
	}
	if err != nil {
		c.lastError = err.Error()
		st := c.setStateLocked(StateFailed)
		c.mu.Unlock()
		c.emitStatus(st)
		return fmt.Errorf("starting %s: %w", c.srv.Name, err)
	}
	c.setSessionLocked(s, tools)
	st = c.setStateLocked(StateConnected)
	c.wg.Go(func() { c.supervise(s) })
	c.mu.Unlock()
	c.emitStatus(st)
	c.emitTools("connected", tools)
	return nil
}

// setSessionLocked installs a new live session and its tools; it reports
// whether the tools differ from the ones held.
func (c *Conn) setSessionLocked(s *session, tools []*mcpsdk.Tool) bool {
	c.sess = s
	c.transport = s.transport
	c.pid = 0
	if s.proc != nil {
		c.pid = s.proc.pid
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

func (c *Conn) setToolsLocked(tools []*mcpsdk.Tool) bool {
	// Canonical form: sorted by name (a server may list in any order) and
	// marshaled (map keys sorted), so only a real change compares unequal.
	sorted := slices.Clone(tools)
	slices.SortStableFunc(sorted, func(a, b *mcpsdk.Tool) int { return strings.Compare(a.Name, b.Name) })
	key, err := json.Marshal(sorted)
	if err != nil {
		key = nil // unmarshalable tools never compare equal
	}
	changed := key == nil || c.toolsKey == nil || !bytes.Equal(key, c.toolsKey)
	c.tools, c.toolsKey = tools, key
	return changed
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

// connect brings up one session: transport, initialize, initialized and
// the full tools/list, all within the server's timeout. On error nothing
// is left running.
func (c *Conn) connect(ctx context.Context) (_ *session, _ []*mcpsdk.Tool, err error) {
	lookup := c.lookupEnv()
	srv, err := c.srv.Expanded(lookup)
	if err != nil {
		return nil, nil, err
	}
	var urlSecrets []string
	if srv.Type == config.TypeRemote {
		urlSecrets = urlEnvValues(c.srv.URL, lookup)
		red := newRedactor(append(remoteSecrets(srv), urlSecrets...))
		c.redactor.Store(red)
		defer func() { err = redactError(red, err) }()
	}
	timeout := srv.Timeout
	if timeout <= 0 {
		timeout = config.DefaultTimeout
	}
	ctx, cancel := c.withStop(ctx)
	defer cancel()
	ctx, cancelT := context.WithTimeout(ctx, timeout)
	defer cancelT()
	pv := srv.ProtocolVersion
	if pv == "" {
		pv = config.DefaultProtocolVersion
	}
	// A pinned version keeps the SDK from trying server/discover first,
	// which servers older than 2026-07-28 never answer.
	sopts := &mcpsdk.ClientSessionOptions{ProtocolVersion: pv}

	s := &session{done: make(chan struct{}), lost: make(chan struct{})}
	if srv.Type == config.TypeRemote {
		cs, transport, err := dialRemote(ctx, c.client, srv, sopts, c.logger, urlSecrets...)
		if err != nil {
			return nil, nil, c.connectError(ctx, timeout, err, nil)
		}
		s.cs, s.transport = cs, transport
	} else {
		s.transport = "stdio"
		if err := c.dialStdio(ctx, srv, sopts, s); err != nil {
			return nil, nil, err
		}
	}
	c.wg.Go(func() {
		_ = s.cs.Wait()
		close(s.done)
	})
	tools, err := c.listTools(ctx, s.cs)
	if err != nil {
		err = c.connectError(ctx, timeout, fmt.Errorf("listing tools: %w", err), s.proc)
		c.closeSession(s)
		return nil, nil, err
	}
	return s, tools, nil
}

// connectError makes a connect failure readable: a timeout says so, and a
// process that died says how.
func (c *Conn) connectError(ctx context.Context, timeout time.Duration, err error, p *process) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		err = fmt.Errorf("no answer within timeout %v: %w", timeout, err)
	}
	if p != nil {
		if perr := p.exitError(); perr != nil {
			err = fmt.Errorf("%w (%v)", err, perr)
		}
	}
	return err
}

func (c *Conn) dialStdio(ctx context.Context, srv config.Server, sopts *mcpsdk.ClientSessionOptions, s *session) error {
	env := serverEnv(c.opts.Environ(), srv.Env, srv.InheritEnv)
	p, err := startProcess(srv, env, &c.tail, c.logger)
	if err != nil {
		return fmt.Errorf("starting %s: %w", srv.Command[0], err)
	}
	max := srv.MaxMessageBytes
	if max <= 0 {
		max = config.DefaultMaxMessageBytes
	}
	f := newLineFilter(p.stdout, max, c.logger)
	f.onProgress = c.noteProgress
	t := &stdioTransport{filter: f, stdin: p.stdin}
	// Watch the process while initialize runs: a server that exits at once
	// must fail the connect now, not at the timeout.
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	go func() {
		select {
		case <-p.exited:
			cancel(errors.New("server process exited"))
		case <-ctx.Done():
		}
	}()
	cs, err := c.client.Connect(ctx, t, sopts)
	if err != nil {
		timeout := srv.Timeout
		if timeout <= 0 {
			timeout = config.DefaultTimeout
		}
		// An EOF usually means the process is exiting: give it a moment so
		// the error can say how it ended.
		t := time.NewTimer(200 * time.Millisecond)
		select {
		case <-p.exited:
		case <-t.C:
		}
		t.Stop()
		err = c.connectError(ctx, timeout, fmt.Errorf("initialize: %w", err), p)
		p.kill()
		if tail := c.tail.snapshot(); p.exitError() != nil && len(tail) > 0 {
			err = fmt.Errorf("%w; stderr: %s", err, tail[len(tail)-1])
		}
		return err
	}
	s.cs, s.proc = cs, p
	return nil
}

// lookupEnv returns a lookup over the Environ snapshot.
func (c *Conn) lookupEnv() func(string) (string, bool) {
	env := c.opts.Environ()
	return func(name string) (string, bool) {
		for i := len(env) - 1; i >= 0; i-- {
			if k, v, ok := strings.Cut(env[i], "="); ok && k == name {
				return v, true
			}
		}
		return "", false
	}
}

// listTools reads every page of tools/list. A server that repeats a cursor
// or hands out more than maxToolPages pages, or more than maxToolListBytes
// of definitions, gets what was read so far.
func (c *Conn) listTools(ctx context.Context, cs *mcpsdk.ClientSession) ([]*mcpsdk.Tool, error) {
	tools := []*mcpsdk.Tool{}
	seen := map[string]bool{}
	cursor := ""
	size := 0 // bytes of the definitions kept so far
	for page := 0; ; page++ {
		if page == maxToolPages {
			c.logger.Warn("tools/list: stopped after too many pages", "pages", maxToolPages)
			return tools, nil
		}
		res, err := cs.ListTools(ctx, &mcpsdk.ListToolsParams{Cursor: cursor})
		if err != nil {
			return nil, err
		}
		for _, t := range res.Tools {
			b, err := json.Marshal(t)
			if err != nil {
				return nil, fmt.Errorf("tools/list: tool %q: %w", t.Name, err)
			}
			if size += len(b); size > c.listBytes {
				c.logger.Warn("tools/list: tool definitions too large; kept the first ones", "tools", len(tools), "limitBytes", c.listBytes)
				return tools, nil
			}
			tools = append(tools, t)
		}
		if res.NextCursor == "" {
			return tools, nil
		}
		if seen[res.NextCursor] {
			c.logger.Warn("tools/list: server repeated a cursor; stopped paging", "pages", page+1)
			return tools, nil
		}
		seen[res.NextCursor] = true
		cursor = res.NextCursor
	}
}

// closeSession ends s: a local server's process group is stopped (stdin
// EOF, SIGTERM, SIGKILL) and reaped, then the session is closed.
func (c *Conn) closeSession(s *session) {
	if s.proc != nil {
		s.proc.stop(c.closeGrace, c.termGrace)
	}
	_ = s.cs.Close()
	<-s.done
}

func (c *Conn) onListChanged(context.Context, *mcpsdk.ToolListChangedRequest) {
	// The handler runs on the session's read path: re-list elsewhere.
	select {
	case c.relist <- struct{}{}:
	default:
	}
}

func (c *Conn) onProgress(_ context.Context, req *mcpsdk.ProgressNotificationClientRequest) {
	p := req.Params
	if p == nil {
		return
	}
	key := tokenKey(p.ProgressToken)
	c.progressMu.Lock()
	sub := c.progress[key]
	c.progressMu.Unlock()
	if sub == nil {
		c.logger.Debug("progress for an unknown token", "token", key)
		return
	}
	sub.fn(Progress{Progress: p.Progress, Total: p.Total, Message: p.Message})
	c.progressMu.Lock()
	sub.delivered++
	if sub.caughtUp != nil && sub.delivered >= sub.seen {
		close(sub.caughtUp)
		sub.caughtUp = nil
	}
	c.progressMu.Unlock()
}

// noteProgress counts a progress notification read off a server's stdout,
// before the SDK queues it.
func (c *Conn) noteProgress(line []byte) {
	var msg struct {
		Method string `json:"method"`
		Params struct {
			ProgressToken any `json:"progressToken"`
		} `json:"params"`
	}
	if json.Unmarshal(line, &msg) != nil || msg.Method != "notifications/progress" {
		return
	}
	key := tokenKey(msg.Params.ProgressToken)
	c.progressMu.Lock()
	if sub := c.progress[key]; sub != nil {
		sub.seen++
	}
	c.progressMu.Unlock()
}

// progressDrainWait bounds how long a finished call waits for progress
// notifications that arrived before its result.
const progressDrainWait = time.Second

// drainProgress waits until every progress notification of sub that
// arrived before the call's result has been delivered.
func (c *Conn) drainProgress(ctx context.Context, sub *progressSub) {
	c.progressMu.Lock()
	if sub.delivered >= sub.seen {
		c.progressMu.Unlock()
		return
	}
	ch := make(chan struct{})
	sub.caughtUp = ch
	c.progressMu.Unlock()
	t := time.NewTimer(progressDrainWait)
	defer t.Stop()
	select {
	case <-ch:
	case <-t.C:
	case <-ctx.Done():
	}
}

// tokenKey normalizes a progress token: JSON brings numbers back as float64.
func tokenKey(tok any) string {
	switch t := tok.(type) {
	case string:
		return t
	case float64:
		return strconv.FormatFloat(t, 'f', -1, 64)
	default:
		return fmt.Sprint(t)
	}
}

// supervise watches a live session: it pings, re-lists on list_changed,
// and on loss reconnects with backoff until it gives up (failed) or the
// Conn closes.
func (c *Conn) supervise(s *session) {
	ticker := time.NewTicker(c.opts.PingInterval)
	defer ticker.Stop()
	tried := 0 // reconnect tries used by sessions that did not stay up
	upSince := time.Now()
	for {
		lost := c.watch(s, ticker)
		c.closeSession(s)
		if lost == nil {
			return
		}
		if time.Since(upSince) >= c.stableFor {
			tried = 0
		}
		lost = c.hide(lost)
		c.logger.Warn("connection lost; reconnecting", "error", lost)
		c.mu.Lock()
		if c.closed {
			c.mu.Unlock()
			return
		}
		c.sess = nil
		c.pid = 0
		c.lastError = lost.Error()
		c.ready = make(chan struct{})
		st := c.setStateLocked(StateReconnecting)
		c.mu.Unlock()
		c.emitStatus(st)

		var tools []*mcpsdk.Tool
		s, tools, tried = c.reconnect(tried)
		if s == nil {
			return
		}
		upSince = time.Now()
		c.mu.Lock()
		if c.closed {
			c.mu.Unlock()
			c.closeSession(s)
			return
		}
		changed := c.setSessionLocked(s, tools)
		st = c.setStateLocked(StateConnected)
		c.mu.Unlock()
		c.emitStatus(st)
		if changed {
			c.emitTools("reconnected", tools)
		}
	}
}

// reconnect tries what is left of c.tries after the first `tried`, with
// backoff, and returns the new session and how many tries are used up. It
// returns a nil session when it gave up (the Conn is then failed) or the
// Conn closed.
func (c *Conn) reconnect(tried int) (*session, []*mcpsdk.Tool, int) {
	for attempt := tried; attempt < c.tries; attempt++ {
		timer := time.NewTimer(c.backoff(attempt))
		select {
		case <-c.stopCh:
			timer.Stop()
			return nil, nil, tried
		case <-timer.C:
		}
		s, tools, err := c.connect(context.Background())
		if err == nil {
			return s, tools, attempt + 1
		}
		c.logger.Warn("reconnect failed", "attempt", attempt+1, "error", err)
		c.mu.Lock()
		c.lastError = err.Error()
		st := c.statusLocked()
		c.mu.Unlock()
		c.emitStatus(st)
	}
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil, nil, c.tries
	}
	c.tools, c.toolsKey = nil, nil
	st := c.setStateLocked(StateFailed)
	c.mu.Unlock()
	c.emitStatus(st)
	c.emitTools("failed", nil)
	return nil, nil, c.tries
}

// watch returns nil when the Conn closes, or why the session was lost.
func (c *Conn) watch(s *session, ticker *time.Ticker) error {
	for {
		select {
		case <-c.stopCh:
			return nil
		case <-s.done:
			if s.proc != nil {
				if err := s.proc.exitError(); err != nil {
					return err
				}
			}
			return errors.New("session ended")
		case <-s.exited():
			return s.proc.exitError()
		case <-s.lost:
			return errors.New("transport failed during a call")
		case <-c.relist:
			if err := c.relistTools(s); err != nil && !s.ended() {
				c.logger.Warn("re-listing tools after list_changed", "error", c.hide(err))
			}
		case <-ticker.C:
			if err := c.ping(s); err != nil {
				if s.ended() {
					continue // the cases above say why
				}
				return fmt.Errorf("health ping: %w", err)
			}
		}
	}
}

func (c *Conn) timeout() time.Duration {
	if c.srv.Timeout > 0 {
		return c.srv.Timeout
	}
	return config.DefaultTimeout
}

func (c *Conn) ping(s *session) error {
	ctx, cancel := c.withStop(context.Background())
	defer cancel()
	ctx, cancelT := context.WithTimeout(ctx, c.timeout())
	defer cancelT()
	start := time.Now()
	if err := s.cs.Ping(ctx, nil); err != nil {
		return err
	}
	c.mu.Lock()
	c.lastPing = time.Since(start)
	c.mu.Unlock()
	return nil
}

func (c *Conn) relistTools(s *session) error {
	ctx, cancel := c.withStop(context.Background())
	defer cancel()
	ctx, cancelT := context.WithTimeout(ctx, c.timeout())
	defer cancelT()
	tools, err := c.listTools(ctx, s.cs)
	if err != nil {
		return err
	}
	c.mu.Lock()
	if c.sess != s {
		c.mu.Unlock()
		return nil
	}
	changed := c.setToolsLocked(tools)
	st := c.statusLocked()
	c.mu.Unlock()
	if changed {
		c.emitStatus(st)
		c.emitTools("listChanged", tools)
	}
	return nil
}

// CallTool calls a tool. While the Conn reconnects it waits, within ctx,
// for the reconnect. onProgress, if not nil, gets the call's progress
// notifications. An error wrapping ErrConnectionLost means the transport
// died with the call in flight (it may have run); ErrNotConnected means
// it was never sent. A tool's own failure is a result with IsError.
func (c *Conn) CallTool(ctx context.Context, name string, args map[string]any, onProgress func(Progress)) (*mcpsdk.CallToolResult, error) {
	s, err := c.liveSession(ctx)
	if err != nil {
		return nil, fmt.Errorf("calling %s on %s: %w", name, c.srv.Name, err)
	}
	params := &mcpsdk.CallToolParams{Name: name, Arguments: args}
	if onProgress != nil {
		tok := c.srv.Name + "-" + strconv.FormatUint(c.nextToken.Add(1), 10)
		sub := &progressSub{fn: onProgress}
		c.progressMu.Lock()
		c.progress[tok] = sub
		c.progressMu.Unlock()
		defer func() {
			c.drainProgress(ctx, sub)
			c.progressMu.Lock()
			delete(c.progress, tok)
			c.progressMu.Unlock()
		}()
		params.SetProgressToken(tok)
	}
	res, err := s.cs.CallTool(ctx, params)
	if err == nil {
		return res, nil
	}
	err = c.hide(err)
	if ctx.Err() == nil && c.transportLost(s, err) {
		s.markLost()
		return nil, fmt.Errorf("calling %s on %s: %w: %v", name, c.srv.Name, ErrConnectionLost, err)
	}
	return nil, fmt.Errorf("calling %s on %s: %w", name, c.srv.Name, err)
}

// transportLost reports whether a failed call's session died under it. A
// JSON-RPC error from the server is an answer, not a loss; any other error
// is one if the session ends right after or, for a remote server, if it
// no longer answers a ping.
func (c *Conn) transportLost(s *session, err error) bool {
	var werr *jsonrpc.Error
	if errors.As(err, &werr) && werr.Code != codeRejected && !errors.Is(err, mcpsdk.ErrConnectionClosed) {
		return false
	}
	if errors.Is(err, mcpsdk.ErrConnectionClosed) || errors.Is(err, io.EOF) {
		return true
	}
	// The SDK fails pending calls just before the session's end is seen.
	t := time.NewTimer(250 * time.Millisecond)
	defer t.Stop()
	select {
	case <-s.done:
		return true
	case <-s.exited():
		return true
	case <-t.C:
	}
	if s.proc != nil {
		return false
	}
	// Over HTTP a failed POST does not end the SDK's session, so nothing
	// above fires and calls would keep failing until the next health ping
	// instead of waiting for a reconnect. Ask the server now.
	return c.ping(s) != nil
}

// codeRejected is the code of the SDK's internal jsonrpc2.ErrRejected: the
// transport could not deliver the request (a POST that failed), so it is
// no answer from the server.
const codeRejected = -32005

// hide returns err with the server's secrets shown as ***.
func (c *Conn) hide(err error) error { return redactError(c.redactor.Load(), err) }

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
	hadTools := c.tools != nil
	c.tools, c.toolsKey = nil, nil
	c.sess = nil
	c.pid = 0
	prev := c.state
	st := c.setStateLocked(StateStopped)
	if prev == StateDisabled {
		c.state = StateDisabled
		st.State = StateDisabled
	}
	c.mu.Unlock()
	c.wg.Wait()
	c.emitStatus(st)
	if hadTools {
		c.emitTools(reason, nil)
	}
	return nil
}
