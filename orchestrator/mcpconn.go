package orchestrator

import (
	"context"
	"fmt"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/freecode/freecode/mcp"
)

// ConnSource finds the live connection of a server; *mcp.Manager is one.
type ConnSource interface {
	Conn(name string) (*mcp.Conn, bool)
}

// Acquirer is a ConnSource that hands out a server's connection for one
// call, starting a server that runs on demand first; *mcp.Manager is one.
// release is called when the call is over.
type Acquirer interface {
	Acquire(ctx context.Context, name string) (c *mcp.Conn, release func(), err error)
}

var (
	_ ConnSource = (*mcp.Manager)(nil)
	_ Acquirer   = (*mcp.Manager)(nil)
)

// connCaller calls the tools of one server through whatever Conn the
// source holds for it at call time, so a restarted server's new Conn is
// used without re-registering its tools.
type connCaller struct {
	server string
	conns  ConnSource
}

var (
	_ Caller        = (*connCaller)(nil)
	_ ToolTimeouter = (*connCaller)(nil)
	_ Readier       = (*connCaller)(nil)
)

// ConnCaller returns the Caller for the tools of server, resolved through
// conns on every call.
func ConnCaller(server string, conns ConnSource) Caller {
	return &connCaller{server: server, conns: conns}
}

func (c *connCaller) CallTool(ctx context.Context, name string, args map[string]any, onProgress func(Progress)) (*mcpsdk.CallToolResult, error) {
	var conn *mcp.Conn
	if a, ok := c.conns.(Acquirer); ok {
		// A server on demand starts here, within the call's deadline.
		cn, release, err := a.Acquire(ctx, c.server)
		if err != nil {
			return nil, fmt.Errorf("starting %s for %s: %w", c.server, name, err)
		}
		defer release()
		conn = cn
	} else {
		cn, ok := c.conns.Conn(c.server)
		if !ok {
			return nil, fmt.Errorf("calling %s on %s: %w", name, c.server, mcp.ErrNotConnected)
		}
		conn = cn
	}
	var relay func(mcp.Progress)
	if onProgress != nil {
		relay = func(p mcp.Progress) {
			onProgress(Progress{Progress: p.Progress, Total: p.Total, Message: p.Message})
		}
	}
	return conn.CallTool(ctx, name, args, relay)
}

// Ready starts the server if it runs on demand and is idle (or failed),
// and waits within ctx until it is connected with its tools registered.
func (c *connCaller) Ready(ctx context.Context) (func(), error) {
	var conn *mcp.Conn
	release := func() {}
	if a, ok := c.conns.(Acquirer); ok {
		cn, rel, err := a.Acquire(ctx, c.server)
		if err != nil {
			return func() {}, fmt.Errorf("starting %s: %w", c.server, err)
		}
		conn, release = cn, rel
	} else {
		cn, ok := c.conns.Conn(c.server)
		if !ok {
			return func() {}, fmt.Errorf("%s: %w", c.server, mcp.ErrNotConnected)
		}
		conn = cn
	}
	if err := conn.Wait(ctx); err != nil {
		release()
		return func() {}, err
	}
	return release, nil
}

func (c *connCaller) ToolTimeout() time.Duration {
	if conn, ok := c.conns.Conn(c.server); ok {
		return conn.Config().ToolTimeout
	}
	return 0
}

// HandleToolsChanged applies one of the MCP Manager's tools-changed events:
// a server's new tool list is registered (called through conns), a nil list
// removes the server's tools. Wire it as the Manager's OnToolsChanged.
func (r *Registry) HandleToolsChanged(ev mcp.ToolsChanged, conns ConnSource) {
	if ev.Tools == nil {
		r.removeServer(ev.Server, ev.Reason)
		return
	}
	r.setServerTools(ev.Server, ev.Tools, ConnCaller(ev.Server, conns), ev.Reason, nil)
}
