// Package wire converts between the backend's own values and the frontend
// protocol's wire types (internal/protocol): it is the one place where a
// server status, a tool, a call's result, a permission question or a
// review takes the shape docs/protocol.md gives it, for the sidecar
// (server) and the CLI alike, which prints the same shapes with --json.
//
// The packages below keep plain Go values (durations, enums, pointers to
// the manifest's changes) and no JSON of the frontend's; what a frontend
// sees is decided here. internal/protocol's fixture tests hold its types
// to what the extension's tests check, and this package's tests hold every
// field of each value converted to one that reaches the wire, or to a list
// of those that stay on this side, each with its reason, so that a field
// added to a domain type and forgotten here fails a test.
//
// It sits below server rather than in internal/, since it imports mcp,
// orchestrator and workspace, and internal/'s leaves import nothing above
// them.
package wire

import (
	"regexp"
	"time"

	"github.com/freecode/freecode/defscache"
	"github.com/freecode/freecode/internal/protocol"
	"github.com/freecode/freecode/mcp"
	"github.com/freecode/freecode/permissions"
	"github.com/freecode/freecode/workspace"
)

// ServerStatus is a server's status as freecode/servers lists it: its
// state by name, connectedAt to the millisecond in UTC, the last ping's
// round trip in milliseconds to the microsecond.
func ServerStatus(st mcp.Status) protocol.ServerStatus {
	out := protocol.ServerStatus{
		Name: st.Name, Scope: protocol.ServerScope(st.Scope), Type: protocol.ServerType(st.Type), Transport: protocol.Transport(st.Transport),
		State: protocol.ServerState(st.State.String()), ToolCount: st.ToolCount, PID: st.PID,
		ProtocolVersion: st.ProtocolVersion, LastError: st.LastError, StderrTail: st.StderrTail,
		Command: st.Command, URL: st.URL, ToolListCut: st.ToolListCut, Sandbox: st.Sandbox, Blocked: st.Blocked, MissingSecrets: st.MissingSecrets,
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
	if st.Approval != nil {
		out.Approval = approval(st.Approval)
	}
	out.Registry = RegistryIdentity(st.Registry)
	if st.LastError != "" {
		out.LastErrorKind = protocol.FailureKind(st.LastErrorKind.String())
	}
	if st.HasExitCode {
		code := st.ExitCode
		out.ExitCode = &code
	}
	if r := st.Retry; r != nil {
		out.Retry = &protocol.RetryStatus{Attempt: r.Attempt, Max: r.Max, At: r.At.UTC().Truncate(time.Millisecond)}
	}
	return out
}

// approval is what approving a project server covers. The entry's
// "pinning" is not shown: a project cannot turn pinning off (config
// refuses the key in a project's settings), so it is never set here.
func approval(a *mcp.Approval) *protocol.ServerApproval {
	out := &protocol.ServerApproval{
		EntryHash: a.EntryHash, Command: a.Command, Cwd: a.Cwd, Env: a.Env, InheritEnv: a.InheritEnv,
		URL: a.URL, Transport: protocol.RemoteTransport(a.Transport), Headers: a.Headers,
		CABundle: a.CABundle, ClientCert: a.ClientCert, ClientKey: a.ClientKey,
		Start: protocol.StartMode(a.Start), DeferTools: a.DeferTools,
		TimeoutMs: a.TimeoutMs, ToolTimeoutMs: a.ToolTimeoutMs, IdleTimeoutMs: a.IdleTimeoutMs,
		MaxMessageBytes: a.MaxMessageBytes, ProtocolVersion: a.ProtocolVersion, Sandbox: a.Sandbox,
	}
	out.Registry = RegistryIdentity(a.Registry)
	for _, c := range a.Pending {
		out.PendingReviews = append(out.PendingReviews, DefinitionChange(c))
	}
	if o := a.OAuth; o != nil {
		out.OAuth = &protocol.ApprovalOAuth{
			ClientID: o.ClientID, ClientSecret: o.ClientSecret, ClientMetadataURL: o.ClientMetadataURL,
			Scopes: o.Scopes, CallbackPort: o.CallbackPort,
		}
	}
	return out
}

// Project is the project as freecode/project answers it, with the files
// that have problems.
func Project(p workspace.ProjectInfo, problems []workspace.ProblemsEvent) protocol.Project {
	out := protocol.Project{
		Root: p.Root, ProjectTrusted: p.Trusted, ConfigPath: p.ConfigPath,
		SettingsPaths: protocol.SettingsPaths{User: p.SettingsPaths.User, Project: p.SettingsPaths.Project, Local: p.SettingsPaths.Local},
	}
	for _, pe := range problems {
		out.Problems = append(out.Problems, ConfigProblems(pe))
	}
	if p.PendingRules != nil {
		r := RulesReview(p.PendingRules)
		out.PendingRules = &r
	}
	return out
}

// RulesReview is what a trusted project's rule files loosen beyond the
// rules the user accepted, as freecode/rules/reviewNeeded and
// freecode/project's pendingRules have it: no files (never null) when
// nothing awaits (p nil).
func RulesReview(p *permissions.Pending) protocol.RulesReview {
	out := protocol.RulesReview{Files: []protocol.RuleFileChange{}}
	if p == nil {
		return out
	}
	out.Hash = p.Hash
	for _, f := range p.Files {
		out.Files = append(out.Files, protocol.RuleFileChange{Path: f.Path, Source: protocol.RuleFileSource(f.Source.String()), Allow: f.Allow, Ask: f.Ask, Deny: f.Deny})
	}
	return out
}

// ConfigProblems is a file's problems as freecode/config/problems has
// them: an empty list, never null, for a file that has none. Why the file
// does not load (Err, RulesErr) is told by the problems themselves, and
// that it does not by LastGood.
func ConfigProblems(pe workspace.ProblemsEvent) protocol.ConfigProblems {
	cp := protocol.ConfigProblems{Path: pe.Path, Problems: make([]protocol.Problem, 0, len(pe.Problems)),
		LastGood: pe.Err != nil || pe.RulesErr != nil, Summary: pe.Summary}
	for _, p := range pe.Problems {
		cp.Problems = append(cp.Problems, protocol.Problem{Message: p.Message, Line: p.Line, Column: p.Column, Key: p.Key, Severity: protocol.Severity(p.Severity)})
	}
	return cp
}

// Rule is a rule as freecode/permissions lists it; its file stays on this
// side.
func Rule(r permissions.Rule) protocol.Rule {
	return protocol.Rule{Rule: r.Pattern, Effect: protocol.RuleEffect(r.Effect.String()), Source: protocol.RuleSource(r.Source.String())}
}

// Hashes are the provider definitions' hashes of each format.
func Hashes(m map[defscache.Format]string) protocol.Hashes {
	return protocol.Hashes{Anthropic: m[defscache.FormatAnthropic], OpenAI: m[defscache.FormatOpenAI]}
}

// ToolsChanged is the notification that the provider definitions changed.
func ToolsChanged(ev *workspace.ToolsChangedEvent) protocol.ToolsChanged {
	return protocol.ToolsChanged{Hashes: Hashes(ev.Hashes), Server: ev.Server, Reason: ev.Reason}
}

// ResourcesChanged is the notification that a server's resources changed.
func ResourcesChanged(ev *workspace.ResourcesChangedEvent) protocol.ListChanged {
	return protocol.ListChanged{Server: ev.Server, Reason: ev.Reason}
}

// PromptsChanged is the notification that a server's prompts changed.
func PromptsChanged(ev *workspace.PromptsChangedEvent) protocol.ListChanged {
	return protocol.ListChanged{Server: ev.Server, Reason: ev.Reason}
}

// ServerLog is one line of a server's log as freecode/servers/log sends
// it, MCP's eight levels folded into the protocol's four.
func ServerLog(l mcp.Log) protocol.ServerLog {
	level := logLevel(l.Level)
	if l.Source == mcp.LogStderr {
		level = stderrLevel(l.Message)
	}
	return protocol.ServerLog{Name: l.Server, Level: level, Source: protocol.LogSource(l.Source), Message: l.Message, Time: l.Time}
}

// stderrLevel is the level of a stderr line, which has none: warning or
// error when the line starts by saying so ("error:", "Error:", "WARN",
// "npm error", a Python traceback's exception), else info.
func stderrLevel(line string) protocol.LogLevel {
	switch {
	case stderrError.MatchString(line):
		return protocol.LevelError
	case stderrWarning.MatchString(line):
		return protocol.LevelWarning
	}
	return protocol.LevelInfo
}

var (
	stderrError   = regexp.MustCompile(`^(?:\[?(?:error|ERROR|Error|fatal|FATAL|Fatal|panic|CRITICAL)\b|npm (?:error|ERR!)|[A-Z]\w*(?:Error|Exception): )`)
	stderrWarning = regexp.MustCompile(`^(?:\[?(?:warn|WARN|Warn|warning|WARNING|Warning)\b|npm warn)`)
)

// logLevel folds MCP's log levels into the protocol's; a stderr line,
// which has none, is info.
func logLevel(mcpLevel string) protocol.LogLevel {
	switch mcpLevel {
	case "debug":
		return protocol.LevelDebug
	case "warning":
		return protocol.LevelWarning
	case "error", "critical", "alert", "emergency":
		return protocol.LevelError
	}
	return protocol.LevelInfo
}
