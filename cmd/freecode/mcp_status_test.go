package main

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/freecode/freecode/internal/protocol"
)

func TestPrintStatus(t *testing.T) {
	now := time.Date(2026, 5, 1, 10, 5, 3, 0, time.UTC)
	since := now.Add(-5*time.Minute - 3*time.Second)
	tests := []struct {
		name string
		st   protocol.ServerStatus
		tail int
		want string
	}{
		{
			name: "connected",
			st: protocol.ServerStatus{
				Name: "demo", Scope: "user", Type: "local", Transport: "stdio", State: protocol.StateConnected,
				ToolCount: 7, PID: 4242, ServerInfo: &protocol.ServerInfo{Name: "freecode-demo", Version: "1.0.0"},
				ProtocolVersion: "2025-11-25", ConnectedAt: since, LastPingMs: 1.25, Command: []string{"/bin/demo server"},
				StderrTail: []string{"serving"},
			},
			tail: 5,
			want: `✓ demo: connected
    scope      user, local
    transport  stdio, pid 4242
    command    '/bin/demo server'
    tools      7
    protocol   2025-11-25 (freecode-demo 1.0.0)
    connected  since ` + since.Local().Format(time.DateTime) + ` (5m3s ago)
    last ping  1.25 ms
    stderr     serving
`,
		},
		{
			// What a server wrote is escaped; only the last lines of a
			// long tail are shown, and the rest counted.
			name: "failed, with a hostile stderr",
			st: protocol.ServerStatus{
				Name: "bad", Scope: "project", Type: "local", Transport: "stdio", State: protocol.StateFailed,
				LastError: "exit status 3\nsecond line \x1b[31m", StderrTail: []string{"one", "two", "\x1b]52;c;cm0gLXJm\a", "four"},
				ConnectedAt: since,
			},
			tail: 2,
			want: `✗ bad: failed
    scope      project, local
    transport  stdio
    tools      0
    last error exit status 3
               second line \x1b[31m
    stderr     (2 lines before these: freecode mcp logs bad)
               \x1b]52;c;cm0gLXJm\x07
               four
`,
		},
		{
			// What happened first, and the next try while it waits.
			name: "connecting, an early exit retried",
			st: protocol.ServerStatus{
				Name: "gh", Scope: "user", Type: "local", Transport: "stdio", State: protocol.StateConnecting,
				LastError: "exited with code 3: error: GITHUB_TOKEN is not set", LastErrorKind: protocol.FailureExited,
				Retry:      &protocol.RetryStatus{Attempt: 2, Max: 6, At: now.Add(4 * time.Second)},
				StderrTail: []string{"error: GITHUB_TOKEN is not set"},
			},
			tail: 5,
			want: `… gh: connecting
    scope      user, local
    transport  stdio
    tools      0
    last error exited with code 3: error: GITHUB_TOKEN is not set
               retrying 2/6 in 4 s
    stderr     error: GITHUB_TOKEN is not set
`,
		},
		{
			name: "remote, needing a sign-in, whole tail",
			st: protocol.ServerStatus{
				Name: "gh", Scope: "user", Type: "remote", State: protocol.StateNeedsAuth,
				URL: "https://api.example.com/mcp?key=***", ToolListCut: "cut at 1000 tools", StderrTail: []string{"a", "b"},
			},
			tail: -1,
			want: `! gh: needsAuth
    scope      user, remote
    transport  not known yet
    url        https://api.example.com/mcp?key=***
    tools      0
               ! cut at 1000 tools
    stderr     a
               b
`,
		},
		{
			// Installed from the MCP Registry: which server, version and
			// registry, its name escaped (the registry's text).
			name: "from the registry",
			st: protocol.ServerStatus{
				Name: "sqlite", Scope: "user", Type: "local", Transport: "stdio", State: protocol.StateStopped,
				Command:  []string{"docker", "run", "-i", "--rm", "ghcr.io/example/mcp-sqlite@sha256:ab"},
				Registry: &protocol.RegistryIdentity{Name: "io.example/sqlite\x1b[2J", Version: "1.0.0", URL: "https://registry.example.com", Digest: "sha256:ab"},
			},
			tail: 5,
			want: `- sqlite: stopped
    scope      user, local
    transport  stdio
    command    docker run -i --rm ghcr.io/example/mcp-sqlite@sha256:ab
    registry   io.example/sqlite\x1b[2J@1.0.0 from https://registry.example.com (sha256:ab)
    tools      0
`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			printStatus(&b, &tc.st, now, tc.tail)
			if diff := cmp.Diff(tc.want, b.String()); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
