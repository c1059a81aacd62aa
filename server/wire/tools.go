package wire

import (
	"encoding/json"
	"fmt"

	"github.com/freecode/freecode/internal/protocol"
	"github.com/freecode/freecode/orchestrator"
	"github.com/freecode/freecode/permissions"
	"github.com/freecode/freecode/workspace"
)

// ToolInfo is a tool as freecode/tools lists it. Its idempotentHint and
// output schema are FreeCode's MCP server's to list, and whether models
// are kept from it (Hidden) is the provider definitions' business: a
// frontend lists a hidden tool as changed (DefinitionChanged or New).
func ToolInfo(t orchestrator.ToolInfo) protocol.ToolInfo {
	return protocol.ToolInfo{
		ID: t.ID, Server: t.Server, Name: t.Name, Title: t.Title, Description: t.Description,
		ReadOnly: t.ReadOnly, Destructive: t.Destructive, OpenWorld: t.OpenWorld, Idempotent: t.Idempotent,
		InputSchema: t.InputSchema, Alias: t.Alias, DefinitionChanged: t.DefinitionChanged, New: t.New,
		UI: ToolUI(t.UI), AllowedBy: AllowedBy(t.AllowedBy),
	}
}

// AllowedBy is the allow rule that lets a tool run unasked, as
// freecode/tools lists it; nil for none.
func AllowedBy(r *permissions.Rule) *protocol.AllowedBy {
	if r == nil {
		return nil
	}
	return &protocol.AllowedBy{Rule: r.Pattern, Source: protocol.RuleSource(r.Source.String()), Path: r.File}
}

// ToolUI is a tool's MCP Apps declaration as freecode/tools lists it: its
// visibility spelt out, the extension's default (both audiences) included.
func ToolUI(u *orchestrator.ToolUI) *protocol.ToolUI {
	if u == nil {
		return nil
	}
	out := &protocol.ToolUI{ResourceURI: u.ResourceURI, Visibility: []protocol.Audience{}}
	if u.ForModel() {
		out.Visibility = append(out.Visibility, orchestrator.AudienceModel)
	}
	if u.ForApp() {
		out.Visibility = append(out.Visibility, orchestrator.AudienceApp)
	}
	return out
}

// ToolCall is one call of a frontend's batch, for the orchestrator.
func ToolCall(c protocol.ToolCall) orchestrator.ToolCall {
	out := orchestrator.ToolCall{CallID: c.CallID, Tool: c.Tool, Arguments: c.Arguments}
	if c.App != nil {
		out.App = c.App.Server
	}
	return out
}

// ToolResult is a call's result as freecode/tools/execute answers it: the
// MCP content blocks and the structured content encoded as MCP has them.
func ToolResult(r orchestrator.ToolResult) (protocol.ToolResult, error) {
	out := protocol.ToolResult{
		CallID: r.CallID, Content: make([]json.RawMessage, 0, len(r.Content)), IsError: r.IsError,
		Decision: protocol.Decision(r.Decision), DurationMs: r.DurationMs, OutcomeUnknown: r.OutcomeUnknown,
	}
	for _, c := range r.Content {
		b, err := json.Marshal(c)
		if err != nil {
			return out, fmt.Errorf("encoding the result of %s: %w", r.CallID, err)
		}
		out.Content = append(out.Content, b)
	}
	if r.StructuredContent != nil {
		b, err := json.Marshal(r.StructuredContent)
		if err != nil {
			return out, fmt.Errorf("encoding the structured result of %s: %w", r.CallID, err)
		}
		out.StructuredContent = b
	}
	if r.Truncated != nil {
		out.Truncated = &protocol.Truncated{ShownChars: r.Truncated.ShownChars, TotalChars: r.Truncated.TotalChars, SavedTo: r.Truncated.SavedTo}
	}
	if t := r.Task; t != nil {
		// A result goes to the frontend of the call: the task is its own.
		out.Task = &protocol.TaskInfo{
			Server: t.Server, TaskID: t.ID, Tool: t.Tool, CallID: r.CallID, Status: protocol.TaskStatus(t.Status),
			StatusMessage: t.StatusMessage, CreatedAt: t.CreatedAt, UpdatedAt: t.CreatedAt, Mine: true,
		}
	}
	return out, nil
}

// TaskInfo is a task a call started as freecode/tasks lists it and
// freecode/tasks/changed tells of it to the frontend of to: what that
// frontend may see of it (workspace.TaskInfo.SeenBy), and whether it is
// its own.
func TaskInfo(t workspace.TaskInfo, to orchestrator.Asker) (protocol.TaskInfo, error) {
	mine := t.OwnedBy(to)
	t = t.SeenBy(to)
	out := protocol.TaskInfo{
		Server: t.Server, TaskID: t.TaskID, Tool: t.Tool, CallID: t.CallID, Status: protocol.TaskStatus(t.Status),
		StatusMessage: t.StatusMessage, CreatedAt: t.CreatedAt, UpdatedAt: t.UpdatedAt, Error: t.Error, Mine: mine,
	}
	if t.Result != nil {
		r, err := ToolResult(*t.Result)
		if err != nil {
			return out, err
		}
		out.Result = &protocol.TaskResult{Content: r.Content, StructuredContent: r.StructuredContent, IsError: r.IsError, Truncated: r.Truncated}
	}
	return out, nil
}

// ToolProgress is a server's progress on the call callID, as
// freecode/tools/progress sends it.
func ToolProgress(callID string, p orchestrator.Progress) protocol.ToolProgress {
	return protocol.ToolProgress{CallID: callID, Progress: p.Progress, Total: p.Total, Message: p.Message}
}

// PermissionRequest is the orchestrator's question as
// freecode/permission/request asks it.
func PermissionRequest(req orchestrator.Request) protocol.PermissionRequest {
	out := protocol.PermissionRequest{
		CallID: req.CallID, Tool: req.Tool, Server: req.Server, Arguments: req.Arguments,
		ReadOnly: req.ReadOnly, Reason: req.Reason, ProjectTrusted: req.ProjectTrusted,
		NoAlwaysAllow: req.NoAlwaysAllow, Review: PermissionReview(req.Review),
	}
	if req.App != "" {
		out.App = &protocol.CallApp{Server: req.App}
	}
	return out
}

// Answer is a frontend's answer to a permission request, for the
// orchestrator. It checks nothing: whoever asked checks the decision and
// the scope, and whether there was a definition to accept.
func Answer(resp protocol.PermissionResponse) orchestrator.Answer {
	return orchestrator.Answer{
		Decision: orchestrator.AnswerDecision(resp.Decision), Scope: orchestrator.Scope(resp.Scope),
		AcceptDefinition: resp.AcceptDefinition,
	}
}
