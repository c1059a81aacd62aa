package mcp

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/freecode/freecode/config"
)

// A server installed from the MCP Registry says which one in its status,
// whatever its state, and in the approval of a project entry; the status
// holds a copy, not the entry's block.
func TestStatusOfRegistry(t *testing.T) {
	reg := &config.Registry{Name: "io.example/weather", Version: "1.4.0", URL: "https://registry.example.com", Digest: "sha256:ab"}
	srv := config.Server{Name: "weather", Type: config.TypeLocal, Command: []string{"uvx", "mcp-weather==1.4.0"}, Registry: reg, Enabled: true}
	for _, st := range []State{StateDisabled, StateStopped, StateBlocked} {
		got := StatusOf(srv, st)
		if diff := cmp.Diff(reg, got.Registry); diff != "" {
			t.Errorf("%s: registry (-want +got):\n%s", st, diff)
		}
		if got.Registry == reg {
			t.Errorf("%s: the status shares the entry's block", st)
		}
	}
	srv.Scope = config.ScopeProject
	got := StatusOf(srv, StateAwaitingApproval)
	if got.Approval == nil || !cmp.Equal(reg, got.Approval.Registry) || !cmp.Equal(reg, got.Registry) {
		t.Errorf("awaiting approval: status %+v, approval %+v", got.Registry, got.Approval)
	}

	srv.Registry = nil
	if got := StatusOf(srv, StateStopped); got.Registry != nil {
		t.Errorf("an entry written by hand has registry %+v", got.Registry)
	}
}
