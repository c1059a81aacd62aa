package mcp

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

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

func (c *Conn) ping(s *session) error {
	ctx, cancel := c.withStop(context.Background())
	defer cancel()
	ctx, cancelT := context.WithTimeout(ctx, c.srv.Timeout)
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
	ctx, cancelT := context.WithTimeout(ctx, c.srv.Timeout)
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
