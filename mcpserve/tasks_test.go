package mcpserve

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/freecode/freecode/internal/mcptest"
	"github.com/freecode/freecode/internal/mcpwire"
)

// tasksEnv is a gateway over the tasks test server (as "tasky", keeping its
// tasks in the returned directory) with rules, served over HTTP.
func tasksEnv(t *testing.T, rules map[string][]string) (url, dir string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir = filepath.Join(t.TempDir(), "upstream-tasks")
	e := newEnv(t, []map[string]any{{"name": "tasky", "type": "local", "command": []string{exe}, "env": map[string]string{mcptest.TasksServerEnv: dir}}}, nil)
	e.rules(t, rules)
	e.open(t)
	return e.serveHTTP(t, ""), dir
}

// A client that declares the tasks extension gets its server's task: it
// follows it through the gateway to each end, answers its question, and
// cancels it.
func TestTasksPassThrough(t *testing.T) {
	url, _ := tasksEnv(t, map[string][]string{"allow": {"mcp__tasky__hold", "mcp__tasky__confirm_delete", "mcp__tasky__protocol_error_job"}})
	c := mcptest.NewTasksClient(t, url, true)
	if raw, err := c.Call("server/discover", nil); err != nil || !strings.Contains(string(raw), mcpwire.TasksExtension) {
		t.Fatalf("server/discover does not offer the tasks extension: %s, %v", raw, err)
	}

	t.Run("working then completed", func(t *testing.T) {
		c := mcptest.NewTasksClient(t, url, true)
		rel := filepath.Join(t.TempDir(), "go")
		w := c.Start("mcp__tasky__hold", map[string]any{"release": rel})
		if !strings.HasPrefix(w.TaskID, "tasky.") || w.PollIntervalMs != 50 {
			t.Fatalf("the gateway's task: %+v", w)
		}
		w = c.Await(w.TaskID, func(w mcptest.WireTask) bool { return strings.HasPrefix(w.StatusMessage, "holding until") })
		if w.Status != "working" {
			t.Fatalf("%+v", w)
		}
		mcptest.Release(t, rel)
		if w := c.Await(w.TaskID, mcptest.TaskStatus("completed")); w.Text() != "released "+rel+" (run 1)" {
			t.Errorf("result %q", w.Text())
		}
	})

	t.Run("input_required", func(t *testing.T) {
		c := mcptest.NewTasksClient(t, url, true)
		id := c.Start("mcp__tasky__confirm_delete", map[string]any{"filename": "x.txt"}).TaskID
		w := c.Await(id, mcptest.TaskStatus("input_required"))
		for key := range w.InputRequests {
			if _, err := c.Call("tasks/update", map[string]any{"taskId": id, "inputResponses": map[string]any{key: map[string]any{"action": "accept", "content": map[string]any{"confirm": true}}}}); err != nil {
				t.Fatal(err)
			}
		}
		if w := c.Await(id, mcptest.TaskStatus("completed")); w.Text() != "deleted x.txt" {
			t.Errorf("result %q", w.Text())
		}
	})

	t.Run("failed", func(t *testing.T) {
		c := mcptest.NewTasksClient(t, url, true)
		id := c.Start("mcp__tasky__protocol_error_job", nil).TaskID
		if w := c.Await(id, mcptest.TaskStatus("failed")); w.Error == nil || w.Error.Code != -32603 {
			t.Errorf("failed task: %+v", w)
		}
	})

	t.Run("cancelled", func(t *testing.T) {
		c := mcptest.NewTasksClient(t, url, true)
		id := c.Start("mcp__tasky__hold", map[string]any{"release": filepath.Join(t.TempDir(), "never")}).TaskID
		if raw, err := c.Call("tasks/cancel", map[string]any{"taskId": id}); err != nil || !mcptest.IsAck(raw) {
			t.Fatalf("tasks/cancel: %s, %v", raw, err)
		}
		if w := c.Await(id, func(w mcptest.WireTask) bool { return w.Status != "working" }); w.Status != "cancelled" {
			t.Errorf("after cancel: %+v", w)
		}
	})

	t.Run("unknown task", func(t *testing.T) {
		c := mcptest.NewTasksClient(t, url, true)
		for _, id := range []string{"tasky.nope", "nodot"} {
			if _, err := c.Get(id); err == nil || err.(*mcptest.RPCError).Code != -32602 {
				t.Errorf("tasks/get %s: %v, want -32602", id, err)
			}
		}
	})
}

// A client without the extension gets the call's end, and is refused the
// task methods.
func TestTasksUndeclaredClient(t *testing.T) {
	url, _ := tasksEnv(t, map[string][]string{"allow": {"mcp__tasky__slow_compute"}})
	c := mcptest.NewTasksClient(t, url, false)
	raw, err := c.Call("tools/call", map[string]any{"name": "mcp__tasky__slow_compute", "arguments": map[string]any{"seconds": 0.1, "label": "sync"}})
	if err != nil || !strings.Contains(string(raw), "computed sync in 0.1s") || strings.Contains(string(raw), `"resultType":"task"`) {
		t.Fatalf("a call of a client without the extension: %s, %v", raw, err)
	}
	if _, err := c.Call("tasks/get", map[string]any{"taskId": "tasky.x"}); err == nil || err.(*mcptest.RPCError).Code != mcpwire.CodeMissingCapability {
		t.Errorf("tasks/get without the extension: %v", err)
	}
}

// The permission decision is taken before the call is made: a denied call
// starts no task on the server.
func TestTasksDeniedStartsNone(t *testing.T) {
	url, dir := tasksEnv(t, map[string][]string{"deny": {"mcp__tasky__hold"}})
	c := mcptest.NewTasksClient(t, url, true)
	raw, err := c.Call("tools/call", map[string]any{"name": "mcp__tasky__hold", "arguments": map[string]any{"release": "x"}})
	if err != nil || strings.Contains(string(raw), "taskId") || !strings.Contains(string(raw), `"isError":true`) || !strings.Contains(string(raw), "denied") {
		t.Fatalf("a denied call: %s, %v", raw, err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("the server has tasks after a denied call: %v", ents)
	}
}
