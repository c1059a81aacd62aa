package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/freecode/freecode/internal/mcptest"
	"github.com/freecode/freecode/internal/mcpwire"
)

// tasksConfig writes a config whose one server, tasky, is the real tasks
// server of internal/mcptest over HTTP on loopback, and returns its path,
// the server, and the arguments of its hold tool with what releases it.
func tasksConfig(t *testing.T) (cfg string, h *mcptest.TasksHTTP, holdArgs string, release func()) {
	h = mcptest.StartTasksHTTP(t, "")
	dir := t.TempDir()
	cfg = filepath.Join(dir, "config.json")
	b, _ := json.Marshal(map[string]any{"mcp": map[string]any{"servers": []any{
		map[string]any{"name": "tasky", "type": "remote", "url": h.URL, "transport": "http"},
	}}})
	if err := os.WriteFile(cfg, b, 0o600); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "release")
	return cfg, h, fmt.Sprintf(`{"release":%q}`, path), func() {
		if err := os.WriteFile(path, nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// runTask runs `freecode tools call` of hold in-process with ctx (its
// cancel is Ctrl-C), returning its output buffers and its exit code.
func runTask(ctx context.Context, t *testing.T, cfg, args string) (*notifyBuffer, *notifyBuffer, <-chan int) {
	var out, errOut notifyBuffer
	done := make(chan int, 1)
	go func() {
		done <- runContext(ctx, &out, &errOut, "--config", cfg, "--project", t.TempDir(), "tools", "call", "mcp__tasky__hold", "--args", args, "--yes")
	}()
	return &out, &errOut, done
}

func exitOf(t *testing.T, done <-chan int, errOut *notifyBuffer) int {
	t.Helper()
	select {
	case code := <-done:
		return code
	case <-time.After(hangGuard):
		t.Fatalf("freecode tools call did not end:\n%s", errOut.String())
	}
	return 0
}

// `freecode tools call` of a tool its server runs as a task waits for the
// task's end, showing its status as it goes, and prints its result.
func TestToolsCallWaitsForATask(t *testing.T) {
	cfg, _, args, release := tasksConfig(t)
	out, errOut, done := runTask(t.Context(), t, cfg, args)
	errOut.await(t, "running as task ")
	errOut.await(t, "progress: task working: holding until ")
	release()
	if code := exitOf(t, done, errOut); code != 0 {
		t.Fatalf("exit %d\n%s", code, errOut.String())
	}
	if !strings.Contains(out.String(), "released ") {
		t.Errorf("stdout:\n%s", out.String())
	}
}

// Ctrl-C while `freecode tools call` waits for a task cancels the task on
// its server (tasks/cancel) and exits with status 1.
func TestToolsCallCtrlCCancelsTheTask(t *testing.T) {
	cfg, h, args, _ := tasksConfig(t)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	out, errOut, done := runTask(ctx, t, cfg, args)
	errOut.await(t, "progress: task working: holding until ")
	cancel() // Ctrl-C
	if code := exitOf(t, done, errOut); code != 1 {
		t.Errorf("exit %d after Ctrl-C, want 1\n%s", code, errOut.String())
	}
	awaitServerCancelled(t, h, out.String())
}

// awaitServerCancelled checks that the server's one task ends cancelled,
// and that the command's output (stdout) says so.
func awaitServerCancelled(t *testing.T, h *mcptest.TasksHTTP, stdout string) {
	t.Helper()
	ids := h.Engine().IDs()
	if len(ids) != 1 {
		t.Fatalf("the server has tasks %v, want one", ids)
	}
	ctx, cancel := context.WithTimeout(t.Context(), hangGuard)
	defer cancel()
	dt, err := h.Engine().Await(ctx, ids[0], func(dt mcpwire.Task) bool { return dt.Status.Terminal() })
	if err != nil || dt.Status != mcpwire.TaskCancelled {
		t.Errorf("the server's task: %+v, %v; want cancelled\n%s", dt.Status, err, stdout)
	}
	if !strings.Contains(stdout, "was cancelled (tasks/cancel sent") {
		t.Errorf("the result does not say the task was cancelled:\n%s", stdout)
	}
}
