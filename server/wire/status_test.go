package wire

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/freecode/freecode/config"
	"github.com/freecode/freecode/internal/protocol"
	"github.com/freecode/freecode/mcp"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

// goldenStatuses covers every field of ServerStatus and the ways each is
// left out.
func goldenStatuses() []mcp.Status {
	connected := mcp.Status{
		Name: "fs", Scope: "user", Type: "local", Transport: "stdio", State: mcp.StateConnected,
		ToolCount: 14, PID: 4242, ServerInfo: &mcp.ServerInfo{Name: "secure-filesystem-server", Version: "0.2.0"},
		ProtocolVersion: "2025-11-25",
		ConnectedAt:     time.Date(2026, 3, 4, 5, 6, 7, 890_000_000, time.UTC),
		LastPing:        1234 * time.Microsecond,
		StderrTail:      []string{"Secure MCP Filesystem Server running on stdio"},
		Command:         []string{"npx", "-y", "@modelcontextprotocol/server-filesystem", "${env:HOME}/src"},
		Sandbox:         "sandboxed: system read-only; writes ~/src, a private /tmp, ~/.npm (npm's cache); cannot read ~/.ssh; no network",
	}
	pending := mcp.StatusOf(config.Server{
		Name: "build", Scope: "project", Type: "local",
		// Shown as configured: the frontend escapes what it prints.
		Command: []string{"sh", "-c", "make \u202eslp.exe\x1b[2J"},
		// The repository's text, which approving it runs with: shown
		// whole, ${env:…} unexpanded.
		Env:        map[string]string{"TOKEN": "${env:GITHUB_TOKEN}", "NODE_OPTIONS": "--require ./evil.js"},
		InheritEnv: true, Cwd: "/home/me/project/tools",
	}, mcp.StateAwaitingApproval)
	// The line is the policy's, resolved on this machine, whose tests are
	// mcp/sandbox's: here, one as it would read.
	pending.Approval.Sandbox = "sandboxed: system read-only; writes /home/me/project/tools, a private /tmp, ~/.npm (npm's cache); cannot read ~/.ssh; network only to registry.npmjs.org"
	// A user's own entry shows no env: its values may be secrets.
	mine := mcp.StatusOf(config.Server{
		Name: "mine", Scope: "user", Type: "local", Command: []string{"x"}, Env: map[string]string{"TOKEN": "never-shown"},
	}, mcp.StateStopped)
	remote := mcp.StatusOf(config.Server{
		Name: "gh", Scope: "user", Type: "remote", Transport: config.TransportHTTP,
		URL:     "https://user:pw@api.example.com/mcp?key=s3cret&v=${env:V}",
		Headers: map[string]string{"Authorization": "Bearer never-shown"},
	}, mcp.StateReconnecting)
	remote.ToolCount = 3
	remote.LastError = "health ping: context deadline exceeded"
	cut := mcp.Status{
		Name: "big", Scope: "user", Type: "remote", State: mcp.StateConnected, ToolCount: 1000,
		URL:         "https://big.example.com/mcp",
		ToolListCut: "the tool list was cut at 1000 pages; the server kept handing out cursors",
	}
	failed := mcp.StatusOf(config.Server{Name: "gone", Scope: "user", Type: "local", Command: []string{"false"}}, mcp.StateFailed)
	failed.LastError = "exited with code 1: Error: GITHUB_TOKEN is not set"
	failed.LastErrorKind, failed.ExitCode, failed.HasExitCode = mcp.FailureExited, 1, true
	retrying := mcp.StatusOf(config.Server{Name: "gh", Scope: "user", Type: "local", Command: []string{"node", "gh.js"}}, mcp.StateConnecting)
	retrying.LastError = "exited with code 3: error: GITHUB_TOKEN is not set"
	retrying.LastErrorKind, retrying.ExitCode, retrying.HasExitCode = mcp.FailureExited, 3, true
	retrying.Retry = &mcp.Retry{Attempt: 2, Max: 6, At: time.Date(2026, 5, 1, 10, 0, 4, 0, time.UTC)}
	noSecret := mcp.StatusOf(config.Server{Name: "gh", Scope: "user", Type: "remote", URL: "https://api.example.com/mcp"}, mcp.StateFailed)
	noSecret.LastError = "server gh: header Authorization: secret GITHUB_TOKEN is not set (`freecode secret set GITHUB_TOKEN`)"
	noSecret.LastErrorKind, noSecret.MissingSecrets = mcp.FailureSecret, []string{"GITHUB_TOKEN"}
	blocked := mcp.StatusOf(config.Server{Name: "scraper", Scope: "user", Type: "local", Command: []string{"npx", "-y", "some-scraper"}}, mcp.StateBlocked)
	blocked.Blocked = "blocked by your organization's policy: deniedMcpServers[2] in /etc/freecode/managed-settings.json — ask #it-help for a new server"
	return []mcp.Status{connected, pending, mine, remote, cut, failed, retrying, mcp.StatusOf(config.Server{Name: "off", Scope: "user", Type: "local", Command: []string{"x"}}, mcp.StateDisabled), blocked, noSecret}
}

// The statuses a frontend is sent, as JSON: every field, and the ways each
// is left out, with no secret of the user's in them.
func TestServerStatusGolden(t *testing.T) {
	var statuses []protocol.ServerStatus
	for _, st := range goldenStatuses() {
		statuses = append(statuses, ServerStatus(st))
	}
	got, err := json.MarshalIndent(statuses, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	path := filepath.Join("testdata", "status.golden.json")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("ServerStatus JSON (-want +got):\n%s", diff)
	}
	if bytes.Contains(got, []byte("never-shown")) || bytes.Contains(got, []byte("s3cret")) || bytes.Contains(got, []byte(":pw@")) {
		t.Errorf("a secret reached the status JSON:\n%s", got)
	}

	// The CLI and the extension read statuses back: the round trip is
	// lossless, and knows every member.
	var back []protocol.ServerStatus
	dec := json.NewDecoder(bytes.NewReader(got))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&back); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(statuses, back); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
}

// Every state a Conn can be in is one the protocol names, spelt as it
// spells it.
func TestServerStates(t *testing.T) {
	want := map[mcp.State]protocol.ServerState{
		mcp.StateDisabled:         protocol.StateDisabled,
		mcp.StateAwaitingApproval: protocol.StateAwaitingApproval,
		mcp.StateConnecting:       protocol.StateConnecting,
		mcp.StateConnected:        protocol.StateConnected,
		mcp.StateReconnecting:     protocol.StateReconnecting,
		mcp.StateFailed:           protocol.StateFailed,
		mcp.StateStopped:          protocol.StateStopped,
		mcp.StateNeedsAuth:        protocol.StateNeedsAuth,
		mcp.StateIdle:             protocol.StateIdle,
		mcp.StateBlocked:          protocol.StateBlocked,
	}
	n := 0
	for s := mcp.State(0); s < 100 && s.String() != "unknown"; s++ {
		got := ServerStatus(mcp.Status{State: s}).State
		if w, ok := want[s]; !ok || got != w {
			t.Errorf("mcp.State %d (%v) is %q on the wire, want %q", s, s, got, w)
		}
		n++
	}
	if n != len(want) {
		t.Errorf("%d states counted, want %d", n, len(want))
	}
}

// A stderr line has no level; one that starts by saying it is an error or
// a warning is shown as one, and the rest as info.
func TestStderrLevel(t *testing.T) {
	tests := []struct {
		line string
		want protocol.LogLevel
	}{
		{"error: GITHUB_TOKEN is not set", protocol.LevelError},
		{"Error: GITHUB_PERSONAL_ACCESS_TOKEN environment variable is not set", protocol.LevelError},
		{"npm error code E404", protocol.LevelError},
		{"KeyError: 'GITHUB_TOKEN'", protocol.LevelError},
		{"[ERROR] boom", protocol.LevelError},
		{"WARN deprecated option", protocol.LevelWarning},
		{"npm warn exec The following package was not found and will be installed", protocol.LevelWarning},
		{"Secure MCP Filesystem Server running on stdio", protocol.LevelInfo},
		{"    at file:///x.js:2:15", protocol.LevelInfo},
		{"errors are reported below", protocol.LevelInfo},
	}
	for _, tc := range tests {
		got := ServerLog(mcp.Log{Server: "s", Source: mcp.LogStderr, Message: tc.line})
		if got.Level != tc.want {
			t.Errorf("%q: level %q, want %q", tc.line, got.Level, tc.want)
		}
	}
	// A line of the server's life keeps the level FreeCode gave it.
	if got := ServerLog(mcp.Log{Server: "s", Source: mcp.LogFreeCode, Level: mcp.LevelWarning, Message: "retrying 1/6 in 0.5 s"}); got.Level != protocol.LevelWarning || got.Source != protocol.SourceFreeCode {
		t.Errorf("life line: %+v", got)
	}
}
