package mcp

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Reconnect policy: 0.5 s doubling to 30 s, jittered, 6 retries. A session
// that ends before it was up for stableUptime does not give the retries back:
// a server that connects and then crashes every time is a crash loop, and it
// ends in failed instead of being restarted forever.
const (
	reconnectTries = 6
	backoffMin     = 500 * time.Millisecond
	backoffMax     = 30 * time.Second
	stableUptime   = time.Minute
)

// defaultBackoff is the wait before reconnect attempt n (0-based): the
// doubling delay, jittered to between half and all of it so a fleet of
// servers that died together does not come back in lockstep.
func defaultBackoff(n int) time.Duration {
	d := backoffMin << min(n, 16)
	d = min(d, backoffMax)
	return d/2 + rand.N(d/2+1)
}

func (c *Conn) onListChanged(context.Context, *mcpsdk.ToolListChangedRequest) {
	// The handler runs on the session's read path: re-list elsewhere.
	select {
	case c.relist <- struct{}{}:
	default:
	}
}

// run keeps the Conn connected until it closes or gives up: it watches the
// live session s (pings, re-lists on list_changed) and, when there is none
// (s is nil after a failed first attempt) or it is lost, connects again with
// backoff. tried is how many tries are used up already.
func (c *Conn) run(s *session, tried int) {
	ticker := time.NewTicker(c.opts.PingInterval)
	defer ticker.Stop()
	limit := c.tries
	reconnected := false // with NoRetry: the one reconnect was made
	asked := false       // the next try is a restart the user asked for
	for {
		if s == nil {
			var tools toolList
			s, tools, tried = c.retry(tried, limit, asked)
			asked = false
			if s == nil {
				return
			}
			c.handoverMu.Lock()
			c.mu.Lock()
			if c.closed {
				c.mu.Unlock()
				c.handoverMu.Unlock()
				c.closeSession(s)
				return
			}
			first := !c.haveTools
			st, changed := c.installLocked(s, tools)
			c.mu.Unlock()
			// The tools first, as at the first connect.
			switch {
			case first:
				c.emitTools("connected", tools.tools)
			case changed:
				c.emitTools("reconnected", tools.tools)
			}
			c.handoverMu.Unlock()
			c.lifeConnected(st)
			c.emitStatus(st)
			c.announce()
		}
		upSince := time.Now()
		// Beside the tools: resources and prompts (lists.go).
		c.listFeatures(s, ListResources, ListPrompts)
		close(s.listed)
		lost := c.watch(s, ticker)
		s.endedBy = lost
		c.closeSession(s)
		if lost == nil {
			return
		}
		lost = c.explainExit(s, lost) // stopped: its stderr is drained
		if err := s.auth.NeedsAuth(); err != nil {
			lost = err // the session ended because the user must sign in
		}
		s = nil
		if time.Since(upSince) >= c.stableFor {
			tried = 0
		}
		lost = c.hide(lost)
		c.mu.Lock()
		if c.closed {
			c.mu.Unlock()
			return
		}
		// A restart asked while the session was being lost anyway is this
		// reconnect. Reconnect asks under mu, while the Conn is connected,
		// so none is left over for the next session.
		restarted := errors.Is(lost, errRestart)
		select {
		case <-c.restart:
			restarted = true
		default:
		}
		c.sess = nil
		c.pid = 0
		c.noteErrorLocked(lost)
		if restarted {
			// Asked for: every try is given back and the first comes at
			// once; a one-shot command gets one.
			c.lastError = ""
			tried, limit = 0, c.tries
			if c.opts.NoRetry {
				limit = 1
			} else {
				asked = true
			}
			select {
			case c.kick <- struct{}{}:
			default:
			}
		} else if c.opts.NoRetry {
			// A one-shot command gets one reconnect, after the shortest
			// backoff, so that a read-only or idempotent call whose server
			// died under it can be retried (the orchestrator's rule,
			// orchestrator.Retryable); a second loss, or a failed
			// reconnect, is final.
			if reconnected {
				c.mu.Unlock()
				c.logger.Warn("connection lost again", "error", lost)
				c.lifeGaveUp(lost, 1) // the one reconnect
				c.fail(lost)
				return
			}
			reconnected, tried, limit = true, 0, 1
		}
		c.ready = make(chan struct{})
		st := c.setStateLocked(StateReconnecting)
		c.mu.Unlock()
		if restarted {
			c.logger.Info("restarting: asked by the user")
			c.lifeLog(LevelInfo, "restarting: asked by the user")
		} else {
			c.logger.Warn("connection lost; reconnecting", "error", lost, "detail", detail(lost))
			c.lifeLog(LevelWarning, lost.Error()+"; reconnecting")
		}
		c.emitStatus(st)
	}
}

// errRestart is why the supervisor ended a session that Reconnect asked
// it to end.
var errRestart = errors.New("restarted")

// errNoSession is Reconnect's answer on a Conn with no session to end:
// the caller starts the server anew instead.
var errNoSession = errors.New("no live session")

// Reconnect ends the live session (a local server's process is stopped)
// and connects again at once, with every try of the backoff given back: a
// restart is a reconnect. As for any reconnect, the tools stay registered
// meanwhile, calls wait for the new session, a list equal to the last one
// changes nothing (a different one is told as "reconnected"), and only a
// reconnect that ends in failed drops them. It returns once the first
// attempt ended, as Start does on a reconnecting Conn: nil once connected,
// an error wrapping ErrRetrying while tries are left. A Conn that is
// already reconnecting is kicked to try now. On a Conn with no session
// (connecting, failed, stopped…) it returns errNoSession and does nothing.
func (c *Conn) Reconnect(ctx context.Context) error {
	c.mu.Lock()
	switch {
	case c.closed:
		c.mu.Unlock()
		return errNoSession
	case c.state == StateReconnecting:
		c.mu.Unlock()
		return c.awaitAttempt(ctx)
	case c.state != StateConnected || c.sess == nil:
		c.mu.Unlock()
		return errNoSession
	}
	n := c.announced
	select {
	case c.restart <- struct{}{}:
	default: // one is asked already
	}
	c.mu.Unlock()
	for {
		c.mu.Lock()
		state, announced, lastErr, announceCh, stateCh, closed := c.state, c.announced, c.lastError, c.announceCh, c.stateCh, c.closed
		c.mu.Unlock()
		switch {
		case announced == n && !closed:
			// The first attempt is not over, or not told yet.
		case state == StateConnected:
			return nil
		case state == StateReconnecting:
			return fmt.Errorf("restarting %s: %s (%w)", c.srv.Name, lastErr, ErrRetrying)
		case lastErr != "":
			return fmt.Errorf("restarting %s: %w (%v): %s", c.srv.Name, ErrNotConnected, state, lastErr)
		default:
			return fmt.Errorf("restarting %s: %w (%v)", c.srv.Name, ErrNotConnected, state)
		}
		select {
		case <-announceCh:
		case <-stateCh:
		case <-ctx.Done():
			return fmt.Errorf("restarting %s: %w: still %v: %w", c.srv.Name, ErrNotConnected, state, ctx.Err())
		}
	}
}

// retry tries to connect what is left of limit tries after the first
// `tried`, with backoff, and returns the new session, its tools and how
// many tries are used up. It returns a nil session when it gave up (the
// Conn is then failed) or the Conn closed. A later Start cuts a backoff
// short. With asked, a restart the user asked for comes first, at once:
// it is not a retry (run told it as the restart, at info), so it is
// neither told as "retrying 1/6", a warning, nor counted as one of limit.
func (c *Conn) retry(tried, limit int, asked bool) (*session, toolList, int) {
	first := tried
	if asked {
		first-- // the restart's own try
	}
	for attempt := first; attempt < limit; attempt++ {
		if attempt < tried {
			// Run kicked the restart's try to come at once: that kick
			// is spent here, not on the first retry's backoff.
			select {
			case <-c.kick:
			default:
			}
			select {
			case <-c.stopCh:
				return nil, toolList{}, tried
			default:
			}
		} else {
			wait := c.backoff(attempt)
			c.awaitRetry(attempt+1, limit, wait)
			timer := time.NewTimer(wait)
			select {
			case <-c.stopCh:
				timer.Stop()
				return nil, toolList{}, tried
			case <-timer.C:
			case <-c.kick:
				timer.Stop()
			}
		}
		c.mu.Lock()
		c.attempting = true
		c.retryNext = nil
		st := c.statusLocked()
		c.mu.Unlock()
		c.emitStatus(st) // the try starts: no "retrying in" any more
		s, tools, err := c.connect(context.Background(), nil)
		if err == nil {
			return s, tools, attempt + 1 // the caller ends the attempt
		}
		if attempt < tried {
			c.logger.Warn("restart failed", "error", err, "detail", detail(err))
		} else {
			c.logger.Warn("connect attempt failed", "attempt", attempt+1, "of", limit, "error", err, "detail", detail(err))
		}
		c.mu.Lock()
		again := sameExit(c.lastFailure, failureOf(err))
		if again {
			err = exitedAgain(err)
		}
		c.noteErrorLocked(err)
		c.endAttemptLocked()
		c.mu.Unlock()
		if !retryable(err) || again {
			c.lifeGaveUp(err, 0)
			c.fail(err)
			c.announce()
			return nil, toolList{}, limit
		}
		if attempt+1 < limit {
			// The next turn of the loop tells the status, with when the
			// next try comes.
			c.lifeLog(LevelWarning, err.Error())
			c.announce()
		} else {
			c.lifeGaveUp(err, limit)
		}
	}
	c.fail(nil)
	c.announce()
	return nil, toolList{}, limit
}

// announce records that the supervisor told the outcome of an attempt.
func (c *Conn) announce() {
	c.mu.Lock()
	c.announced++
	close(c.announceCh)
	c.announceCh = make(chan struct{})
	c.mu.Unlock()
}

// fail gives up on the server: its tools go, the state is failed, or
// needsAuth when err says the user must sign in.
func (c *Conn) fail(err error) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	hadTools := c.haveTools
	c.clearToolsLocked()
	hadLists := c.clearListsLocked()
	st := c.setStateLocked(failState(err))
	c.mu.Unlock()
	c.emitStatus(st)
	if hadTools {
		c.emitTools("failed", nil)
	}
	for _, k := range hadLists {
		c.emitList(k, "failed")
	}
}

// watch returns nil when the Conn closes, or why the session was lost.
func (c *Conn) watch(s *session, ticker *time.Ticker) error {
	for {
		select {
		case <-c.stopCh:
			return nil
		case <-s.done:
			return exitOr(s, errors.New("session ended"))
		case <-s.exited():
			return &processExit{s.proc.ExitError()}
		case <-s.lost:
			return exitOr(s, errors.New("transport failed during a call"))
		case <-c.restart:
			return errRestart
		case <-c.relist:
			if err := c.relistTools(s); err != nil && !s.ended() {
				c.logger.Warn("re-listing tools after list_changed", "error", c.hide(err))
			}
		case <-c.relistRes:
			c.listFeatures(s, ListResources)
		case <-c.relistPrompts:
			c.listFeatures(s, ListPrompts)
		case <-ticker.C:
			if stateless(s.cs) {
				// 2026-07-28 has no ping: a server refuses it ("ping" is
				// not supported in the new protocol), which lost the
				// session at every tick. Its requests are independent;
				// the next one finds a server gone.
				continue
			}
			if err := c.ping(s); err != nil {
				if s.ended() {
					continue // the cases above say why
				}
				return fmt.Errorf("health ping: %w", err)
			}
		}
	}
}

// exitSettle bounds how long a session whose transport ended waits for
// its process's exit to be reaped.
const exitSettle = 250 * time.Millisecond

// exitOr returns how s's process ended, if it ends within exitSettle of
// the transport's end, else lost. A server that crashes closes its
// stdout as it exits, so its session sees the pipe end first and the
// exit a moment later: waiting for it says the same thing (the exit code,
// its stderr's last lines; error.type process_exited) whichever came
// first, rather than "connection lost" when the pipe won the race.
func exitOr(s *session, lost error) error {
	if s.proc == nil {
		return lost
	}
	t := time.NewTimer(exitSettle)
	defer t.Stop()
	select {
	case <-s.proc.Exited():
		return &processExit{s.proc.ExitError()}
	case <-t.C:
		return lost
	}
}

func (c *Conn) ping(s *session) error {
	ctx, cancel := c.withStop(context.Background())
	defer cancel()
	ctx, cancelT := context.WithTimeout(ctx, c.srv.Timeout)
	defer cancelT()
	start := time.Now()
	// An error the server answers with is an answer: it lives. A
	// 2026-07-28 server served statelessly has no ping (the go-sdk's
	// answers method not found, or invalid params, as the go-sdk's Ping
	// sends no _meta); counting that as a loss would end the session,
	// and every call and task poll in flight, at each ping.
	if err := s.cs.Ping(ctx, nil); err != nil && !answeredWithError(err) {
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
	ctx, cancelT := context.WithTimeout(ctx, c.srv.Timeout)
	defer cancelT()
	tools, err := c.listTools(ctx, s.cs, false) // calls may be reading the SDK's cached pages
	if err != nil {
		return err
	}
	c.mu.Lock()
	if c.sess != s {
		c.mu.Unlock()
		return nil
	}
	cutBefore := c.toolListCut
	changed := c.setToolsLocked(tools)
	st := c.statusLocked()
	c.mu.Unlock()
	if changed {
		c.emitTools("listChanged", tools.tools)
	}
	if changed || tools.cut != cutBefore {
		c.emitStatus(st) // after the tools, whose count it tells
	}
	return nil
}
