package server

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/freecode/freecode/defscache"
	"github.com/freecode/freecode/internal/protocol"
	"github.com/freecode/freecode/mcp"
	"github.com/freecode/freecode/orchestrator"
	"github.com/freecode/freecode/permissions"
	"github.com/freecode/freecode/workspace"
)

// The values of the packages below, as internal/protocol's wire types.
// Those packages encode their values in the protocol's shape too;
// TestWireMatchesPackages keeps the two the same.

// statusToWire is a server's status as the protocol has it.
func statusToWire(st mcp.Status) *protocol.ServerStatus {
	out := &protocol.ServerStatus{
		Name: st.Name, Scope: st.Scope, Type: st.Type, Transport: st.Transport,
		State: protocol.ServerState(st.State.String()), ToolCount: st.ToolCount, PID: st.PID,
		ProtocolVersion: st.ProtocolVersion, LastError: st.LastError, StderrTail: st.StderrTail,
		Command: st.Command, URL: st.URL, ToolListCut: st.ToolListCut,
	}
	if st.ServerInfo != nil {
		out.ServerInfo = &protocol.ServerInfo{Name: st.ServerInfo.Name, Version: st.ServerInfo.Version}
	}
	if !st.ConnectedAt.IsZero() {
		out.ConnectedAt = st.ConnectedAt.UTC().Truncate(time.Millisecond)
	}
	if st.LastPing > 0 {
		out.LastPingMs = float64(st.LastPing.Microseconds()) / 1000
	}
	if a := st.Approval; a != nil {
		out.Approval = &protocol.ServerApproval{
			EntryHash: a.EntryHash, Command: a.Command, Cwd: a.Cwd, Env: a.Env, InheritEnv: a.InheritEnv,
			URL: a.URL, Transport: a.Transport, Headers: a.Headers,
			CABundle: a.CABundle, ClientCert: a.ClientCert, ClientKey: a.ClientKey,
			Start: a.Start, DeferTools: a.DeferTools,
			TimeoutMs: a.TimeoutMs, ToolTimeoutMs: a.ToolTimeoutMs, IdleTimeoutMs: a.IdleTimeoutMs,
			MaxMessageBytes: a.MaxMessageBytes, ProtocolVersion: a.ProtocolVersion,
		}
		for _, c := range a.Pending {
			out.Approval.PendingReviews = append(out.Approval.PendingReviews, changeToWire(c))
		}
		if o := a.OAuth; o != nil {
			out.Approval.OAuth = &protocol.ApprovalOAuth{
				ClientID: o.ClientID, ClientSecret: o.ClientSecret, ClientMetadataURL: o.ClientMetadataURL,
				Scopes: o.Scopes, CallbackPort: o.CallbackPort,
			}
		}
	}
	return out
}

// projectToWire is the project as freecode/project answers it, with the
// files that have problems.
func projectToWire(p workspace.ProjectInfo, problems []workspace.ProblemsEvent) *protocol.Project {
	out := &protocol.Project{
		Root: p.Root, ProjectTrusted: p.Trusted, ConfigPath: p.ConfigPath,
		SettingsPaths: protocol.SettingsPaths{User: p.SettingsPaths.User, Project: p.SettingsPaths.Project, Local: p.SettingsPaths.Local},
	}
	for _, pe := range problems {
		out.Problems = append(out.Problems, *problemsToWire(pe.Path, pe.Problems))
	}
	return out
}

// problemsToWire is a file's problems as freecode/config/problems has them.
func problemsToWire(path string, probs []workspace.Problem) *protocol.ConfigProblems {
	cp := &protocol.ConfigProblems{Path: path, Problems: make([]protocol.Problem, 0, len(probs))}
	for _, p := range probs {
		cp.Problems = append(cp.Problems, protocol.Problem{Message: p.Message, Line: p.Line, Column: p.Column, Key: p.Key})
	}
	return cp
}

// resultToWire is a call's result as the protocol has it.
func resultToWire(r orchestrator.ToolResult) (protocol.ToolResult, error) {
	out := protocol.ToolResult{
		CallID: r.CallID, Content: make([]json.RawMessage, 0, len(r.Content)), IsError: r.IsError,
		Decision: protocol.Decision(r.Decision), DurationMs: r.DurationMs,
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
	return out, nil
}

// toolToWire is a tool as freecode/tools lists it.
func toolToWire(t orchestrator.ToolInfo) protocol.ToolInfo {
	return protocol.ToolInfo{
		ID: t.ID, Server: t.Server, Name: t.Name, Title: t.Title, Description: t.Description,
		ReadOnly: t.ReadOnly, Destructive: t.Destructive, OpenWorld: t.OpenWorld,
		InputSchema: t.InputSchema, Alias: t.Alias, DefinitionChanged: t.DefinitionChanged, New: t.New,
	}
}

// ruleToWire is a rule as freecode/permissions lists it; its file stays on
// this side.
func ruleToWire(r permissions.Rule) protocol.Rule {
	return protocol.Rule{Rule: r.Pattern, Effect: r.Effect.String(), Source: r.Source.String()}
}

func hashesToWire(m map[defscache.Format]string) protocol.Hashes {
	return protocol.Hashes{Anthropic: m[defscache.FormatAnthropic], OpenAI: m[defscache.FormatOpenAI]}
}
