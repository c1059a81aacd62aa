package server

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"go.lsp.dev/jsonrpc2"
	lsp "go.lsp.dev/protocol"

	"github.com/freecode/freecode/defscache"
	"github.com/freecode/freecode/internal/hoptrace"
	"github.com/freecode/freecode/internal/protocol"
	"github.com/freecode/freecode/mcp"
	"github.com/freecode/freecode/orchestrator"
	"github.com/freecode/freecode/server/wire"
)

// tools is freecode/tools: every tool, or one server's.
func (sess *session) tools(ctx context.Context, params jsonrpc2.RawMessage) (any, error) {
	var p protocol.ToolsParams
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	w, err := sess.srv.workspace()
	if err != nil {
		return nil, err
	}
	if p.Server != "" && !w.HasServer(p.Server) {
		return nil, fmt.Errorf("%w: %q", mcp.ErrNoServer, p.Server)
	}
	infos := w.Tools(p.Server)
	out := &protocol.ToolsResult{Tools: make([]protocol.ToolInfo, 0, len(infos))}
	for _, t := range infos {
		out.Tools = append(out.Tools, wire.ToolInfo(t))
	}
	return out, nil
}

// definitions is freecode/tools/definitions: the exact tools array of one
// provider's format, from the defs cache, and its hash.
func (sess *session) definitions(ctx context.Context, params jsonrpc2.RawMessage) (any, error) {
	var p protocol.DefinitionsParams
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	f := defscache.Format(p.Format)
	switch {
	case p.Format == "":
		return nil, required("format")
	case !slices.Contains(defscache.Formats(), f):
		return nil, invalidParams("format", "want %q or %q, got %q", protocol.FormatAnthropic, protocol.FormatOpenAI, p.Format)
	}
	w, err := sess.srv.workspace()
	if err != nil {
		return nil, err
	}
	e, problems, err := w.Definitions(ctx, f)
	if err != nil {
		return nil, err
	}
	for _, pr := range problems {
		sess.logger.Debug("tool definitions", "format", f, "problem", pr)
	}
	return &protocol.DefinitionsResult{Hash: e.Hash, Tools: e.Bytes}, nil
}

// execute is freecode/tools/execute: one batch through the orchestrator,
// with this frontend asked for permission and told the progress. A call
// its server runs as a task ends the call's part of the batch at once
// ("running as task <id>"): the task's news come as freecode/tasks/changed,
// its questions to this frontend. Cancelling
// the request cancels every call still running, and each MCP server is
// told (notifications/cancelled) by the go-sdk when a call's context ends.
func (sess *session) execute(ctx context.Context, params jsonrpc2.RawMessage) (any, error) {
	var p protocol.ExecuteParams
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	if p.Calls == nil {
		return nil, required("calls")
	}
	calls := make([]orchestrator.ToolCall, len(p.Calls))
	seen := make(map[string]bool, len(p.Calls))
	for i, c := range p.Calls {
		switch {
		case c.CallID == "":
			return nil, required(field("calls", i, "callId"))
		case seen[c.CallID]:
			// Prompts and progress name calls by id: two alike would be
			// told apart by nobody.
			return nil, invalidParams(field("calls", i, "callId"), "%q is the id of an earlier call of the batch", c.CallID)
		case c.Tool == "":
			return nil, required(field("calls", i, "tool"))
		case c.App != nil && c.App.Server == "":
			// An app's call is judged by its server: without one it would
			// pass for a model's.
			return nil, required(field("calls", i, "app", "server"))
		}
		seen[c.CallID] = true
		calls[i] = wire.ToolCall(c)
	}
	w, err := sess.srv.workspace()
	if err != nil {
		return nil, err
	}
	hoptrace.Stage(hoptrace.FromRequest, "2 request → params decoded")
	results := w.Execute(ctx, calls, &orchestrator.ExecOptions{
		Approver: &approver{sess: sess},
		Asker:    sess.asker(),
		OnProgress: func(callID string, pr orchestrator.Progress) {
			sess.out.putProgress(wire.ToolProgress(callID, pr))
		},
		OnWarning: func(callID, msg string) {
			sess.logMessage(lsp.MessageTypeWarning, msg)
		},
		// A call its server runs as a task answers at once; the task is
		// followed apart (tasks.go).
		Tasks:    orchestrator.TasksTracked,
		Frontend: sess.frontendName(),
		// The model turn's span, if the frontend traces it: the root.
		TraceParent: p.Traceparent,
		TraceState:  p.Tracestate,
	})
	hoptrace.Stage(hoptrace.FromAnswer, "b answer → the orchestrator's results")
	sess.out.forget(slices.Collect(maps.Keys(seen)))
	out := &protocol.ExecuteResult{Results: make([]protocol.ToolResult, 0, len(results))}
	for _, r := range results {
		wr, err := wire.ToolResult(r)
		if err != nil {
			return nil, err
		}
		out.Results = append(out.Results, wr)
	}
	return out, nil
}
