package mcptest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/freecode/freecode/internal/mcpwire"
)

// TestTasksStates drives a task through each state over HTTP at
// 2026-07-28: working with a status message, input_required answered by
// tasks/update, completed, failed, cancelled.
func TestTasksStates(t *testing.T) {
	h := StartTasksHTTP(t, "")

	t.Run("working then completed", func(t *testing.T) {
		c := NewTasksClient(t, h.URL, true)
		rel := filepath.Join(t.TempDir(), "go")
		id := c.Start("hold", map[string]any{"release": rel}).TaskID
		w := c.Await(id, func(w WireTask) bool { return strings.HasPrefix(w.StatusMessage, "holding until") })
		if w.Status != "working" || w.Result != nil || w.Error != nil {
			t.Fatalf("held task: %+v", w)
		}
		Release(t, rel)
		w = c.Await(id, TaskStatus("completed"))
		if want := "released " + rel + " (run 1)"; w.Text() != want || w.Result.IsError {
			t.Errorf("completed task: result %q (isError %v), want %q", w.Text(), w.Result.IsError, want)
		}
	})

	t.Run("input_required then completed", func(t *testing.T) {
		c := NewTasksClient(t, h.URL, true)
		id := c.Start("confirm_delete", map[string]any{"filename": "a.txt"}).TaskID
		w := c.Await(id, TaskStatus("input_required"))
		if len(w.InputRequests) != 1 {
			t.Fatalf("inputRequests: %v", w.InputRequests)
		}
		var key string
		for k, v := range w.InputRequests {
			key = k
			if !strings.Contains(string(v), `"method":"elicitation/create"`) || !strings.Contains(string(v), "Delete a.txt?") {
				t.Errorf("inputRequests[%s] = %s", k, v)
			}
		}
		// An answer to a key the task did not ask is acknowledged and
		// changes nothing.
		if _, err := c.Call("tasks/update", map[string]any{"taskId": id, "inputResponses": map[string]any{"nope": map[string]any{"action": "accept"}}}); err != nil {
			t.Fatal(err)
		}
		if w, _ := c.Get(id); w.Status != "input_required" {
			t.Fatalf("after an answer to no question: %s", w.Status)
		}
		raw, err := c.Call("tasks/update", map[string]any{"taskId": id, "inputResponses": map[string]any{key: map[string]any{"action": "accept", "content": map[string]any{"confirm": true}}}})
		if err != nil || !IsAck(raw) {
			t.Fatalf("tasks/update: %s, %v", raw, err)
		}
		if w := c.Await(id, TaskStatus("completed")); w.Text() != "deleted a.txt" {
			t.Errorf("result %q", w.Text())
		}
	})

	t.Run("two questions answered one at a time", func(t *testing.T) {
		c := NewTasksClient(t, h.URL, true)
		id := c.Start("multi_input", nil).TaskID
		w := c.Await(id, func(w WireTask) bool { return len(w.InputRequests) == 2 })
		var keys []string
		for k := range w.InputRequests {
			keys = append(keys, k)
		}
		c.Call("tasks/update", map[string]any{"taskId": id, "inputResponses": map[string]any{keys[0]: map[string]any{"action": "accept", "content": map[string]any{"name": "x"}}}})
		w, _ = c.Get(id)
		if _, still := w.InputRequests[keys[1]]; w.Status != "input_required" || len(w.InputRequests) != 1 || !still {
			t.Fatalf("after one answer: %+v", w)
		}
		c.Call("tasks/update", map[string]any{"taskId": id, "inputResponses": map[string]any{keys[1]: map[string]any{"action": "accept", "content": map[string]any{"name": "y"}}}})
		if w := c.Await(id, TaskStatus("completed")); !strings.Contains(w.Text(), "x") || !strings.Contains(w.Text(), "y") {
			t.Errorf("result %q", w.Text())
		}
	})

	t.Run("tool error is completed", func(t *testing.T) {
		c := NewTasksClient(t, h.URL, true)
		id := c.Start("failing_job", nil).TaskID
		if w := c.Await(id, TaskStatus("completed")); !w.Result.IsError {
			t.Errorf("failing_job: %+v", w)
		}
	})

	t.Run("failed", func(t *testing.T) {
		c := NewTasksClient(t, h.URL, true)
		id := c.Start("protocol_error_job", nil).TaskID
		w := c.Await(id, TaskStatus("failed"))
		if w.Error == nil || w.Error.Code != -32603 || !strings.Contains(w.Error.Message, "panicked") || w.Result != nil {
			t.Errorf("failed task: %+v", w)
		}
	})

	t.Run("cancelled", func(t *testing.T) {
		c := NewTasksClient(t, h.URL, true)
		rel := filepath.Join(t.TempDir(), "go")
		id := c.Start("hold", map[string]any{"release": rel}).TaskID
		raw, err := c.Call("tasks/cancel", map[string]any{"taskId": id})
		if err != nil || !IsAck(raw) {
			t.Fatalf("tasks/cancel: %s, %v", raw, err)
		}
		if w, _ := c.Get(id); w.Status != "cancelled" {
			t.Fatalf("after cancel: %s", w.Status)
		}
		// The work stopped: releasing it later changes nothing, and a
		// second cancel is acknowledged the same.
		Release(t, rel)
		if _, err := c.Call("tasks/cancel", map[string]any{"taskId": id}); err != nil {
			t.Fatal(err)
		}
		d, _ := h.Engine().Await(t.Context(), id, func(mcpwire.Task) bool { return true })
		if d.Status != mcpwire.TaskCancelled || d.Result != nil {
			t.Errorf("cancelled task became %+v", d)
		}
	})

	t.Run("unknown task", func(t *testing.T) {
		c := NewTasksClient(t, h.URL, true)
		for _, m := range []string{"tasks/get", "tasks/cancel"} {
			if _, err := c.Call(m, map[string]any{"taskId": "nope"}); err == nil || err.(*RPCError).Code != -32602 {
				t.Errorf("%s of an unknown task: %v, want -32602", m, err)
			}
		}
	})

	t.Run("Mcp-Name must be the task id", func(t *testing.T) {
		c := NewTasksClient(t, h.URL, true)
		rel := filepath.Join(t.TempDir(), "go")
		id := c.Start("hold", map[string]any{"release": rel}).TaskID
		defer c.Call("tasks/cancel", map[string]any{"taskId": id})
		for _, name := range []string{"other", ""} {
			_, err := c.CallWith("tasks/get", map[string]any{"taskId": id}, map[string]string{"Mcp-Name": name})
			if err == nil || err.(*RPCError).Code != mcpwire.CodeHeaderMismatch {
				t.Errorf("tasks/get with Mcp-Name %q: %v, want -32020", name, err)
			}
		}
	})
}

// TestTasksUndeclared: a client that does not declare the extension gets
// plain results, and is refused the task methods and the tools that only
// run as tasks.
func TestTasksUndeclared(t *testing.T) {
	h := StartTasksHTTP(t, "")
	c := NewTasksClient(t, h.URL, false)
	raw, err := c.Call("tools/call", map[string]any{"name": "slow_compute", "arguments": map[string]any{"seconds": 0, "label": "now"}})
	if err != nil || !strings.Contains(string(raw), "computed now in 0s") || strings.Contains(string(raw), "taskId") {
		t.Fatalf("slow_compute without the extension: %s, %v", raw, err)
	}
	_, err = c.Call("tools/call", map[string]any{"name": "failing_job"})
	if e, ok := err.(*RPCError); !ok || e.Code != mcpwire.CodeMissingCapability || !strings.Contains(string(e.Data), mcpwire.TasksExtension) {
		t.Errorf("failing_job without the extension: %v", err)
	}
	for _, m := range []string{"tasks/get", "tasks/update", "tasks/cancel"} {
		if _, err := c.Call(m, map[string]any{"taskId": "x", "inputResponses": map[string]any{}}); err == nil || err.(*RPCError).Code != mcpwire.CodeMissingCapability {
			t.Errorf("%s without the extension: %v", m, err)
		}
	}
	if len(h.Engine().IDs()) != 0 {
		t.Errorf("tasks made for a client without the extension: %v", h.Engine().IDs())
	}
}

// TestTasksRestartHTTP restarts the server mid-task: one keeping its tasks
// in a directory runs the unfinished task again and answers for it; one
// keeping them in memory has forgotten it.
func TestTasksRestartHTTP(t *testing.T) {
	t.Run("persisted", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "tasks")
		h := StartTasksHTTP(t, dir)
		c := NewTasksClient(t, h.URL, true)
		rel := filepath.Join(t.TempDir(), "go")
		id := c.Start("hold", map[string]any{"release": rel}).TaskID
		done := c.Start("slow_compute", map[string]any{"seconds": 0, "label": "early"}).TaskID
		c.Await(done, TaskStatus("completed"))
		if err := h.Restart(); err != nil {
			t.Fatal(err)
		}
		w := c.Await(id, func(w WireTask) bool { return strings.HasPrefix(w.StatusMessage, "holding until") })
		if w.Status != "working" {
			t.Fatalf("after the restart: %+v", w)
		}
		Release(t, rel)
		if w := c.Await(id, TaskStatus("completed")); w.Text() != "released "+rel+" (run 2)" {
			t.Errorf("resumed task's result %q", w.Text())
		}
		if w, err := c.Get(done); err != nil || w.Text() != "computed early in 0s" {
			t.Errorf("task completed before the restart: %+v, %v", w, err)
		}
		fi, err := os.Stat(filepath.Join(dir, id+".json"))
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("task file: %v, %v", fi, err)
		}
	})
	t.Run("forgotten", func(t *testing.T) {
		h := StartTasksHTTP(t, "")
		c := NewTasksClient(t, h.URL, true)
		id := c.Start("hold", map[string]any{"release": filepath.Join(t.TempDir(), "go")}).TaskID
		if err := h.Restart(); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Get(id); err == nil || err.(*RPCError).Code != -32602 {
			t.Errorf("tasks/get after a forgetful restart: %v, want -32602", err)
		}
	})
}

// TestTasksStdioCrash runs the tasks server as a subprocess, crashes it
// mid-task and starts it again on the same directory.
func TestTasksStdioCrash(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tasks")
	rel := filepath.Join(t.TempDir(), "go")
	c := StartTasksStdio(t, dir)
	id := c.Start("hold", map[string]any{"release": rel}).TaskID
	if _, err := c.Call("tools/call", map[string]any{"name": "crash"}); err == nil {
		t.Fatal("crash answered")
	}
	c.cmd.Wait()
	if code := c.cmd.ProcessState.ExitCode(); code != 3 {
		t.Fatalf("crash exited %d", code)
	}
	c = StartTasksStdio(t, dir)
	if w := c.Await(id, TaskStatus("working")); w.StatusMessage == "" {
		t.Fatalf("after the crash: %+v", w)
	}
	Release(t, rel)
	if w := c.Await(id, TaskStatus("completed")); w.Text() != "released "+rel+" (run 2)" {
		t.Errorf("result %q", w.Text())
	}

	f := StartTasksStdio(t, TasksForget)
	id = f.Start("hold", map[string]any{"release": filepath.Join(t.TempDir(), "never")}).TaskID
	f.Call("tools/call", map[string]any{"name": "crash"})
	f.cmd.Wait()
	f = StartTasksStdio(t, TasksForget)
	if _, err := f.Get(id); err == nil || err.(*RPCError).Code != -32602 {
		t.Errorf("tasks/get after a forgetful crash: %v, want -32602", err)
	}
}
