package mcp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/trace"

	"github.com/freecode/freecode/internal/hoptrace"
	"github.com/freecode/freecode/mcp/oauth"
	"github.com/freecode/freecode/mcp/proc"
	"github.com/freecode/freecode/mcp/tasks"
)

// CallOptions are what a tool call brings besides its tool and its
// arguments. A nil *CallOptions brings none of them.
type CallOptions struct {
	// ID is the call's id, which Asker is told with each question.
	ID string
	// Asker answers what the server asks a person during the call (see
	// Asker); nil: nobody.
	Asker Asker
	// OnProgress, if set, gets the call's progress notifications.
	OnProgress func(Progress)
	// TakeTasks makes a call the server answers with a task return that
	// answer at once (read it with tasks.Of), for the caller to follow,
	// rather than follow the task to its end.
	TakeTasks bool
	// Trace is the span the call is made under (the orchestrator's
	// attempt): its tools/call span is that span's child, and the trace
	// context goes to the server in params._meta. The zero value: none.
	Trace trace.SpanContext
	// Telemetry records the call's span and duration (telemetry.go); nil
	// records nothing.
	Telemetry *Telemetry
}

// CallTool calls a tool. While the Conn reconnects it waits, within ctx,
// for the reconnect. An error wrapping ErrConnectionLost means the
// transport died with the call in flight (it may have run);
// ErrNotConnected means it was never sent; oauth.ErrNeedsAuth means the
// server refused it for want of a sign-in or of more access, and did not
// run it. A tool's own failure is a result with IsError. A call the server
// answers with a task is followed to the task's end (taskcalls.go), unless
// opts takes tasks.
func (c *Conn) CallTool(ctx context.Context, name string, args map[string]any, opts *CallOptions) (out *mcpsdk.CallToolResult, outErr error) {
	if opts == nil {
		opts = &CallOptions{}
	}
	s, err := c.liveSession(ctx)
	if err != nil {
		return nil, fmt.Errorf("calling %s on %s: %w", name, c.srv.Name, err)
	}
	// The server's questions during the call go to its Asker (asker.go).
	callCtx, req, end := c.begin(ctx, s, asking{callID: opts.ID, asker: opts.Asker})
	defer end()
	onProgress := opts.OnProgress
	if args == nil {
		args = map[string]any{} // a nil map would go out as null, which servers refuse
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
	drops := c.dropCount()
	span := opts.Telemetry.startCall(opts.Trace, name, s, c.srv, params)
	hoptrace.Stage(hoptrace.FromRequest, "7 request → go-sdk CallTool called")
	res, err := s.cs.CallTool(callCtx, params)
	defer func() { span.end(out, outErr) }()
	hoptrace.Stage(hoptrace.FromAnswer, "a answer → go-sdk CallTool returned")
	if s.proc != nil {
		proc.PokeAdoptions() // the call may have started a daemon
	}
	if err == nil {
		t, isTask, terr := tasks.Of(res)
		switch {
		case terr != nil:
			return nil, fmt.Errorf("calling %s on %s: %w: %w", name, c.srv.Name, errTaskUnreadable, terr)
		case !isTask || opts.TakeTasks:
			return res, nil
		}
		return c.settleTask(ctx, name, t, opts)
	}
	// A 403 insufficient_scope to the access a sign-in for it just gave
	// reaches the SDK as a bare "Forbidden": the sign-in says what it was.
	err = c.hide(s.auth.Explain(err))
	if why := c.dropSince(drops); why != "" && ctx.Err() != nil {
		// The answer may be what was dropped: say so, not just "deadline".
		err = fmt.Errorf("%w (the server did send something: %s)", err, why)
	}
	if errors.Is(err, oauth.ErrNeedsAuth) {
		// The server's HTTP side refused the request (401, or 403
		// insufficient_scope) before its MCP side saw it: not run, and no
		// connection lost, whatever the sign-in's failure does to the
		// session afterwards.
		return nil, fmt.Errorf("calling %s on %s: the server refused the call before running it: %w", name, c.srv.Name, err)
	}
	if ctx.Err() == nil && c.transportLost(s, err) {
		s.markLost()
		return nil, fmt.Errorf("calling %s on %s: %w: %v", name, c.srv.Name, ErrConnectionLost, err)
	}
	if ctx.Err() == nil && req.probe.lost() && !answeredWithError(err) {
		// The request reached the server and its answer was lost (the
		// stream broke, or the connection dropped before it): the session
		// lives on, but whether the call ran nobody can tell.
		return nil, fmt.Errorf("calling %s on %s: %w: the request went out and its answer was lost: %v", name, c.srv.Name, ErrConnectionLost, err)
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

// answeredWithError reports whether err is the server's JSON-RPC error
// answer, which says what became of the call.
func answeredWithError(err error) bool {
	var werr *jsonrpc.Error
	return errors.As(err, &werr) && werr.Code != codeRejected
}

// codeRejected is the code of the SDK's internal jsonrpc2.ErrRejected: the
// transport could not deliver the request (a POST that failed), so it is
// no answer from the server.
const codeRejected = -32005

// hide returns err with the server's secrets shown as ***.
func (c *Conn) hide(err error) error { return c.redactor.Load().Error(err) }

// Redact returns s with what the Conn hides in its logs and errors shown
// as "***": the secrets its session resolved (${secret:NAME} values, the
// credentials of its entry's env, headers and URL). The workspace passes
// a call's arguments and result through it before telemetry exports them.
func (c *Conn) Redact(s string) string { return c.redactor.Load().String(s) }
