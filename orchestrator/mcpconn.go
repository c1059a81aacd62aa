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

var _ ConnSource = (*mcp.Manager)(nil)

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
)

// ConnCaller returns the Caller for the tools of server, resolved through
// conns on every call.
func ConnCaller(server string, conns ConnSource) Caller {
	return &connCaller{server: server, conns: conns}
}

func (c *connCaller) CallTool(ctx context.Context, name string, args map[string]any, onProgress func(Progress)) (*mcpsdk.CallToolResult, error) {
	conn, ok := c.conns.Conn(c.server)
	if !ok {
		return nil, fmt.Errorf("calling %s on %s: %w", name, c.server, mcp.ErrNotConnected)
	}
	var relay func(mcp.Progress)
	if onProgress != nil {
		relay = func(p mcp.Progress) {
			onProgress(Progress{Progress: p.Progress, Total: p.Total, Message: p.Message})
		}
	}
	return conn.CallTool(ctx, name, args, relay)
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
	r.setServerTools(ev.Server, ev.Tools, ConnCaller(ev.Server, conns), ev.Reason)
}
