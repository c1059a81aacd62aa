package mcp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"sync"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/freecode/freecode/config"
)

// ManagerOptions configure a Manager. A nil *ManagerOptions means defaults.
type ManagerOptions struct {
	// ConnOptions are every Conn's: the Logger also receives the
	// Manager's logs, OnStatus is called on every state change of any
	// server, Versions nil means one memo kept in memory for the
	// Manager's life, and LogLevel is the level of the first Conns
	// (SetLogLevel changes it).
	ConnOptions
	// OnToolsChanged is called when a server's tools appear, change or go.
	OnToolsChanged func(ToolsChanged)
	// OnListChanged is called when a server's resources or prompts
	// appear, change or go (see ListChanged).
	OnListChanged func(ListChanged)
	// Manifest, if set, returns what the manifest of a server on demand
	// holds, or nil when it has none: the server is then registered from
	// it without starting (see ondemand.go).
	Manifest func(srv config.Server) *Listing
}

// ToolsChanged says that one server's tools changed, and why.
type ToolsChanged struct {
	Server string
	// Reason is "connected", "listChanged", "reconnected" (a reconnect
	// brought different tools), "manifest" (a server on demand, idle,
	// registered from its manifest), "failed", "stopped", "changed" (its
	// config entry changed), "disabled" or "removed".
	Reason string
	Tools  []*mcpsdk.Tool // nil when the server's tools are gone
	// Entry is the server's entry as the Conn runs it (defaults applied):
	// what the tools are of, since a config change may be in flight.
	Entry config.Server
	// ServerInfo and ProtocolVersion are the server's, when Tools is set.
	ServerInfo      *ServerInfo
	ProtocolVersion string
}

// A Manager keeps one Conn per configured server in line with the config.
// Its methods are safe for concurrent use.
type Manager struct {
	opts   ManagerOptions
	logger *slog.Logger
	wg     sync.WaitGroup // background starts and stops

	// mu guards the fields below.
	mu      sync.Mutex
	entries map[string]*entry
	// stopping holds, by name, the removals still stopping their server:
	// a server added again under that name starts only after, so the old
	// one's "removed" events never follow the new one's "connected".
	stopping map[string]chan struct{}
	closed   bool
	level    string // the log level of new Conns (SetLogLevel)
}

// entry is one configured server.
type entry struct {
	// opMu serializes lifecycle operations on this server, so a stop and a
	// start never interleave.
	opMu sync.Mutex

	// Guarded by Manager.mu.
	cfg     config.Server
	conn    *Conn
	removed bool // Apply dropped it: nothing may start it again
	demand  demand
}

// NewManager returns a Manager with no servers.
func NewManager(opts *ManagerOptions) *Manager {
	m := &Manager{entries: make(map[string]*entry), stopping: make(map[string]chan struct{})}
	if opts != nil {
		m.opts = *opts
	}
	if m.opts.Logger == nil {
		m.opts.Logger = slog.New(slog.DiscardHandler)
	}
	m.logger = m.opts.Logger
	m.level = m.opts.LogLevel
	if m.opts.Versions == nil {
		m.opts.Versions = NewVersionMemo("")
	}
	return m
}

// newConn makes the Conn of e's entry srv. The caller holds m.mu.
func (m *Manager) newConn(e *entry, srv config.Server) *Conn {
	opts := m.opts.ConnOptions
	opts.LogLevel = m.level // the caller holds m.mu
	c := NewConn(srv, &opts)
	c.onLists = m.opts.OnListChanged
	c.onTools = func(reason string, tools []*mcpsdk.Tool) {
		if m.opts.OnToolsChanged == nil {
			return
		}
		m.mu.Lock()
		onDemand := e.cfg.OnDemand()
		m.mu.Unlock()
		if tools == nil && reason == "failed" && onDemand {
			// Its tools came from its manifest or its last list, not from
			// a session: they stay, and the next call starts it again.
			return
		}
		ev := ToolsChanged{Server: srv.Name, Reason: reason, Tools: tools, Entry: c.srv}
		if tools != nil {
			st := c.Status()
			ev.ServerInfo, ev.ProtocolVersion = st.ServerInfo, st.ProtocolVersion
		}
		m.opts.OnToolsChanged(ev)
	}
	return c
}

// Apply makes the running servers match servers: it starts added and
// newly enabled ones, stops removed and disabled ones, restarts changed
// ones and leaves the rest alone. Starts and stops run in the background,
// concurrently, so one slow server delays nothing; watch OnStatus.
//
// Apply does not wait for them, and they are the Manager's work, not
// ctx's: a server outlives the request that configured it, so ctx's
// cancellation never reaches them (its values do); Stop, Close and the
// next Apply end them. A ctx that is done already changes nothing, and
// Apply returns its error. After Close, Apply changes nothing.
func (m *Manager) Apply(ctx context.Context, servers []config.Server) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("applying the servers' config: %w", err)
	}
	ctx = context.WithoutCancel(ctx)
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil
	}
	want := make(map[string]config.Server, len(servers))
	for _, s := range servers {
		want[s.Name] = s
	}
	for name, e := range m.entries {
		if _, ok := want[name]; !ok {
			delete(m.entries, name)
			e.removed = true
			prev := m.stopping[name]
			done := make(chan struct{})
			m.stopping[name] = done
			m.wg.Go(func() {
				m.stopEntry(e, "removed")
				if prev != nil {
					<-prev // removals of one name end in order too
				}
				m.mu.Lock()
				if m.stopping[name] == done {
					delete(m.stopping, name)
				}
				m.mu.Unlock()
				close(done)
			})
		}
	}
	for name, srv := range want {
		e, ok := m.entries[name]
		if ok && e.cfg.Equal(srv) {
			if e.cfg.Start != srv.Start || e.cfg.IdleTimeout != srv.IdleTimeout {
				m.applyStartLocked(ctx, e, srv)
			}
			continue
		}
		if !ok {
			e = &entry{cfg: srv}
			e.conn = m.newConn(e, srv)
			m.idleAtFirst(e)
			m.entries[name] = e
			if srv.Enabled {
				prev := m.stopping[name]
				m.wg.Go(func() {
					e.opMu.Lock()
					defer e.opMu.Unlock()
					if prev != nil {
						<-prev // the server removed under this name is gone
					}
					m.launch(ctx, e)
				})
			}
			continue
		}
		e.cfg = srv
		reason := "changed"
		if !srv.Enabled {
			reason = "disabled"
		}
		m.wg.Go(func() {
			m.stopEntry(e, reason)
			e.opMu.Lock()
			defer e.opMu.Unlock()
			m.stopEntry(e, reason)
			m.restartEntry(ctx, e)
		})
	}
	return nil
}

// stopEntry closes e's current Conn. It does not take e.opMu: a start in
// progress holds it for up to the server's timeout, and closing its Conn is
// what makes it return at once.
func (m *Manager) stopEntry(e *entry, reason string) {
	m.mu.Lock()
	c := e.conn
	m.mu.Unlock()
	_ = c.closeWith(reason)
}

// restartEntry puts a fresh Conn for e's current config in place and, if
// the entry is enabled, starts it. The caller holds e.opMu.
func (m *Manager) restartEntry(ctx context.Context, e *entry) error {
	m.mu.Lock()
	if m.closed || e.removed {
		m.mu.Unlock()
		return ErrNotConnected
	}
	c := m.newConn(e, e.cfg)
	e.conn = c
	m.idleAtFirst(e)
	m.mu.Unlock()
	if !c.srv.Enabled {
		return nil
	}
	m.launch(ctx, e)
	return nil
}

func (m *Manager) entry(name string) (*entry, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.entries[name]
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrNoServer, name)
	}
	return e, nil
}

// Start connects the named server if it is not connected (a disabled one
// too: the user asked) and returns its status once it is connected or
// failed.
func (m *Manager) Start(ctx context.Context, name string) (Status, error) {
	e, err := m.entry(name)
	if err != nil {
		return Status{}, err
	}
	e.opMu.Lock()
	defer e.opMu.Unlock()
	return m.startLocked(ctx, e)
}

func (m *Manager) startLocked(ctx context.Context, e *entry) (Status, error) {
	m.mu.Lock()
	c := e.conn
	m.mu.Unlock()
	switch c.Status().State {
	case StateConnected, StateReconnecting:
		return c.Status(), nil
	case StateConnecting:
		// Apply's start, or this one: either way, answer once it settles.
		err := c.Start(ctx)
		return c.Status(), err
	}
	_ = c.Close()
	c, err := m.freshConn(e)
	if err != nil {
		return c.Status(), err
	}
	err = c.Start(ctx)
	m.mu.Lock()
	if e.cfg.OnDemand() && e.demand.inflight == 0 {
		// Started by hand, it still stops once idle.
		m.armLocked(e, idleTimeoutOf(e.cfg))
	}
	m.mu.Unlock()
	return c.Status(), err
}

// freshConn puts a new Conn for e's entry, enabled (the user asked), in
// place of the current one, which the caller closed, and returns it; or
// the current one and why not. The caller holds e.opMu.
func (m *Manager) freshConn(e *entry) (*Conn, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if e.removed {
		return e.conn, fmt.Errorf("%w: %q was removed", ErrNoServer, e.cfg.Name)
	}
	if m.closed {
		return e.conn, ErrNotConnected
	}
	srv := e.cfg
	srv.Enabled = true
	e.conn = m.newConn(e, srv)
	return e.conn, nil
}

// Stop stops the named server and returns its status.
func (m *Manager) Stop(ctx context.Context, name string) (Status, error) {
	e, err := m.entry(name)
	if err != nil {
		return Status{}, err
	}
	m.stopEntry(e, "stopped") // cancels a start in progress
	e.opMu.Lock()
	defer e.opMu.Unlock()
	m.mu.Lock()
	c := e.conn
	m.mu.Unlock()
	_ = c.Close()
	return c.Status(), nil
}

// Restart restarts the named server. One with a session is reconnected
// (Conn.Reconnect): its tools stay registered through the restart, and
// only a list that differs, or a reconnect that fails for good, changes
// them, so a restart that brings the same tools leaves the tool set and
// every provider's prompt cache alone. Any other (connecting, failed,
// stopped, disabled) is stopped and started anew. It returns the status
// once the first attempt ended.
func (m *Manager) Restart(ctx context.Context, name string) (Status, error) {
	e, err := m.entry(name)
	if err != nil {
		return Status{}, err
	}
	m.mu.Lock()
	c := e.conn
	m.mu.Unlock()
	if st := c.Status().State; st == StateConnected || st == StateReconnecting {
		e.opMu.Lock()
		defer e.opMu.Unlock()
		m.mu.Lock()
		same := e.conn == c
		m.mu.Unlock()
		if same {
			if err := c.Reconnect(ctx); !errors.Is(err, errNoSession) {
				return c.Status(), err
			}
		}
		// It lost its session meanwhile, or was replaced: start anew.
		m.stopEntry(e, "stopped")
		return m.startLocked(ctx, e)
	}
	m.stopEntry(e, "stopped") // cancels a start in progress
	e.opMu.Lock()
	defer e.opMu.Unlock()
	m.stopEntry(e, "stopped")
	return m.startLocked(ctx, e)
}

// Conn returns the named server's current Conn.
func (m *Manager) Conn(name string) (*Conn, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.entries[name]
	if !ok {
		return nil, false
	}
	return e.conn, true
}

// Statuses returns every configured server's status, sorted by name.
func (m *Manager) Statuses() []Status {
	m.mu.Lock()
	conns := make([]*Conn, 0, len(m.entries))
	for _, e := range m.entries {
		conns = append(conns, e.conn)
	}
	m.mu.Unlock()
	out := make([]Status, 0, len(conns))
	for _, c := range conns {
		out = append(out, c.Status())
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Close stops every server, concurrently, and waits until no process and
// no goroutine of the Manager is left.
func (m *Manager) Close() error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		m.wg.Wait()
		return nil
	}
	m.closed = true
	entries := make([]*entry, 0, len(m.entries))
	for _, e := range m.entries {
		entries = append(entries, e)
	}
	m.mu.Unlock()
	var wg sync.WaitGroup
	for _, e := range entries {
		wg.Go(func() {
			// Stop the conn that runs now, even if a start holds opMu:
			// Close makes that start return at once.
			m.stopEntry(e, "stopped")
			e.opMu.Lock()
			m.stopEntry(e, "stopped")
			e.opMu.Unlock()
		})
	}
	wg.Wait()
	m.wg.Wait()
	return nil
}

// SetLogLevel changes the MCP log level every server is asked for (see
// Conn.SetLogLevel), the servers started later included.
func (m *Manager) SetLogLevel(level string) {
	m.mu.Lock()
	m.level = level
	conns := make([]*Conn, 0, len(m.entries))
	for _, e := range m.entries {
		conns = append(conns, e.conn)
	}
	m.mu.Unlock()
	for _, c := range conns {
		c.SetLogLevel(level)
	}
}
