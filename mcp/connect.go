package mcp

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/freecode/freecode/config"
	"github.com/freecode/freecode/internal/canonjson"
	"github.com/freecode/freecode/internal/urlpolicy"
	"github.com/freecode/freecode/mcp/oauth"
	"github.com/freecode/freecode/mcp/proc"
)

// maxToolPages bounds tools/list pagination against a server that never
// stops handing out cursors.
const maxToolPages = 1000

// maxToolListBytes bounds the tool definitions kept from one tools/list, all
// pages together. The page guard alone is no memory bound: 1,000 pages at the
// message cap each would be gigabytes held by one server.
const maxToolListBytes = 64 << 20

// Start connects the server and from then on keeps it connected.
//
// It makes the first connect attempt itself, within ctx and the server's
// timeout, and returns its outcome: nil once connected, or why the attempt
// failed. A failed first attempt is retried in the background with the
// reconnect backoff (0.5 s doubling to 30 s, jittered, 6 tries) while the
// state stays connecting, so a server that is slow to come up on its first
// run (npx fetching its package) is not failed for good; after the last try
// the state is failed. The error then wraps ErrRetrying. With
// ConnOptions.NoRetry, or when ctx ended, the first failure is final: the
// state is failed at once.
//
// A later call while the Conn connects or reconnects waits, within ctx, for
// the next attempt to end (making it at once if the Conn is waiting out a
// backoff) and returns its outcome; on a connected Conn it returns nil.
func (c *Conn) Start(ctx context.Context) error { return c.start(ctx, nil) }

// start is Start, and Login when login is not nil.
func (c *Conn) start(ctx context.Context, login oauth.OpenURLFunc) error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return fmt.Errorf("starting %s: %w", c.srv.Name, ErrNotConnected)
	}
	if c.started {
		c.mu.Unlock()
		if login != nil {
			return fmt.Errorf("signing in to %s: the server was started already; sign in on a new Conn", c.srv.Name)
		}
		return c.awaitAttempt(ctx)
	}
	c.started = true
	c.wg.Add(1) // under mu with !closed, so Close's Wait sees it
	defer c.wg.Done()
	if c.ready == nil {
		c.ready = make(chan struct{})
	}
	c.lastError = ""
	c.attempting = true
	st := c.setStateLocked(StateConnecting)
	c.mu.Unlock()
	c.emitStatus(st)

	s, tools, err := c.connect(ctx, login)
	if err != nil && c.opts.NoRetry && ctx.Err() == nil && retryable(err) && c.takeUnanswered() {
		// A one-shot connect has no later attempt to learn from: a
		// server that answered its discovery only late (a loaded
		// machine) and refused the fallback's initialize, as a server
		// that speaks only the newest protocol does, gets one more,
		// whose discovery waits the whole connect.
		c.logger.Info("the discovery went unanswered and the fallback failed; connecting once more, waiting for the discovery", "error", err)
		s, tools, err = c.connect(ctx, login)
	}
	c.handoverMu.Lock()
	c.mu.Lock()
	if c.closed || err != nil {
		c.handoverMu.Unlock() // nothing to hand over
	}
	if c.closed {
		c.endAttemptLocked()
		c.mu.Unlock()
		if s != nil {
			c.closeSession(s)
		}
		return fmt.Errorf("starting %s: %w", c.srv.Name, ErrNotConnected)
	}
	if err != nil {
		c.noteErrorLocked(err)
		c.endAttemptLocked()
		if c.opts.NoRetry || ctx.Err() != nil || !retryable(err) {
			st := c.setStateLocked(failState(err))
			c.mu.Unlock()
			c.lifeGaveUp(err, 0)
			c.emitStatus(st)
			return fmt.Errorf("starting %s: %w", c.srv.Name, err)
		}
		st := c.statusLocked()
		// The retries start once this failure is told (its log line, its
		// status), so that "retrying 1/6" and the status that carries it
		// come after it.
		told := make(chan struct{})
		c.wg.Go(func() {
			<-told
			c.run(nil, 0)
		})
		c.mu.Unlock()
		c.logger.Warn("first connect failed; retrying", "error", err, "detail", detail(err))
		c.lifeLog(LevelWarning, err.Error())
		c.emitStatus(st)
		close(told)
		return fmt.Errorf("starting %s: %w (%w)", c.srv.Name, err, ErrRetrying)
	}
	st, _ = c.installLocked(s, tools)
	// The supervisor lists the resources and prompts once the server was
	// reported connected, so that their changes are told after it.
	announced := make(chan struct{})
	c.wg.Go(func() {
		<-announced
		c.run(s, 0)
	})
	c.mu.Unlock()
	// The tools first: whoever sees the server connected finds its tools.
	c.emitTools("connected", tools.tools)
	c.handoverMu.Unlock()
	c.lifeConnected(st)
	c.emitStatus(st)
	close(announced)
	return nil
}

// awaitAttempt is Start on a started Conn: see there.
func (c *Conn) awaitAttempt(ctx context.Context) error {
	c.mu.Lock()
	n := c.attempts
	if (c.state == StateConnecting || c.state == StateReconnecting) && !c.attempting {
		select {
		case c.kick <- struct{}{}:
		default:
		}
	}
	c.mu.Unlock()
	for {
		c.mu.Lock()
		state, attempts, lastErr := c.state, c.attempts, c.lastError
		attemptCh, stateCh := c.attemptCh, c.stateCh
		c.mu.Unlock()
		switch {
		case state == StateConnected:
			return nil
		case state != StateConnecting && state != StateReconnecting:
			if lastErr != "" {
				return fmt.Errorf("starting %s: %w (%v): %s", c.srv.Name, ErrNotConnected, state, lastErr)
			}
			return fmt.Errorf("starting %s: %w (%v)", c.srv.Name, ErrNotConnected, state)
		case attempts > n:
			return fmt.Errorf("starting %s: %s (%w)", c.srv.Name, lastErr, ErrRetrying)
		}
		select {
		case <-attemptCh:
		case <-stateCh:
		case <-ctx.Done():
			return fmt.Errorf("starting %s: %w: still %v: %w", c.srv.Name, ErrNotConnected, state, ctx.Err())
		}
	}
}

// configError is a connect failure that comes from the server's entry (a
// variable that is not set), which no retry can mend.
type configError struct{ err error }

func (e *configError) Error() string { return e.err.Error() }
func (e *configError) Unwrap() error { return e.err }

// retryable reports whether another attempt may succeed where err failed:
// not for a problem of the entry, nor for a URL the policy refuses, nor
// while the user has to sign in.
func retryable(err error) bool {
	if f := failureOf(err); f != nil && f.final() {
		return false
	}
	var cerr *configError
	return !errors.As(err, &cerr) && !errors.Is(err, ErrURLRefused) && !errors.Is(err, oauth.ErrNeedsAuth)
}

// takeUnanswered reports whether the attempt that just failed had its
// discovery given up unanswered, and if so makes the next discovery
// patient and not skipped.
func (c *Conn) takeUnanswered() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.unanswered {
		return false
	}
	c.unanswered, c.patient, c.skipDiscovery = false, true, false
	return true
}

// endAttemptLocked records that a connect attempt ended, for awaitAttempt.
// On success the caller installs the session in the same critical section,
// so a waiter never sees an attempt that worked as one that did not.
func (c *Conn) endAttemptLocked() {
	c.attempting = false
	c.attempts++
	close(c.attemptCh)
	c.attemptCh = make(chan struct{})
}

// installLocked makes s, which an attempt just brought up, the live
// session. It returns the status to emit and whether the tools differ from
// the ones held.
func (c *Conn) installLocked(s *session, tools toolList) (Status, bool) {
	c.endAttemptLocked()
	changed := c.setSessionLocked(s, tools)
	return c.setStateLocked(StateConnected), changed
}

// connect brings up one session: transport, initialize, initialized and
// the full tools/list, all within the server's timeout. On error nothing
// is left running. login, for Login, is how a sign-in shows its page.
func (c *Conn) connect(ctx context.Context, login oauth.OpenURLFunc) (s *session, _ toolList, err error) {
	span := c.opts.Telemetry.startConnect(c.srv)
	defer func() { span.end(s, err) }() // after the redactor's defer: err as returned
	lookup, resolved := c.lookupWithSecrets()
	if why := c.policy(c.srv, lookup); why != nil {
		// Final: no retry, no process, no dial.
		return nil, toolList{}, &configError{errors.New(why.String())}
	}
	srv, err := c.srv.Expanded(lookup)
	if err != nil {
		return nil, toolList{}, &configError{err}
	}
	// What this session must never show: a local server's env values and
	// the credentials of the network settings it is passed, a remote one's
	// header values and URL secrets. Errors, the stderr tail and the
	// Conn's logs all go through red.
	secrets := append(envSecrets(c.srv, srv, lookup), *resolved...)
	if srv.Type == config.TypeLocal {
		// The proxy and index URLs it gets from the sidecar's environment.
		secrets = append(secrets, networkSecrets(c.opts.Environ())...)
	}
	var urlSecrets []string
	if srv.Type == config.TypeRemote {
		urlSecrets = urlEnvValues(c.srv.URL, lookup)
		secrets = append(append(secrets, remoteSecrets(srv)...), urlSecrets...)
	}
	red := urlpolicy.NewRedactor(secrets...)
	c.redactor.Store(red)
	// The sign-in adds its tokens to the redactor as it learns them.
	defer func() { err = c.redactor.Load().Error(err) }()
	// The newest version, its discovery bounded, or a pin (negotiate.go).
	version, probe := c.sessionVersion(srv)
	var flow *oauth.Flow
	if srv.Type == config.TypeRemote && c.opts.Dial == nil {
		fc := oauth.FlowConfig{
			Entry: c.srv, Options: c.opts.Auth, Login: login, StepUps: &c.stepUps,
			StepUp:     c.signInFor, // the Asker of the request refused
			Secrets:    secrets,
			OnRedactor: func(r *urlpolicy.Redactor) { c.redactor.Store(r) },
			Logger:     c.logger,
		}
		if probe != nil {
			fc.OnSignIn = probe.hold
		}
		flow = oauth.NewFlow(srv, fc)
	}
	timeout := srv.Timeout
	if flow != nil {
		timeout = flow.ConnectTimeout(timeout)
	}
	drops := c.dropCount()
	ctx, cancel := c.withStop(ctx)
	defer cancel()
	if r := runnerOf(srv.Command); r != nil && srv.Type == config.TypeLocal && c.opts.Dial == nil {
		// A package runner may be installing: the timeout runs once the
		// server reads, within the first-start budget (runner.go).
		var iw *installWait
		ctx, iw = newInstallWait(ctx, r, timeout, max(timeout, firstStartBudget), c.noticeOnRow)
		iw.offline = offlineFor(srv, r)
		defer iw.stop()
		ctx = context.WithValue(ctx, installWaitKey{}, iw)
		if probe != nil && seesUnreadInput {
			probe.begun = iw.seen.begun
		}
	} else {
		var cancelT context.CancelFunc
		ctx, cancelT = context.WithTimeout(ctx, timeout)
		defer cancelT()
		if probe != nil && seesUnreadInput && srv.Type == config.TypeLocal && c.opts.Dial == nil {
			// The discovery's wait runs once the server reads (inputseen.go).
			seen := newInputSeen()
			probe.begun = seen.begun
			ctx = context.WithValue(ctx, inputSeenKey{}, seen)
		}
	}
	if probe != nil {
		probe.untilHeard = srv.Type == config.TypeRemote && c.opts.Dial == nil
		if flow != nil {
			var abort context.CancelCauseFunc
			ctx, abort = context.WithCancelCause(ctx)
			defer abort(nil)
			probe.failed = func() {
				if err := flow.NeedsAuth(); err != nil {
					abort(err)
				}
			}
		}
		ctx = context.WithValue(ctx, probeKey{}, probe)
	}
	sopts := &mcpsdk.ClientSessionOptions{ProtocolVersion: version}
	defer func() { c.noteNegotiation(ctx, probe, version, s, err) }()

	s = &session{done: make(chan struct{}), lost: make(chan struct{}), listed: make(chan struct{}), relisted: map[string]int{}}
	switch {
	case c.opts.Dial != nil:
		t, err := c.opts.Dial(ctx, srv)
		if err != nil {
			return nil, toolList{}, c.connectError(ctx, timeout, fmt.Errorf("dialing: %w", err), nil, drops)
		}
		cs, err := c.client.Connect(ctx, t, sopts)
		if err != nil {
			return nil, toolList{}, c.connectError(ctx, timeout, fmt.Errorf("initialize: %w", err), nil, drops)
		}
		s.cs = cs
	case srv.Type == config.TypeRemote:
		cs, transport, err := dialRemoteAuth(ctx, c.client, srv, sopts, c.logger, flow, urlSecrets...)
		if err != nil {
			return nil, toolList{}, c.connectError(ctx, timeout, flow.Explain(err), nil, drops)
		}
		s.cs, s.transport = cs, transport
	default:
		s.transport = "stdio"
		if err := c.dialStdio(ctx, srv, sopts, s, red); err != nil {
			return nil, toolList{}, err
		}
	}
	c.wg.Go(func() {
		_ = s.cs.Wait()
		close(s.done)
	})
	tools, err := c.listTools(ctx, s.cs, true) // the session is not published yet
	if err != nil {
		err = c.connectError(ctx, timeout, fmt.Errorf("listing tools: %w", err), s.proc, drops)
		c.closeSession(s)
		if flow != nil {
			err = flow.Explain(err)
		}
		return nil, toolList{}, err
	}
	s.auth = flow
	flow.Connected(s.markLost)
	c.sendLogLevel(ctx, s) // loglevel.go
	s.began = time.Now()
	return s, tools, nil
}

// connectError makes a connect failure readable: a timeout says so, and
// what the server sent that was dropped meanwhile (drops counted dropsBefore
// when the attempt began); a process that died says how.
func (c *Conn) connectError(ctx context.Context, timeout time.Duration, err error, p *proc.Process, dropsBefore int) error {
	var timedOut string
	if iw, _ := ctx.Value(installWaitKey{}).(*installWait); iw != nil {
		timedOut, _ = iw.explain(ctx)
	} else if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		timedOut = fmt.Sprintf("no answer within timeout %v", timeout)
	}
	if timedOut != "" {
		internal := fmt.Errorf("%s: %w", timedOut, err)
		if why := c.dropSince(dropsBefore); why != "" {
			timedOut += fmt.Sprintf(" (the server did send something: %s)", why)
			internal = fmt.Errorf("%w (the server did send something: %s)", internal, why)
		}
		err = &Failure{Kind: FailureTimeout, Msg: timedOut, ExitCode: -1, Err: internal}
	}
	if p != nil {
		if perr := p.ExitError(); perr != nil {
			err = fmt.Errorf("%w (%v)", err, perr)
		}
	}
	return err
}

// noteDrop records a message the stdio filter dropped: lastError and a
// status event say so at once, and a call or connect that then times out
// says it too (a dropped answer whose id was readable fails its call
// directly).
func (c *Conn) noteDrop(msg string) {
	c.mu.Lock()
	c.drops++
	c.lastDrop = msg
	c.lastError = msg
	st := c.statusLocked()
	c.mu.Unlock()
	c.emitStatus(st)
}

// dropCount returns how many messages have been dropped so far.
func (c *Conn) dropCount() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.drops
}

// dropSince returns why the last message was dropped if any was since
// the count was before, or "".
func (c *Conn) dropSince(before int) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.drops == before {
		return ""
	}
	return c.lastDrop
}

// A toolList is one tools/list result as the Conn keeps it.
type toolList struct {
	// tools hold their schemas as canonical JSON (json.RawMessage), not as
	// the maps the SDK decodes them into: the maps cost about ten times the
	// JSON's bytes, and the list is bounded in those bytes.
	tools []*mcpsdk.Tool
	key   [sha256.Size]byte // equal for equal lists, in whatever order listed
	cut   string            // why the list was cut short, or ""
}

// listTools reads every page of tools/list. A server that repeats a cursor
// or hands out more than maxToolPages pages, or more than c.listBytes of
// definitions, gets the tools read so far, and the list says it was cut.
// Each page's decoded form is dropped once its tools are kept compact, so
// what stays is bounded by c.listBytes, not by what the server sent.
//
// Under the newest protocol the go-sdk keeps the pages it returned (its
// list cache), and CallTool reads them under the SDK's own lock. Only
// while the session is not yet published (ownPages: the connect's first
// list) can no call be reading them, so only then are the cached pages
// rewritten to the compact tools; a re-list leaves them as the SDK holds
// them: one list's worth per session, replaced on the next re-list.
func (c *Conn) listTools(ctx context.Context, cs *mcpsdk.ClientSession, ownPages bool) (toolList, error) {
	type keptTool struct {
		tool *mcpsdk.Tool
		sum  [sha256.Size]byte
	}
	var (
		kept   []keptTool
		cut    string
		seen   = map[string]bool{}
		cursor string
		size   int // canonical bytes of the definitions kept so far
	)
pages:
	for page := 0; ; page++ {
		if page == maxToolPages {
			cut = fmt.Sprintf("the tool list was cut at %d pages: the server kept handing out cursors", maxToolPages)
			break
		}
		res, err := cs.ListTools(ctx, &mcpsdk.ListToolsParams{Cursor: cursor})
		if err != nil {
			return toolList{}, err
		}
		// The page the SDK cached is rewritten to the compact tools kept
		// when no call can be reading it (see above): the cache then
		// holds what the Conn holds.
		var compacted []*mcpsdk.Tool
		if ownPages {
			compacted = res.Tools[:0]
		}
		for _, t := range res.Tools {
			ct, canon, err := compactTool(t)
			if err != nil {
				if ownPages {
					clear(res.Tools)
					res.Tools = nil
				}
				return toolList{}, fmt.Errorf("tools/list: tool %q: %w", t.Name, err)
			}
			if size += len(canon); size > c.listBytes {
				cut = fmt.Sprintf("the tool list was cut at %d tools: the definitions passed the bound of %s on one tool list", len(kept), formatBytes(c.listBytes))
				if ownPages {
					clear(res.Tools[len(compacted):])
					res.Tools = compacted
				}
				break pages
			}
			kept = append(kept, keptTool{ct, sha256.Sum256(canon)})
			if ownPages {
				compacted = append(compacted, ct)
			}
		}
		next := res.NextCursor
		if next == "" {
			break
		}
		if seen[next] {
			cut = fmt.Sprintf("the tool list was cut after %d pages: the server repeated a cursor", page+1)
			break
		}
		seen[next] = true
		cursor = next
	}
	if cut != "" {
		c.logger.Warn("tools/list cut short", "reason", cut, "tools", len(kept))
	}
	list := toolList{tools: make([]*mcpsdk.Tool, len(kept)), cut: cut}
	for i, k := range kept {
		list.tools[i] = k.tool
	}
	// The key goes by name (then content): a server may list in any order.
	slices.SortFunc(kept, func(a, b keptTool) int {
		return cmp.Or(strings.Compare(a.tool.Name, b.tool.Name), bytes.Compare(a.sum[:], b.sum[:]))
	})
	h := sha256.New()
	for _, k := range kept {
		h.Write([]byte(k.tool.Name))
		h.Write([]byte{0})
		h.Write(k.sum[:])
	}
	h.Sum(list.key[:0])
	return list, nil
}

// compactTool returns a copy of t with its schemas as canonical JSON, and
// the canonical JSON of the whole definition (what the list's bound counts).
func compactTool(t *mcpsdk.Tool) (*mcpsdk.Tool, []byte, error) {
	ct := *t
	var err error
	if ct.InputSchema, err = canonicalSchema(t.InputSchema); err != nil {
		return nil, nil, fmt.Errorf("inputSchema: %w", err)
	}
	if ct.OutputSchema, err = canonicalSchema(t.OutputSchema); err != nil {
		return nil, nil, fmt.Errorf("outputSchema: %w", err)
	}
	canon, err := canonjson.AppendValue(nil, &ct)
	return &ct, canon, err
}

// canonicalSchema returns v, a decoded schema, as canonical JSON; nil
// stays nil.
func canonicalSchema(v any) (any, error) {
	if v == nil {
		return nil, nil
	}
	canon, err := canonjson.AppendValue(nil, v)
	if err != nil {
		return nil, err
	}
	return json.RawMessage(canon), nil
}

// formatBytes says n in MiB or KiB, as bounds are set.
func formatBytes(n int) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// closeSession ends s: a local server's process group is stopped (stdin
// EOF, SIGTERM, SIGKILL) and reaped, then the session is closed.
func (c *Conn) closeSession(s *session) {
	if s.proc != nil {
		s.proc.Stop(c.closeGrace, c.termGrace)
	}
	_ = s.cs.Close()
	<-s.done
	c.opts.Telemetry.endSession(c.srv, s)
}
