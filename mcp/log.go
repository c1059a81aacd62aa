package mcp

import (
	"context"
	"encoding/json"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Log is one line of a server's log, its secrets masked as in its status
// and errors: a line it wrote to stderr, or an MCP notifications/message.
// A frontend shows them; the Conn's own log (ConnOptions.Logger) is for
// FreeCode's.
type Log struct {
	Server string
	// Source is LogStderr or LogMCP.
	Source string
	// Level is a notifications/message's MCP level ("debug", "info",
	// "notice", "warning", "error", "critical", "alert", "emergency");
	// "" for a stderr line, which has none.
	Level   string
	Message string
	Time    time.Time
}

// The sources of a Log.
const (
	LogStderr = "stderr"
	LogMCP    = "mcp"
)

// emitLog hands a line to ConnOptions.OnLog.
func (c *Conn) emitLog(source, level, msg string) {
	if c.opts.OnLog != nil {
		c.opts.OnLog(Log{Server: c.srv.Name, Source: source, Level: level, Message: msg, Time: time.Now()})
	}
}

// onLogMessage is the client's handler of notifications/message. Data
// that is not a string is shown as JSON.
func (c *Conn) onLogMessage(_ context.Context, req *mcpsdk.LoggingMessageRequest) {
	p := req.Params
	if p == nil || c.opts.OnLog == nil {
		return
	}
	msg, ok := p.Data.(string)
	if !ok {
		b, err := json.Marshal(p.Data)
		if err != nil {
			return
		}
		msg = string(b)
	}
	if p.Logger != "" {
		msg = p.Logger + ": " + msg
	}
	c.emitLog(LogMCP, string(p.Level), c.redactor.Load().String(msg))
}
