package server

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/freecode/freecode/config"
	"github.com/freecode/freecode/mcp"
	"github.com/freecode/freecode/orchestrator"
	"github.com/freecode/freecode/permissions"
	"github.com/freecode/freecode/workspace"
)

// The packages below the server encode their values in the protocol's
// shape too (for the CLI, for logs); what the server puts on the wire,
// converted to internal/protocol's types, must be the same JSON, so that
// the two never drift apart.
func TestWireMatchesPackages(t *testing.T) {
	yes, no := true, false
	status := mcp.Status{
		Name: "srv", Scope: "user", Type: "local", Transport: "stdio", State: mcp.StateConnected,
		ToolCount: 3, PID: 42, ServerInfo: &mcp.ServerInfo{Name: "s", Version: "1"}, ProtocolVersion: "2025-11-25",
		ConnectedAt: time.Date(2026, 5, 1, 10, 0, 0, 123456789, time.UTC), LastPing: 1500 * time.Microsecond,
		LastError: "earlier: reset", StderrTail: []string{"a", "b"}, Command: []string{"srv", "--flag"},
		ToolListCut: "cut at 1000 tools",
	}
	remote := mcp.StatusOf(config.Server{Name: "r", Scope: "project", Type: config.TypeRemote, Transport: config.TransportHTTP,
		URL: "https://user:pw@example.com/mcp?key=${env:KEY}", Headers: map[string]string{"Authorization": "Bearer ${env:TOKEN}"},
		CABundle: "/p/ca.pem", ClientCert: "/p/c.pem", ClientKey: "/p/k.pem",
		OAuth: &config.OAuth{ClientID: "id", ClientSecret: "${env:SECRET}", ClientMetadataURL: "https://example.com/c.json", Scopes: []string{"a", "b"}, CallbackPort: 8765},
	}, mcp.StateAwaitingApproval)
	local := mcp.StatusOf(config.Server{Name: "l", Scope: "project", Type: config.TypeLocal, Command: []string{"node", "s.js"},
		Cwd: "/p/tools", Env: map[string]string{"NODE_OPTIONS": "--require ./evil.js", "KEY": "${env:OPENAI_API_KEY}"}, InheritEnv: true,
	}, mcp.StateAwaitingApproval)
	result := orchestrator.ToolResult{
		CallID: "c1",
		Content: []mcpsdk.Content{&mcpsdk.TextContent{Text: "<b>hi</b> & bye"},
			&mcpsdk.ImageContent{Data: []byte{1, 2, 3}, MIMEType: "image/png"}},
		StructuredContent: map[string]any{"n": 1},
		IsError:           true, Decision: orchestrator.DecisionAsked, DurationMs: 12,
		Truncated: &orchestrator.Truncated{ShownChars: 5, TotalChars: 10, SavedTo: "/tmp/r.txt"},
	}
	wireResult, err := resultToWire(result)
	if err != nil {
		t.Fatal(err)
	}
	info := orchestrator.ToolInfo{ID: "mcp__s__t", Server: "s", Name: "t", Title: "T", Description: "d", ReadOnly: true,
		Destructive: &no, OpenWorld: &yes, InputSchema: json.RawMessage(`{"type":"object"}`), Alias: "mcp__s__t_1"}
	rule := permissions.Rule{Pattern: "mcp__srv", Effect: permissions.Ask, Source: permissions.SourceLocal, File: "/p/.freecode/settings.local.json"}
	project := workspace.ProjectInfo{Root: "/p", Trusted: true, ConfigPath: "/h/.freecode/config.json",
		SettingsPaths: workspace.SettingsPaths{User: "/h/.freecode/settings.json", Project: "/p/.freecode/settings.json", Local: "/p/.freecode/settings.local.json"}}

	for _, tc := range []struct {
		name      string
		pkg, wire any
	}{
		{"ServerStatus", status, statusToWire(status)},
		{"ServerStatus of a remote server awaiting approval", remote, statusToWire(remote)},
		{"ServerStatus of a local server awaiting approval", local, statusToWire(local)},
		{"ToolResult", result, wireResult},
		{"ToolInfo", info, toolToWire(info)},
		{"Rule", rule, ruleToWire(rule)},
		{"Project", project, projectToWire(project, nil)},
	} {
		pkg, err := json.Marshal(tc.pkg)
		if err != nil {
			t.Fatal(err)
		}
		wire, err := json.Marshal(tc.wire)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(string(pkg), string(wire)); diff != "" {
			t.Errorf("%s: the package's JSON and the wire's differ (-package +wire):\n%s", tc.name, diff)
		}
	}
}
