package orchestrator

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/freecode/freecode/config"
	"github.com/freecode/freecode/mcp"
)

// TestCrashThroughManager runs the whole path a sidecar uses: a real stdio
// server process under mcp.Manager, its tools registered from the
// Manager's events, calls through ConnCaller. The server process dies in
// the first call of each crash_ tool: the read-only one is retried once
// the Conn has reconnected, the destructive one is not (the server saw it
// once).
func TestCrashThroughManager(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	counts := filepath.Join(dir, "counts")
	cfgJSON, _ := json.Marshal(map[string]any{"mcp": map[string]any{"servers": []any{map[string]any{
		"name": "crash", "type": "local", "command": []string{exe},
		"env":     map[string]string{crashServerEnv: "1", crashCountEnv: counts},
		"timeout": 20000,
	}}}})
	cfgPath := filepath.Join(dir, "config.json")
	if err := os.WriteFile(cfgPath, cfgJSON, 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(cfgPath)
	if err != nil {
		t.Fatal(err)
	}

	reg := NewRegistry(nil)
	added := make(chan struct{}, 10)
	reg.Subscribe(func(ev ToolsChanged) {
		if ev.Server == "crash" && ev.Reason == "connected" {
			added <- struct{}{}
		}
	})
	var mgr *mcp.Manager
	mgr = mcp.NewManager(&mcp.ManagerOptions{OnToolsChanged: func(ev mcp.ToolsChanged) { reg.HandleToolsChanged(ev, mgr) }})
	defer mgr.Close()
	mgr.Apply(t.Context(), cfg.MCP.Servers)
	select {
	case <-added:
	case <-time.After(30 * time.Second): // hang guard only
		t.Fatal("server's tools never registered")
	}

	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second) // hang guard only
	defer cancel()
	o := New(reg, nil)
	allow := &ExecOptions{Approver: &recordingApprover{answer: Answer{Decision: AllowOnce}}}
	rs := o.Execute(ctx, []ToolCall{{CallID: "1", Tool: "mcp__crash__crash_lookup"}}, allow)
	mustNotError(t, rs[0])
	if got := rs[0].Text(); got != "crash_lookup #2" {
		t.Errorf("crash_lookup = %q, want the retry's answer", got)
	}
	rs = o.Execute(ctx, []ToolCall{{CallID: "2", Tool: "mcp__crash__crash_remove"}}, allow)
	if !rs[0].IsError || !strings.Contains(rs[0].Text(), "may or may not have run") {
		t.Errorf("crash_remove = %v %q", rs[0].IsError, rs[0].Text())
	}
	// The server comes back: the next call works.
	rs = o.Execute(ctx, []ToolCall{{CallID: "3", Tool: "mcp__crash__lookup"}}, allow)
	mustNotError(t, rs[0])

	data, err := os.ReadFile(counts)
	if err != nil {
		t.Fatal(err)
	}
	want := "crash_lookup\ncrash_lookup\ncrash_remove\nlookup\n"
	if diff := cmp.Diff(want, string(data)); diff != "" {
		t.Errorf("calls the server processes saw (-want +got):\n%s", diff)
	}
}
