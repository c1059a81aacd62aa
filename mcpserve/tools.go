package mcpserve

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/freecode/freecode/orchestrator"
)

// listedName is the name a tool is listed and called under: the name
// providers see (the package documentation says why), or, on a server of
// one FreeCode server (Options.Server), the name its server gives it.
func (s *Server) listedName(info orchestrator.ToolInfo) string {
	if s.server != "" {
		return info.Name
	}
	if info.Alias != "" {
		return info.Alias
	}
	return info.ID
}

// syncTools makes the MCP server's tools those of the workspace: tools
// that went are removed, new and changed ones (re)added. The go-sdk sends
// notifications/tools/list_changed for what changed, once for a burst.
func (s *Server) syncTools() {
	infos := s.ws.Tools(s.server)
	want := make(map[string]orchestrator.ToolInfo, len(infos))
	for _, info := range infos {
		if info.Hidden || !info.UI.ForModel() {
			continue // its changed definition awaits the user's review, or it is for its server's app alone
		}
		if s.server != "" && info.Server != s.server {
			continue // a built-in: Tools("x") lists x's alone, but a built-in is no server's tool
		}
		want[s.listedName(info)] = info
	}
	s.toolsMu.Lock()
	defer s.toolsMu.Unlock()
	var gone []string
	for name := range s.tools {
		if _, ok := want[name]; !ok {
			gone = append(gone, name)
		}
	}
	if len(gone) > 0 {
		s.mcp.RemoveTools(gone...)
	}
	next := make(map[string]orchestrator.ToolInfo, len(want))
	for name, info := range want {
		if old, ok := s.tools[name]; ok && sameInfo(old, info) {
			next[name] = info
			continue
		}
		if err := s.addTool(name, info); err != nil {
			s.logger.Warn("not listing a tool", "tool", info.ID, "err", err)
			if _, ok := s.tools[name]; ok {
				s.mcp.RemoveTools(name) // its old definition is no longer the tool's
			}
			continue
		}
		next[name] = info
	}
	s.tools = next
}

// sameInfo reports whether two descriptions of a tool list the same.
func sameInfo(a, b orchestrator.ToolInfo) bool {
	return a.ID == b.ID && a.Title == b.Title && a.Description == b.Description && a.ReadOnly == b.ReadOnly && a.Idempotent == b.Idempotent &&
		equalPtr(a.Destructive, b.Destructive) && equalPtr(a.OpenWorld, b.OpenWorld) &&
		bytes.Equal(a.InputSchema, b.InputSchema) && bytes.Equal(a.OutputSchema, b.OutputSchema)
}

func equalPtr(a, b *bool) bool {
	return a == nil && b == nil || a != nil && b != nil && *a == *b
}

// addTool lists one tool. The go-sdk panics on a definition it refuses (an
// input schema that is not an object schema, for one); a server's tool list
// is outside input, so that becomes an error and the tool is left out.
func (s *Server) addTool(name string, info orchestrator.ToolInfo) (err error) {
	t, err := mcpTool(name, info)
	if err != nil {
		return err
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("the MCP SDK refuses its definition: %v", r)
		}
	}()
	hasOutput := len(info.OutputSchema) > 0
	// What the orchestrator is asked to run: the listed name, which it
	// knows as an id or an alias, or the id of a tool listed under its
	// server's name.
	tool := name
	if s.server != "" {
		tool = info.ID
	}
	s.mcp.AddTool(t, func(ctx context.Context, req *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
		return s.call(ctx, req, tool, hasOutput), nil
	})
	return nil
}

// mcpTool is the tools/list entry of a tool.
func mcpTool(name string, info orchestrator.ToolInfo) (*mcpsdk.Tool, error) {
	in, err := objectSchema(info.InputSchema)
	if err != nil {
		return nil, err
	}
	t := &mcpsdk.Tool{
		Name:        name,
		Title:       info.Title,
		Description: info.Description,
		InputSchema: in,
		// Clients of 2025-03-26 know the title only from the annotations.
		Annotations: &mcpsdk.ToolAnnotations{
			Title:           info.Title,
			ReadOnlyHint:    info.ReadOnly,
			IdempotentHint:  info.Idempotent,
			DestructiveHint: info.Destructive,
			OpenWorldHint:   info.OpenWorld,
		},
	}
	if len(info.OutputSchema) > 0 {
		t.OutputSchema = info.OutputSchema
	}
	return t, nil
}

// objectSchema returns an input schema as MCP requires it: an object
// schema. One that says no type gets "type": "object", which is what every
// MCP call's arguments are anyway; one of another type is an error.
func objectSchema(raw json.RawMessage) (json.RawMessage, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("input schema is not a JSON object: %w", err)
	}
	typ, ok := m["type"]
	if !ok {
		m["type"] = json.RawMessage(`"object"`)
		return json.Marshal(m)
	}
	if string(bytes.TrimSpace(typ)) != `"object"` {
		return nil, fmt.Errorf("input schema has type %s, not \"object\"", typ)
	}
	return raw, nil
}

// call runs one tools/call of tool (an id or alias) through the
// workspace's orchestrator.
func (s *Server) call(ctx context.Context, req *mcpsdk.CallToolRequest, tool string, hasOutput bool) *mcpsdk.CallToolResult {
	ss := req.Session
	frontend := s.front
	if frontend == "" {
		frontend = gatewayClient(ss)
	}
	eo := &orchestrator.ExecOptions{
		Frontend: frontend,
		OnWarning: func(_, msg string) {
			if err := ss.Log(ctx, &mcpsdk.LoggingMessageParams{Level: "warning", Logger: ServerName, Data: msg}); err != nil {
				s.logger.Debug("relaying a warning", "err", err)
			}
		},
	}
	// The client's trace context, sent as FreeCode sends its own to the
	// servers (params._meta): the batch's span is its child.
	eo.TraceParent, eo.TraceState = traceContext(req.Params.GetMeta())
	var asker *inputApprover
	eo.Approver, asker = s.approverFor(req)
	if token := req.Params.GetProgressToken(); token != nil {
		eo.OnProgress = func(_ string, p orchestrator.Progress) {
			err := ss.NotifyProgress(ctx, &mcpsdk.ProgressNotificationParams{
				ProgressToken: token, Progress: p.Progress, Total: p.Total, Message: p.Message,
			})
			if err != nil && !errors.Is(err, context.Canceled) {
				s.logger.Debug("relaying progress", "err", err)
			}
		}
	}
	eo.Tasks = taskMode(req)
	callID := "mcp-serve-" + strconv.FormatUint(s.calls.Add(1), 10)
	rs := s.ws.Execute(ctx, []orchestrator.ToolCall{{CallID: callID, Tool: tool, Arguments: req.Params.Arguments}}, eo)
	if q := asker.inputRequired(); q != nil {
		return q // the call asks its 2026-07-28 client, and is made again
	}
	res := result(rs[0], hasOutput)
	if rs[0].Task != nil && eo.Tasks == orchestrator.TasksReturned {
		res.Meta[startedTask] = rs[0].Task // the middleware answers with the task (tasks.go)
	}
	return res
}

// traceContext returns the W3C trace context a client sent in a
// request's _meta (SEP-414): traceparent and tracestate, "" for what is
// missing or not a string. The orchestrator parses them, and starts a
// trace of its own from a traceparent it cannot read.
func traceContext(meta map[string]any) (traceparent, tracestate string) {
	traceparent, _ = meta["traceparent"].(string)
	tracestate, _ = meta["tracestate"].(string)
	return traceparent, tracestate
}

// result is the tools/call result of an orchestrator result.
func result(r orchestrator.ToolResult, hasOutput bool) *mcpsdk.CallToolResult {
	res := &mcpsdk.CallToolResult{
		Content:           r.Content,
		StructuredContent: r.StructuredContent,
		IsError:           r.IsError,
		Meta:              mcpsdk.Meta{"freecode/decision": string(r.Decision)},
	}
	if r.Truncated != nil {
		res.Meta["freecode/truncated"] = r.Truncated
	}
	if r.OutcomeUnknown {
		res.Meta["freecode/outcomeUnknown"] = true // its answer was lost and it was not sent again
	}
	if hasOutput && !res.IsError && res.StructuredContent == nil {
		// A client rejects a success without the structured content the
		// tool's outputSchema promises; say why it is missing instead.
		res.IsError = true
		if r.Truncated == nil {
			res.Content = append(slices.Clip(res.Content), &mcpsdk.TextContent{
				Text: "[the server returned no structuredContent, though the tool declares an outputSchema]",
			})
		}
	}
	return res
}

// gatewayClient names a gateway client in the audit trail:
// "gateway:<its clientInfo.name>".
func gatewayClient(ss *mcpsdk.ServerSession) string {
	name := "client"
	if p := ss.InitializeParams(); p != nil && p.ClientInfo != nil && p.ClientInfo.Name != "" {
		name = p.ClientInfo.Name
	}
	return "gateway:" + name
}
