package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.lsp.dev/jsonrpc2"

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

// A task is the frontend's whose call started it, through two real
// frontends: the CLI, connected as freecode's live commands connect,
// starts tasks, and a browser tab, which hears of them, sees that they run
// but not their status message or result, and cannot cancel them; the
// error says whose they are and that freecode/tasks/adopt takes them. Once
// the tab adopts one, the CLI is told it is no longer its own, the tab
// sees it whole and cancels it, and the question a task asks after its
// adoption is the tab's. Tasks of a frontend that left are nobody's until
// adopted. (Before, the tab read the CLI's results and cancelled its task.)
func TestTaskIsItsFrontends(t *testing.T) {
	files, h := tasksFiles(t)
	var tabAsked, cliAsked asked
	tab := servertest.EditorOptions{Elicit: tabAsked.elicit(protocol.ElicitAccept, map[string]any{"go": true})}
	servertest.Run(t, files, func(t *testing.T, env *servertest.Env) {
		tab := env.Editor // a browser tab
		cli := env.ConnectCLI("cli", &servertest.EditorOptions{Elicit: cliAsked.elicit(protocol.ElicitAccept, map[string]any{"go": true})})
		cli.SetAnswer(servertest.Reply(protocol.AllowOnce))
		awaitTasky(t, cli)
		donePath, release := releaseFile(t)
		keptPath, _ := releaseFile(t) // never released
		askPath, releaseAsk := releaseFile(t)
		rs, err := cli.Execute(t.Context(),
			call("h1", "mcp__tasky__hold", fmt.Sprintf(`{"release":%q}`, donePath)),
			call("h2", "mcp__tasky__hold", fmt.Sprintf(`{"release":%q}`, keptPath)),
			call("a1", "mcp__tasky__ask_after", fmt.Sprintf(`{"release":%q}`, askPath)))
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rs {
			if r.Task == nil || !r.Task.Mine {
				t.Fatalf("the CLI's call %s: %+v (task %+v); want a task of its own", r.CallID, r, r.Task)
			}
		}
		done, kept, ask := rs[0].Task.TaskID, rs[1].Task.TaskID, rs[2].Task.TaskID

		// The CLI sees its tasks whole; the tab, that they run.
		cli.Await("task "+kept, "its status message", func(n frontend.Notification) bool {
			var ti protocol.TaskInfo
			return n.Method == protocol.NotifyTasksChanged && n.Decode(&ti) == nil && ti.TaskID == kept && ti.Mine && strings.HasPrefix(ti.StatusMessage, "holding until ")
		})
		release()
		if got := cli.AwaitTask(done, protocol.TaskCompleted); !got.Mine || got.Result == nil || !strings.HasPrefix(textOf(got.Result.Content), "released ") {
			t.Errorf("the CLI's task's end, to the CLI: %+v", got)
		}
		if seen := tab.AwaitTask(done, protocol.TaskCompleted); seen.Mine || seen.Result != nil || seen.StatusMessage != "" || seen.Tool != "hold" || seen.CallID != "h1" {
			t.Errorf("the CLI's task's end, to the tab: %+v; want that it completed, without its result", seen)
		}
		list, err := tab.Tasks(t.Context())
		if err != nil || len(list) != 3 {
			t.Fatalf("freecode/tasks to the tab: %+v, %v", list, err)
		}
		for _, ti := range list {
			if ti.Mine || ti.Result != nil || ti.StatusMessage != "" || ti.Error != "" || ti.CreatedAt.IsZero() {
				t.Errorf("the tab lists %+v; want that it runs or ended, no more", ti)
			}
		}
		list, _ = cli.Tasks(t.Context())
		for _, ti := range list {
			if !ti.Mine || (ti.TaskID == done) != (ti.Result != nil) {
				t.Errorf("the CLI lists %+v; want its own, whole", ti)
			}
		}

		// The tab cannot cancel the CLI's task.
		_, err = tab.CancelTask(t.Context(), "tasky", kept)
		wantNotYours(t, err, servertest.CLIName)
		if dt, _ := h.Engine().Get(kept); dt.Status != "working" {
			t.Errorf("on the server the CLI's task is %s after the tab's cancel", dt.Status)
		}

		// The tab adopts it: the CLI hears that it is no longer its own.
		adopted, err := tab.AdoptTask(t.Context(), "tasky", kept)
		if err != nil || !adopted.Mine || !strings.HasPrefix(adopted.StatusMessage, "holding until ") {
			t.Fatalf("the tab adopts the CLI's task: %+v, %v", adopted, err)
		}
		cli.Await("task "+kept, "that it is no longer its own", func(n frontend.Notification) bool {
			var ti protocol.TaskInfo
			return n.Method == protocol.NotifyTasksChanged && n.Decode(&ti) == nil && ti.TaskID == kept && !ti.Mine && ti.StatusMessage == ""
		})
		_, err = cli.CancelTask(t.Context(), "tasky", kept)
		wantNotYours(t, err, "editor")
		if _, err := tab.CancelTask(t.Context(), "tasky", kept); err != nil {
			t.Fatalf("the tab cancels the task it adopted: %v", err)
		}
		if got := tab.AwaitTask(kept, protocol.TaskCancelled); !got.Mine {
			t.Errorf("the adopted task's end, to the tab: %+v", got)
		}
		if dt, _ := h.Engine().Get(kept); dt.Status != "cancelled" {
			t.Errorf("on the server the adopted task is %s after the tab's cancel", dt.Status)
		}

		// The question of a task asked after its adoption is the tab's.
		if _, err := tab.AdoptTask(t.Context(), "tasky", ask); err != nil {
			t.Fatal(err)
		}
		releaseAsk()
		if got := tab.AwaitTask(ask, protocol.TaskCompleted); !got.Mine || got.Result == nil || textOf(got.Result.Content) != "went on" {
			t.Errorf("the adopted task that asked, to the tab: %+v", got)
		}
		if got := cli.AwaitTask(ask, protocol.TaskCompleted); got.Mine || got.Result != nil {
			t.Errorf("the adopted task that asked, to the CLI: %+v", got)
		}
		if got, _ := tabAsked.got(); len(got) != 1 || got[0].CallID != "a1" || got[0].Message != "Go on?" {
			t.Errorf("the tab was asked %+v", got)
		}
		if got, _ := cliAsked.got(); len(got) != 0 {
			t.Errorf("the CLI was asked %+v after the tab adopted the task", got)
		}

		// The CLI leaves: its task is nobody's, until the tab adopts it.
		cli.Close()
		env.AwaitSidecarLog(fmt.Sprintf(`msg="frontend gone" frontend=%d`, env.FrontendID(2)))
		_, err = tab.CancelTask(t.Context(), "tasky", done)
		wantNotYours(t, err, "no frontend's")
		if got, err := tab.AdoptTask(t.Context(), "tasky", done); err != nil || got.Result == nil || !strings.HasPrefix(textOf(got.Result.Content), "released ") {
			t.Errorf("the tab adopts the ended task of the CLI that left: %+v, %v; want its result", got, err)
		}
	}, servertest.WithEditor(tab), servertest.Modes(servertest.WebSocket))
}

// wantNotYours checks that err refuses to act on a task not the caller's,
// saying whose it is (whose) and how to take it.
func wantNotYours(t *testing.T, err error, whose string) {
	t.Helper()
	var je *jsonrpc2.Error
	if !errors.As(err, &je) || je.Code != protocol.CodeNotYourTask || !strings.Contains(je.Message, whose) || !strings.Contains(je.Message, protocol.MethodTasksAdopt) {
		t.Errorf("acting on a task not ours: %v; want %d naming %q and %s", err, protocol.CodeNotYourTask, whose, protocol.MethodTasksAdopt)
	}
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
