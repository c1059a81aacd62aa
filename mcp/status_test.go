package mcp

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
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

// goldenStatuses covers every field of ServerStatus and the ways each is
// left out.
func goldenStatuses() []Status {
	connected := Status{
		Name: "fs", Scope: "user", Type: "local", Transport: "stdio", State: StateConnected,
		ToolCount: 14, PID: 4242, ServerInfo: &ServerInfo{Name: "secure-filesystem-server", Version: "0.2.0"},
		ProtocolVersion: "2025-11-25",
		ConnectedAt:     time.Date(2026, 3, 4, 5, 6, 7, 890_000_000, time.UTC),
		LastPing:        1234 * time.Microsecond,
		StderrTail:      []string{"Secure MCP Filesystem Server running on stdio"},
		Command:         []string{"npx", "-y", "@modelcontextprotocol/server-filesystem", "${env:HOME}/src"},
	}
	pending := StatusOf(config.Server{
		Name: "build", Scope: "project", Type: "local",
		// Shown as configured: the frontend escapes what it prints.
		Command: []string{"sh", "-c", "make \u202eslp.exe\x1b[2J"},
		// The repository's text, which approving it runs with: shown
		// whole, ${env:…} unexpanded.
		Env:        map[string]string{"TOKEN": "${env:GITHUB_TOKEN}", "NODE_OPTIONS": "--require ./evil.js"},
		InheritEnv: true, Cwd: "/home/me/project/tools",
	}, StateAwaitingApproval)
	// A user's own entry shows no env: its values may be secrets.
	mine := StatusOf(config.Server{
		Name: "mine", Scope: "user", Type: "local", Command: []string{"x"}, Env: map[string]string{"TOKEN": "never-shown"},
	}, StateStopped)
	remote := StatusOf(config.Server{
		Name: "gh", Scope: "user", Type: "remote", Transport: config.TransportHTTP,
		URL:     "https://user:pw@api.example.com/mcp?key=s3cret&v=${env:V}",
		Headers: map[string]string{"Authorization": "Bearer never-shown"},
	}, StateReconnecting)
	remote.ToolCount = 3
	remote.LastError = "health ping: context deadline exceeded"
	cut := Status{
		Name: "big", Scope: "user", Type: "remote", State: StateConnected, ToolCount: 1000,
		URL:         "https://big.example.com/mcp",
		ToolListCut: "the tool list was cut at 1000 pages; the server kept handing out cursors",
	}
	failed := StatusOf(config.Server{Name: "gone", Scope: "user", Type: "local", Command: []string{"false"}}, StateFailed)
	failed.LastError = "initialize: EOF (process exit status 1)"
	return []Status{connected, pending, mine, remote, cut, failed, StatusOf(config.Server{Name: "off", Scope: "user", Type: "local", Command: []string{"x"}}, StateDisabled)}
}

func TestStatusJSONGolden(t *testing.T) {
	statuses := goldenStatuses()
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

	// The CLI reads statuses back: the round trip is lossless.
	var back []Status
	if err := json.Unmarshal(got, &back); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(statuses, back); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
}

func TestStatusUnmarshalRejectsUnknownState(t *testing.T) {
	var st Status
	if err := json.Unmarshal([]byte(`{"name":"x","state":"sleeping"}`), &st); err == nil {
		t.Error("an unknown state decoded without an error")
	}
}
