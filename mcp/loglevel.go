package mcp

import (
	"context"
	"strings"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// A server that declares logging is asked to send its log messages
// (notifications/message) from ConnOptions.LogLevel up. Before 2026-07-28
// that is logging/setLevel, once per session and again when the level
// changes; from 2026-07-28 on, which has no setLevel, the level travels in
// every request's _meta (io.modelcontextprotocol/logLevel), and the go-sdk
// server sends nothing without it.

// logsFrom reports whether s's server declares logging.
func logsFrom(s *session) bool {
	ir := s.cs.InitializeResult()
	return ir != nil && ir.Capabilities != nil && ir.Capabilities.Logging != nil
}

// stateless reports whether cs runs the newest protocol.
func stateless(cs *mcpsdk.ClientSession) bool {
	ir := cs.InitializeResult()
	return ir != nil && ir.ProtocolVersion >= LatestProtocolVersion
}

// SetLogLevel changes the MCP log level servers are asked for (one of
// config.LogLevels; "" leaves each server at its own default from the next
// session on). A connected server that logs is told at once.
func (c *Conn) SetLogLevel(level string) {
	c.mu.Lock()
	if c.logLevel == level {
		c.mu.Unlock()
		return
	}
	c.logLevel = level
	s := c.sess
	c.mu.Unlock()
	if s != nil {
		c.wg.Go(func() {
			ctx, cancel := c.withStop(context.Background())
			defer cancel()
			ctx, cancelT := context.WithTimeout(ctx, c.srv.Timeout)
			defer cancelT()
			c.sendLogLevel(ctx, s)
		})
	}
}

func (c *Conn) level() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.logLevel
}

// sendLogLevel sends logging/setLevel to s if its server logs and runs a
// protocol that has it. A server that refuses is logged, not failed. The
// connect sends it before the session is used, so that no call's messages
// come at the server's own level.
func (c *Conn) sendLogLevel(ctx context.Context, s *session) {
	level := c.level()
	if level == "" || !logsFrom(s) || stateless(s.cs) {
		return
	}
	if err := s.cs.SetLoggingLevel(ctx, &mcpsdk.SetLoggingLevelParams{Level: mcpsdk.LoggingLevel(level)}); err != nil && !s.ended() {
		c.logger.Warn("logging/setLevel", "level", level, "error", c.hide(err))
	}
}

// logLevelMiddleware is the client's sending middleware that puts the log
// level in the _meta of every request to a server that logs under the
// newest protocol.
func (c *Conn) logLevelMiddleware(next mcpsdk.MethodHandler) mcpsdk.MethodHandler {
	return func(ctx context.Context, method string, req mcpsdk.Request) (mcpsdk.Result, error) {
		cs, ok := req.GetSession().(*mcpsdk.ClientSession)
		if !ok || method == methodDiscover || strings.HasPrefix(method, "notifications/") || !stateless(cs) {
			return next(ctx, method, req)
		}
		ir := cs.InitializeResult()
		level := c.level()
		p := req.GetParams()
		if level == "" || ir.Capabilities == nil || ir.Capabilities.Logging == nil || p == nil {
			return next(ctx, method, req)
		}
		m := p.GetMeta()
		if m == nil {
			m = map[string]any{}
		}
		if _, set := m[mcpsdk.MetaKeyLogLevel]; !set {
			m[mcpsdk.MetaKeyLogLevel] = level
			p.SetMeta(m)
		}
		return next(ctx, method, req)
	}
}
