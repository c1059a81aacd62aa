package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// loadFixture loads testdata/managed/name as a machine's only managed
// file.
func loadFixture(t *testing.T, name string) *Managed {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "managed", name))
	if err != nil {
		t.Fatal(err)
	}
	return mustLoadManaged(t, writeManaged(t, map[string]string{ManagedSettingsName: string(data)}))
}

// outcome is a documented verdict: "" runs, else what Reason says after
// "blocked by your organization's policy: " (up to " in /" or " (").
type outcome struct {
	s    Server
	want string
}

func checkOutcomes(t *testing.T, m *Managed, outcomes []outcome) {
	t.Helper()
	for _, o := range outcomes {
		got := reason(m, o.s, nil)
		got = strings.TrimPrefix(got, policy)
		got, _, _ = strings.Cut(got, " in /")
		got, _, _ = strings.Cut(got, " (")
		if got != o.want {
			t.Errorf("%s %s%v: %q, want %q", o.s.Name, o.s.URL, o.s.Command, got, o.want)
		}
	}
}

// noErrors fails on any error-level problem of m: the documented files
// load as they are, at most with warnings for the keys FreeCode does not
// use.
func noErrors(t *testing.T, m *Managed) {
	t.Helper()
	for _, p := range m.Problems {
		if !p.Warning {
			t.Errorf("problem: %s", p.at(p.Path)+p.String())
		}
	}
}

const notInAllowed = "not in allowedMcpServers"

// The outcomes https://code.claude.com/docs/en/managed-mcp documents for
// its examples.
func TestManagedFixturesClaudeCode(t *testing.T) {
	tests := []struct {
		file     string
		outcomes []outcome
	}{
		{"claude-example.json", []outcome{
			{remote("github", "https://api.githubcopilot.com/mcp/"), ""},
			{remote("github", "https://github.example.org/mcp"), notInAllowed}, // an allowed name would not do: URL entries exist
			{local("fs", "npx", "-y", "@modelcontextprotocol/server-filesystem", "."), ""},
			{local("fs", "npx", "-y", "@modelcontextprotocol/server-filesystem", "/"), notInAllowed},
			{local("approved", "python", "/usr/local/bin/approved-server.py"), ""},
			{local("x", "npx", "-y", "unapproved-package"), "deniedMcpServers[1]"},
			{remote("dangerous-server", "https://mcp.example.com/mcp"), "deniedMcpServers[0]"},
			{remote("api", "https://api.internal.example.com/mcp"), ""},
			{remote("bad", "https://a.untrusted.example.com/mcp"), "deniedMcpServers[2]"},
		}},
		{"claude-url-only.json", []outcome{
			{remote("a", "https://mcp.example.com/api"), ""},
			{remote("b", "https://api.internal.example.com/mcp"), ""},
			{remote("c", "https://external.example.com/mcp"), notInAllowed},
			{local("d", "npx", "-y", "anything"), notInAllowed},
		}},
		{"claude-command-only.json", []outcome{
			{local("a", "npx", "-y", "approved-package"), ""},
			{local("b", "node", "server.js"), notInAllowed},
			{remote("my-api", "https://my-api.example.com/mcp"), notInAllowed},
		}},
		{"claude-mixed.json", []outcome{
			{local("local-tool", "npx", "-y", "approved-package"), ""},
			{local("local-tool", "node", "server.js"), notInAllowed},
			{local("github", "node", "server.js"), notInAllowed},
			{remote("github", "https://api.githubcopilot.com/mcp/"), ""},
			{remote("other-api", "https://other.example.com/mcp"), notInAllowed},
		}},
		{"claude-name-only.json", []outcome{
			{local("github", "anything"), ""},
			{local("internal-tool", "anything", "else"), ""},
			{remote("github", "https://api.githubcopilot.com/mcp/"), ""},
			{local("other", "x"), notInAllowed},
			{remote("other", "https://other.example.com/"), notInAllowed},
		}},
		{"claude-deny-override.json", []outcome{
			{remote("a", "https://mcp.example.com/api"), ""},
			{remote("b", "https://staging.example.com/api"), "deniedMcpServers[0]"},
			{remote("c", "https://other.com/mcp"), notInAllowed},
		}},
		{"claude-managed-only.json", []outcome{
			{remote("a", "https://api.githubcopilot.com/mcp/"), ""},
			{remote("b", "https://x.internal.example.com/mcp"), ""},
			{remote("c", "https://mcp.example.com/"), notInAllowed},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			m := loadFixture(t, tc.file)
			noErrors(t, m)
			if len(m.Problems) != 0 {
				t.Errorf("problems %v, want none", m.Problems)
			}
			checkOutcomes(t, m, tc.outcomes)
		})
	}
}

// The outcomes GitHub's Copilot docs give for its examples: a server
// matching an allow-list entry runs, the filesystem server on the root
// is blocked whatever else matches, anything else is blocked.
func TestManagedFixturesCopilot(t *testing.T) {
	outcomes := []outcome{
		{remote("github", "https://api.githubcopilot.com/mcp/"), ""},
		{local("playwright", "npx", "@playwright/mcp@latest"), ""},
		{local("markitdown", "cmd", "/c", "uvx", "markitdown-mcp"), ""},
		{local("fs", "npx", "-y", "@modelcontextprotocol/server-filesystem", "/"), "deniedMcpServers[0]"},
		{local("fs", "npx", "-y", "@modelcontextprotocol/server-filesystem", "/home"), notInAllowed},
		{local("markitdown", "uvx", "markitdown-mcp"), notInAllowed},
		{remote("learn", "https://learn.microsoft.com/api/mcp"), notInAllowed},
	}
	t.Run("copilot-allowlist.json", func(t *testing.T) {
		m := loadFixture(t, "copilot-allowlist.json")
		noErrors(t, m)
		checkOutcomes(t, m, outcomes)
	})
	t.Run("copilot-reference.json", func(t *testing.T) {
		m := loadFixture(t, "copilot-reference.json")
		noErrors(t, m)
		checkOutcomes(t, m, outcomes)
		var warned []string
		for _, p := range m.Problems {
			warned = append(warned, p.Key)
		}
		want := "model permissions.disableBypassPermissionsMode enabledPlugins extraKnownMarketplaces strictKnownMarketplaces " +
			"telemetry.captureContent telemetry.lockCaptureContent telemetry.serviceName telemetry.resourceAttributes remoteControl " +
			"sandbox.enabled sandbox.failIfUnavailable sandbox.allowBypass sandbox.sandboxMcpServers sandbox.sandboxLspServers"
		if got := strings.Join(warned, " "); got != want {
			t.Errorf("warnings at\n\t%s\nwant\n\t%s", got, want)
		}
		var rules []string
		for _, r := range m.Permissions {
			rules = append(rules, r.Effect+" "+r.Pattern)
		}
		wantRules := "deny Shell(rm -rf *)|deny Read(~/.ssh/**)|deny Edit(//etc/**)|deny Domain(*.unapproved.example)|" +
			"ask Shell(git push *)|ask Edit(/src/**)|ask Domain(api.github.com)|" +
			"allow Shell(npm test *)|allow Read(/src/**)|allow Domain(registry.npmjs.org)"
		if got := strings.Join(rules, "|"); got != wantRules {
			t.Errorf("rules\n\t%s\nwant\n\t%s", got, wantRules)
		}
	})
}
