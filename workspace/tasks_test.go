package workspace

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/freecode/freecode/internal/mcptest"
	"github.com/freecode/freecode/mcp/tasks"
	"github.com/freecode/freecode/orchestrator"
)

// tasksEnv is a workspace whose one server, tasky, is the real tasks
// server of internal/mcptest over HTTP on loopback, keeping its tasks in
// dir ("" for memory).
func tasksEnv(t *testing.T, dir string) (*env, *mcptest.TasksHTTP) {
	h := mcptest.StartTasksHTTP(t, dir)
	e := newEnv(t)
	writeJSON(t, e.cfgPath, mcpSection([]map[string]any{{"name": "tasky", "type": "remote", "url": h.URL, "transport": "http"}}, nil))
	return e, h
}

// startHold opens e's workspace keeping its tasks, and calls hold as a
// tracked task; it returns the task's id and what releases it.
func startHold(t *testing.T, e *env) (string, func()) {
	w := e.openWith(t, &Options{KeepTasks: true})
	settle(t, w)
	path := filepath.Join(t.TempDir(), "release")
	rs := w.Execute(t.Context(), []orchestrator.ToolCall{{CallID: "c1", Tool: "mcp__tasky__hold", Arguments: json.RawMessage(fmt.Sprintf(`{"release":%q}`, path))}},
		&orchestrator.ExecOptions{Approver: allowOnce, Tasks: orchestrator.TasksTracked})
	if rs[0].Task == nil || rs[0].IsError {
		t.Fatalf("hold: %+v", rs[0])
	}
	return rs[0].Task.ID, func() {
		if err := os.WriteFile(path, nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// awaitTask waits until the workspace's task id is in a state for which ok
// is true, and returns it.
func awaitTask(t *testing.T, w *Workspace, id string, what string, ok func(TaskInfo) bool) TaskInfo {
	t.Helper()
	sub := w.Subscribe(&SubscribeOptions{Tasks: true})
	defer sub.Close()
	for _, ti := range w.Tasks() {
		if ti.TaskID == id && ok(ti) {
			return ti
		}
	}
	return await(t, sub, what, func(ev *TaskEvent) bool { return ev.Task.TaskID == id && ok(ev.Task) }).Task
}

func isStatus(s tasks.Status) func(TaskInfo) bool { return func(ti TaskInfo) bool { return ti.Status == s } }

// A task a workspace followed when it closed is followed again by the
// next one of the same project: kept 0600, polled anew, its end seen.
func TestTasksResumeAfterRestart(t *testing.T) {
	e, _ := tasksEnv(t, t.TempDir())
	id, release := startHold(t, e)
	files, _ := filepath.Glob(filepath.Join(e.dir, TasksDir, "*.json"))
	if len(files) != 1 {
		t.Fatalf("tasks files: %v", files)
	}
	if fi, err := os.Stat(files[0]); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the tasks file: %v, %v; want mode 0600", fi.Mode(), err)
	}
	if b, _ := os.ReadFile(files[0]); !strings.Contains(string(b), id) {
		t.Fatalf("the tasks file does not name the task: %s", b)
	}
	e.w.Close()

	w := e.openWith(t, &Options{KeepTasks: true})
	list := w.Tasks()
	if len(list) != 1 || list[0].TaskID != id || list[0].Server != "tasky" || list[0].Tool != "hold" || list[0].CallID != "c1" || list[0].Status.Terminal() {
		t.Fatalf("after the restart: %+v", list)
	}
	release()
	done := awaitTask(t, w, id, "the resumed task's end", isStatus(tasks.Completed))
	if done.Result == nil || !strings.HasPrefix(done.Result.Text(), "released ") {
		t.Errorf("the resumed task's result: %+v", done.Result)
	}
	w.Close()
	if files, _ := filepath.Glob(filepath.Join(e.dir, TasksDir, "*.json")); len(files) != 0 {
		t.Errorf("a file of live tasks is left with none live: %v", files)
	}
}

// A task whose server is no longer configured when FreeCode starts again
// ends failed, saying why.
func TestTaskOfAGoneServerFails(t *testing.T) {
	e, _ := tasksEnv(t, "")
	id, _ := startHold(t, e)
	e.w.Close()
	writeJSON(t, e.cfgPath, mcpSection([]map[string]any{}, nil))
	w := e.openWith(t, &Options{KeepTasks: true})
	failed := awaitTask(t, w, id, "the task's failure", isStatus(tasks.Failed))
	if !strings.Contains(failed.Error, "gone") || !strings.Contains(failed.Error, "tasky") {
		t.Errorf("the failure says %q; want why", failed.Error)
	}
}

// A server that restarts mid-task: one that kept its tasks finishes the
// task; one that forgot them has the task end failed, saying so.
func TestTaskServerRestartsMidTask(t *testing.T) {
	t.Run("kept", func(t *testing.T) {
		e, h := tasksEnv(t, t.TempDir())
		id, release := startHold(t, e)
		if err := h.Restart(); err != nil {
			t.Fatal(err)
		}
		release()
		done := awaitTask(t, e.w, id, "the task's end", isStatus(tasks.Completed))
		if got := done.Result.Text(); !strings.Contains(got, "(run 2)") {
			t.Errorf("result %q; want the restarted server's run", got)
		}
	})
	t.Run("forgotten", func(t *testing.T) {
		e, h := tasksEnv(t, "")
		id, _ := startHold(t, e)
		if err := h.Restart(); err != nil {
			t.Fatal(err)
		}
		failed := awaitTask(t, e.w, id, "the task's failure", isStatus(tasks.Failed))
		if !strings.Contains(failed.Error, tasks.ErrExpired.Error()) {
			t.Errorf("the failure says %q", failed.Error)
		}
	})
}
