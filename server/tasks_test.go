package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/freecode/freecode/internal/frontend"
	"github.com/freecode/freecode/internal/mcptest"
	"github.com/freecode/freecode/internal/protocol"
	"github.com/freecode/freecode/server/servertest"
)

// tasksFiles is a config with one server, "tasky": the real tasks server
// of internal/mcptest over Streamable HTTP on loopback.
func tasksFiles(t *testing.T) (string, *mcptest.TasksHTTP) {
	h := mcptest.StartTasksHTTP(t, "")
	return fmt.Sprintf("-- config.json --\n"+`{"mcp": {"servers": [{"name": "tasky", "type": "remote", "url": %q, "transport": "http"}]}}`+"\n", h.URL), h
}

// releaseFile is a path for the hold tool, and what releases it.
func releaseFile(t *testing.T) (string, func()) {
	path := filepath.Join(t.TempDir(), "release")
	return path, func() {
		if err := os.WriteFile(path, nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// A call its server runs as a task does not hold up its batch: the batch
// answers while the task works, the call's result says "running as task
// <id>" with the task, and the task's news and its result come as
// freecode/tasks/changed; freecode/tasks lists it.
func TestTaskRunsApartFromItsBatch(t *testing.T) {
	files, _ := tasksFiles(t)
	servertest.Run(t, files, func(t *testing.T, env *servertest.Env) {
		ed := env.Editor
		ed.SetAnswer(servertest.Reply(protocol.AllowOnce))
		awaitTasky(t, ed)
		path, release := releaseFile(t)
		rs, err := ed.Execute(t.Context(),
			call("h1", "mcp__tasky__hold", fmt.Sprintf(`{"release":%q}`, path)),
			call("g1", "mcp__tasky__greet", `{"name":"ada"}`))
		if err != nil {
			t.Fatal(err)
		}
		task := rs[0].Task
		if task == nil || rs[0].IsError || rs[0].Text() != "running as task "+task.TaskID || task.Server != "tasky" || task.Tool != "hold" || task.CallID != "h1" {
			t.Fatalf("the task's call: %+v (task %+v)", rs[0], task)
		}
		if rs[1].Text() != "Hello, ada!" || rs[1].Task != nil {
			t.Errorf("the call after it: %+v", rs[1])
		}
		ed.Await("task "+task.TaskID, "its status message", func(n frontend.Notification) bool {
			var ti protocol.TaskInfo
			return n.Method == protocol.NotifyTasksChanged && n.Decode(&ti) == nil && ti.TaskID == task.TaskID && strings.HasPrefix(ti.StatusMessage, "holding until ")
		})
		list, err := ed.Tasks(t.Context())
		if err != nil || len(list) != 1 || list[0].Status != protocol.TaskWorking {
			t.Fatalf("freecode/tasks while it works: %+v, %v", list, err)
		}
		release()
		done := ed.AwaitTask(task.TaskID, protocol.TaskCompleted)
		if done.Result == nil || done.Result.IsError || !strings.HasPrefix(textOf(done.Result.Content), "released "+path) {
			t.Errorf("the task's end: %+v", done)
		}
		list, _ = ed.Tasks(t.Context())
		if len(list) != 1 || list[0].Status != protocol.TaskCompleted || list[0].Result == nil {
			t.Errorf("freecode/tasks after its end: %+v", list)
		}
	})
}

// freecode/tasks/cancel cancels the task on its server (tasks/cancel), and
// its end comes as cancelled; a failing task ends failed with the server's
// error; a task FreeCode does not know is -32602.
func TestTaskCancelAndFailure(t *testing.T) {
	files, h := tasksFiles(t)
	servertest.Run(t, files, func(t *testing.T, env *servertest.Env) {
		ed := env.Editor
		ed.SetAnswer(servertest.Reply(protocol.AllowOnce))
		awaitTasky(t, ed)
		path, _ := releaseFile(t) // never released
		r := execute(t, ed, call("h1", "mcp__tasky__hold", fmt.Sprintf(`{"release":%q}`, path)))
		if r.Task == nil {
			t.Fatalf("hold: %+v", r)
		}
		if _, err := ed.CancelTask(t.Context(), "tasky", r.Task.TaskID); err != nil {
			t.Fatalf("freecode/tasks/cancel: %v", err)
		}
		ed.AwaitTask(r.Task.TaskID, protocol.TaskCancelled)
		if dt, ok := h.Engine().Get(r.Task.TaskID); !ok || dt.Status != "cancelled" {
			t.Errorf("on the server the task is %+v", dt)
		}

		r = execute(t, ed, call("p1", "mcp__tasky__protocol_error_job", `{}`))
		failed := ed.AwaitTask(r.Task.TaskID, protocol.TaskFailed)
		if !strings.Contains(failed.Error, "-32603") {
			t.Errorf("a failed task's error: %q", failed.Error)
		}

		_, err := ed.CancelTask(t.Context(), "tasky", "no-such-task")
		if err == nil || !strings.Contains(err.Error(), "no such task") {
			t.Errorf("cancelling an unknown task: %v", err)
		}
	})
}

// An input_required task's question goes to the frontend whose call
// started it, like an elicitation during a call, and its answer moves the
// task on.
func TestTaskInputRequiredReachesItsFrontend(t *testing.T) {
	files, _ := tasksFiles(t)
	servertest.Run(t, files, func(t *testing.T, env *servertest.Env) {
		var a1, a2 asked
		one := env.Connect("one", &servertest.EditorOptions{Elicit: a1.elicit(protocol.ElicitDecline, nil)})
		two := env.Connect("two", &servertest.EditorOptions{Elicit: a2.elicit(protocol.ElicitAccept, map[string]any{"confirm": true})})
		two.SetAnswer(servertest.Reply(protocol.AllowOnce))
		awaitTasky(t, env.Editor)
		r := execute(t, two, call("d1", "mcp__tasky__confirm_delete", `{"filename":"notes.txt"}`))
		if r.Task == nil {
			t.Fatalf("confirm_delete: %+v", r)
		}
		two.AwaitTask(r.Task.TaskID, protocol.TaskInputRequired)
		done := two.AwaitTask(r.Task.TaskID, protocol.TaskCompleted)
		if got := textOf(done.Result.Content); got != "deleted notes.txt" {
			t.Errorf("the task's result: %q", got)
		}
		got, _ := a2.got()
		if len(got) != 1 || got[0].CallID != "d1" || got[0].Server != "tasky" || got[0].Message != "Delete notes.txt?" {
			t.Errorf("two was asked %+v", got)
		}
		if got, _ := a1.got(); len(got) != 0 {
			t.Errorf("one was asked about two's task: %+v", got)
		}
		// Every frontend hears of the task.
		one.AwaitTask(r.Task.TaskID, protocol.TaskCompleted)
	}, servertest.Modes(servertest.MultiModes))
}

// The permission rules rule before a task starts: a denied call is never
// sent, and its server has no task.
func TestTaskDeniedBeforeItStarts(t *testing.T) {
	files, h := tasksFiles(t)
	servertest.Run(t, files, func(t *testing.T, env *servertest.Env) {
		ed := env.Editor // denies until told otherwise
		awaitTasky(t, ed)
		path, _ := releaseFile(t)
		r := execute(t, ed, call("h1", "mcp__tasky__hold", fmt.Sprintf(`{"release":%q}`, path)))
		if r.Decision != protocol.DecisionDenied || r.Task != nil || !r.IsError {
			t.Errorf("a denied call: %+v", r)
		}
		if len(ed.Prompts()) != 1 {
			t.Errorf("prompts: %+v", ed.Prompts())
		}
		if ids := h.Engine().IDs(); len(ids) != 0 {
			t.Errorf("the server has tasks %v after a denied call", ids)
		}
		if list, _ := ed.Tasks(context.Background()); len(list) != 0 {
			t.Errorf("freecode/tasks: %+v", list)
		}
	})
}

// textOf is the text of MCP content blocks, one per line.
func textOf(content []json.RawMessage) string {
	r := protocol.ToolResult{Content: content}
	return r.Text()
}

// awaitTasky waits until the tasks server's tools are registered.
func awaitTasky(t *testing.T, ed *servertest.Editor) {
	t.Helper()
	for {
		tools, err := ed.Tools(t.Context(), "tasky")
		if err == nil && len(tools) > 0 {
			return
		}
		ed.AwaitToolsChanged(func(tc protocol.ToolsChanged) bool { return tc.Server == "tasky" })
	}
}
