package mcp

import (
	"context"
	"errors"
	"sync"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/freecode/freecode/config"
)

// Servers started on demand ("start": "onDemand").
//
// Such a server is not started by Apply. If ManagerOptions.Manifest knows
// its tools, its Conn is made idle holding them and OnToolsChanged is told
// them with the reason "manifest", so they are registered at once; if it
// does not, the server is started to learn them and goes idle as soon as
// they are listed (and no call is using it). Acquire, which every call of
// one of its tools goes through, starts an idle (or failed) one within
// the call's context; Warm starts one in the background, for a
// tool_search that found one of its tools. Once its last call ends it
// runs for its idle timeout, then its Conn is closed with the reason
// "idle": the state is idle, its tools stay registered and counted. Stop
// stops it as it stops any server, and only Start or a restart brings it
// back.

// Listing is what a server's manifest holds: its last tools/list, with
// its server info and protocol version.
type Listing struct {
	Tools           []*mcpsdk.Tool
	ServerInfo      *ServerInfo
	ProtocolVersion string
}

// demand is an entry's bookkeeping for starting on demand; guarded by
// Manager.mu.
type demand struct {
	inflight int         // calls between Acquire and release
	gen      uint64      // bumped by every Acquire: a timer armed before is stale
	timer    *time.Timer // the idle timer, while armed
	// idling is non-nil while the idle timer closes the Conn; closed when
	// it is done. An Acquire meanwhile waits, then starts a new one.
	idling chan struct{}
}

// idleTimeoutOf returns how long e may run without a call.
func idleTimeoutOf(srv config.Server) time.Duration {
	if srv.IdleTimeout > 0 {
		return srv.IdleTimeout
	}
	return config.DefaultIdleTimeout
}

// launch brings up a new entry's Conn as its start mode says: an eager
// server starts, a server on demand goes idle with its manifest's tools,
// or starts once to learn them. The caller holds e.opMu.
func (m *Manager) launch(ctx context.Context, e *entry) {
	m.mu.Lock()
	c, srv := e.conn, e.cfg
	m.mu.Unlock()
	if !srv.OnDemand() {
		// A failure that is being retried is the Conn's to log.
		if err := c.Start(ctx); err != nil && !errors.Is(err, ErrRetrying) {
			m.logger.Warn("MCP server failed to start", "server", srv.Name, "error", err)
		}
		return
	}
	var l *Listing
	if m.opts.Manifest != nil {
		l = m.opts.Manifest(srv)
	}
	if l != nil {
		if l.Tools == nil {
			// No tools is a list too; nil would say they went.
			l.Tools = []*mcpsdk.Tool{}
		}
		// The Conn holds the tools first (so its status counts them),
		// hands them over, then reports: as a Conn hands over its tools
		// before it reports connected, whoever is told of the status
		// finds them registered.
		st := c.markIdle(l)
		if m.opts.OnToolsChanged != nil {
			m.opts.OnToolsChanged(ToolsChanged{Server: srv.Name, Reason: reasonManifest, Tools: l.Tools,
				Entry: c.srv, ServerInfo: l.ServerInfo, ProtocolVersion: l.ProtocolVersion})
		}
		if m.opts.OnStatus != nil {
			m.opts.OnStatus(st)
		}
		return
	}
	// No manifest yet: learn the tools, then go idle once listed.
	err := c.Start(ctx)
	if err != nil && !errors.Is(err, ErrRetrying) {
		m.logger.Warn("MCP server failed to start to list its tools", "server", srv.Name, "error", err)
		return
	}
	m.mu.Lock()
	if e.demand.inflight == 0 {
		if err == nil {
			m.armLocked(e, 0)
		} else {
			// Still trying in the background: once up, it idles out
			// like a server a call started.
			m.armLocked(e, idleTimeoutOf(srv))
		}
	}
	m.mu.Unlock()
}

// idleAtFirst makes a new Conn of a server on demand idle, holding no
// tools yet, so that it never looks as if it were connecting (launch
// starts it only if it has no manifest); nothing is emitted. The caller
// holds m.mu.
func (m *Manager) idleAtFirst(e *entry) {
	if e.cfg.OnDemand() && e.cfg.Enabled {
		e.conn.markIdle(&Listing{})
	}
}

// reasonManifest is the reason of the tools a server on demand is
// registered with before it ever runs: its manifest's.
const reasonManifest = "manifest"

// Acquire returns the named server's Conn for one call. A server on
// demand that is idle, or failed, is started first, within ctx, and
// Acquire returns once it is connected or the start failed; a server that
// is connecting is the Conn's to wait for, as with any call. release must
// be called when the call is over: a server on demand stops its idle
// timeout's length after the end of its last call, and never during one.
func (m *Manager) Acquire(ctx context.Context, name string) (c *Conn, release func(), err error) {
	e, err := m.entry(name)
	if err != nil {
		return nil, func() {}, err
	}
	for {
		m.mu.Lock()
		if ch := e.demand.idling; ch != nil {
			m.mu.Unlock()
			select {
			case <-ch:
				continue
			case <-ctx.Done():
				return nil, func() {}, ctx.Err()
			}
		}
		e.demand.inflight++
		e.demand.gen++
		if e.demand.timer != nil {
			e.demand.timer.Stop()
			e.demand.timer = nil
		}
		c = e.conn
		onDemand := e.cfg.OnDemand() && e.cfg.Enabled
		m.mu.Unlock()
		release = sync.OnceFunc(func() { m.release(e) })
		if !onDemand {
			return c, release, nil
		}
		if s := c.Status().State; s != StateIdle && s != StateFailed {
			return c, release, nil
		}
		c, err = m.wake(ctx, e)
		if err != nil {
			release()
			return nil, func() {}, err
		}
		return c, release, nil
	}
}

// wake starts an idle or failed server on demand, unless another call
// did meanwhile, and returns its Conn.
func (m *Manager) wake(ctx context.Context, e *entry) (*Conn, error) {
	e.opMu.Lock()
	defer e.opMu.Unlock()
	m.mu.Lock()
	c := e.conn
	m.mu.Unlock()
	switch c.Status().State {
	case StateIdle, StateFailed:
	default:
		return c, nil // started meanwhile, or stopped by hand
	}
	_ = c.closeWith(reasonIdle) // a failed Conn's goroutines end
	m.mu.Lock()
	if e.removed || m.closed {
		m.mu.Unlock()
		return nil, ErrNotConnected
	}
	c = m.newConn(e, e.cfg)
	e.conn = c
	m.mu.Unlock()
	m.logger.Info("starting MCP server on demand", "server", e.cfg.Name)
	if err := c.Start(ctx); err != nil {
		return nil, err
	}
	return c, nil
}

// Warm starts the named server in the background if it is on demand and
// idle, as a call would, and lets it idle out if no call follows: for a
// tool_search that found one of its tools, whose call is likely next.
func (m *Manager) Warm(name string) {
	e, err := m.entry(name)
	if err != nil {
		return
	}
	m.mu.Lock()
	if m.closed || !e.cfg.OnDemand() {
		m.mu.Unlock()
		return
	}
	c := e.conn
	timeout := ConnectTimeout(e.cfg)
	m.wg.Add(1) // under mu with !closed, so Close's Wait sees it
	m.mu.Unlock()
	if s := c.Status().State; s != StateIdle && s != StateFailed {
		m.wg.Done()
		return
	}
	go func() {
		defer m.wg.Done()
		ctx, cancel := context.WithTimeout(context.Background(), timeout+time.Second)
		defer cancel()
		_, release, err := m.Acquire(ctx, name)
		if err != nil {
			m.logger.Warn("starting MCP server for tool_search", "server", name, "error", err)
		}
		release()
	}()
}

// release ends one call of Acquire: the last one arms the idle timer of a
// server on demand.
func (m *Manager) release(e *entry) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e.demand.inflight--
	if e.demand.inflight == 0 && e.cfg.OnDemand() {
		m.armLocked(e, idleTimeoutOf(e.cfg))
	}
}

// armLocked (re)starts e's idle timer for d. The caller holds m.mu.
func (m *Manager) armLocked(e *entry, d time.Duration) {
	if m.closed || e.removed {
		return
	}
	if e.demand.timer != nil {
		e.demand.timer.Stop()
	}
	gen := e.demand.gen
	e.demand.timer = time.AfterFunc(d, func() { m.idleOut(e, gen) })
}

// disarmLocked stops e's idle timer. The caller holds m.mu.
func (m *Manager) disarmLocked(e *entry) {
	e.demand.gen++
	if e.demand.timer != nil {
		e.demand.timer.Stop()
		e.demand.timer = nil
	}
}

// idleOut stops a server on demand whose idle timeout passed without a
// call (gen is the use it was armed after: any use since makes it stale).
func (m *Manager) idleOut(e *entry, gen uint64) {
	m.mu.Lock()
	if m.closed || e.removed || e.demand.gen != gen || e.demand.inflight > 0 || e.demand.idling != nil || !e.cfg.OnDemand() {
		m.mu.Unlock()
		return
	}
	e.demand.timer = nil
	done := make(chan struct{})
	e.demand.idling = done
	c := e.conn
	m.wg.Add(1) // under mu with !closed, so Close's Wait sees it
	m.mu.Unlock()
	go func() {
		defer m.wg.Done()
		defer func() {
			m.mu.Lock()
			e.demand.idling = nil
			m.mu.Unlock()
			close(done)
		}()
		switch c.Status().State {
		case StateConnected, StateReconnecting, StateConnecting:
			m.logger.Info("stopping idle MCP server", "server", e.cfg.Name)
			_ = c.closeWith(reasonIdle)
		}
	}()
}

// applyStart puts a changed start mode or idle timeout of a running entry
// in force without restarting it. The caller holds m.mu.
func (m *Manager) applyStartLocked(ctx context.Context, e *entry, srv config.Server) {
	was := e.cfg.OnDemand()
	e.cfg.Start, e.cfg.IdleTimeout = srv.Start, srv.IdleTimeout
	switch {
	case srv.OnDemand() && e.demand.inflight == 0:
		m.armLocked(e, idleTimeoutOf(srv))
	case was && !srv.OnDemand():
		m.disarmLocked(e)
		if srv.Enabled {
			// Idle, it would now never start: start it as Apply starts
			// any server.
			m.wg.Go(func() {
				e.opMu.Lock()
				defer e.opMu.Unlock()
				m.mu.Lock()
				c := e.conn
				m.mu.Unlock()
				if c.Status().State == StateIdle {
					_, _ = m.startLocked(ctx, e)
				}
			})
		}
	}
}
