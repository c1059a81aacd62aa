package workspace

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

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
// tracked task of the frontend of caller; it returns the task's id and
// what releases it.
func startHold(t *testing.T, e *env, caller orchestrator.Asker) (string, func()) {
	w := e.openWith(t, &Options{KeepTasks: true})
	settle(t, w)
	return startTask(t, w, "c1", "hold", caller)
}

// startTask calls tool (hold or ask_after) as a tracked task of the
// frontend of caller; it returns the task's id and what releases it.
func startTask(t *testing.T, w *Workspace, callID, tool string, caller orchestrator.Asker) (string, func()) {
	path := filepath.Join(t.TempDir(), "release")
	rs := w.Execute(t.Context(), []orchestrator.ToolCall{{CallID: callID, Tool: "mcp__tasky__" + tool, Arguments: json.RawMessage(fmt.Sprintf(`{"release":%q}`, path))}},
		&orchestrator.ExecOptions{Approver: allowOnce, Tasks: orchestrator.TasksTracked, Asker: caller})
	if rs[0].Task == nil || rs[0].IsError {
		t.Fatalf("%s: %+v", tool, rs[0])
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

func isStatus(s tasks.Status) func(TaskInfo) bool {
	return func(ti TaskInfo) bool { return ti.Status == s }
}

// A task a workspace followed when it closed is followed again by the
// next one of the same project: kept 0600, polled anew, its end seen.
func TestTasksResumeAfterRestart(t *testing.T) {
	e, _ := tasksEnv(t, t.TempDir())
	id, release := startHold(t, e, &elicitLog{})
	e.w.Close() // the task left live, on disk
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

	w := e.openWith(t, &Options{KeepTasks: true})
	list := w.Tasks()
	if len(list) != 1 || list[0].TaskID != id || list[0].Server != "tasky" || list[0].Tool != "hold" || list[0].CallID != "c1" || list[0].Status.Terminal() {
		t.Fatalf("after the restart: %+v", list)
	}
	// The frontend of the call is not known any more: the task is
	// nobody's until one adopts it.
	if list[0].Owner != nil {
		t.Errorf("after the restart the task is %p's; want nobody's", list[0].Owner)
	}
	release()
	done := awaitTask(t, w, id, "the resumed task's end", isStatus(tasks.Completed))
	if done.Result == nil || !strings.HasPrefix(done.Result.Text(), "released ") {
		t.Errorf("the resumed task's result: %+v", done.Result)
	}
	if seen := done.SeenBy(&elicitLog{}); seen.Result != nil {
		t.Errorf("a frontend sees the result of nobody's task: %+v", seen)
	}
	a := &elicitLog{}
	if got, err := w.AdoptTask("tasky", id, a); err != nil || !got.OwnedBy(a) || got.SeenBy(a).Result == nil {
		t.Errorf("adopting the ended task: %+v, %v; want it a's, with its result", got, err)
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
	id, _ := startHold(t, e, nil)
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
		id, release := startHold(t, e, nil)
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
		id, _ := startHold(t, e, nil)
		if err := h.Restart(); err != nil {
			t.Fatal(err)
		}
		failed := awaitTask(t, e.w, id, "the task's failure", isStatus(tasks.Failed))
		if !strings.Contains(failed.Error, tasks.ErrExpired.Error()) {
			t.Errorf("the failure says %q", failed.Error)
		}
	})
}

// A task is the frontend's whose call started it: another sees that it
// runs but not its status message, error or result, and cannot cancel
// it; once it adopts it, the task is its own (its former owner is told),
// and so are the questions it asks from then on. A frontend that leaves
// leaves its tasks to nobody.
func TestTaskIsItsOwners(t *testing.T) {
	e, h := tasksEnv(t, "")
	w := e.openWith(t, &Options{KeepTasks: true, Elicitation: true})
	settle(t, w)
	var asked [2]elicitLog
	one, two := asked[0].answering("go", true), asked[1].answering("go", true)
	held, _ := startTask(t, w, "h1", "hold", one)
	asking, release := startTask(t, w, "a1", "ask_after", one)

	working := awaitTask(t, w, held, "hold's status message", func(ti TaskInfo) bool { return strings.HasPrefix(ti.StatusMessage, "holding until ") })
	if !working.OwnedBy(one) || working.OwnedBy(two) || working.OwnedBy(nil) {
		t.Errorf("the task's owner: %p; want one's, %p", working.Owner, one)
	}
	if got := working.SeenBy(one); got.StatusMessage == "" {
		t.Errorf("its owner does not see its status message: %+v", got)
	}
	if got := working.SeenBy(two); got.StatusMessage != "" || got.Status != tasks.Working || got.Tool != "hold" || got.CreatedAt.IsZero() {
		t.Errorf("another frontend sees %+v; want that it works, without its status message", got)
	}

	_, err := w.CancelTask(t.Context(), "tasky", held, two)
	var nyt *NotYourTaskError
	if !errors.Is(err, ErrNotYourTask) || !errors.As(err, &nyt) || nyt.Owner != one || nyt.TaskID != held {
		t.Fatalf("two cancels one's task: %v; want ErrNotYourTask naming one", err)
	}
	if dt, _ := h.Engine().Get(held); dt.Status != "working" {
		t.Errorf("on the server the task is %s after a refused cancel", dt.Status)
	}

	sub := w.Subscribe(&SubscribeOptions{Tasks: true})
	defer sub.Close()
	adopted, err := w.AdoptTask("tasky", held, two)
	if err != nil || !adopted.OwnedBy(two) {
		t.Fatalf("two adopts it: %+v, %v", adopted, err)
	}
	if ev := await(t, sub, "the adoption", func(ev *TaskEvent) bool { return ev.Task.TaskID == held }); !ev.Task.OwnedBy(two) {
		t.Errorf("the event of the adoption: the task is %p's", ev.Task.Owner)
	}
	if _, err := w.CancelTask(t.Context(), "tasky", held, one); !errors.Is(err, ErrNotYourTask) {
		t.Errorf("one cancels the task two adopted: %v", err)
	}
	if _, err := w.CancelTask(t.Context(), "tasky", held, two); err != nil {
		t.Fatalf("two cancels its task: %v", err)
	}
	awaitTask(t, w, held, "the cancel", isStatus(tasks.Cancelled))
	if _, err := w.AdoptTask("tasky", "no-such-task", two); !errors.Is(err, ErrNoTask) {
		t.Errorf("adopting an unknown task: %v", err)
	}

	// The question ask_after asks once released goes to its owner then.
	if _, err := w.AdoptTask("tasky", asking, two); err != nil {
		t.Fatal(err)
	}
	release()
	done := awaitTask(t, w, asking, "ask_after's end", isStatus(tasks.Completed))
	if got := done.Result.Text(); got != "went on" {
		t.Errorf("ask_after's result: %q", got)
	}
	if len(asked[0].got()) != 0 || len(asked[1].got()) != 1 || asked[1].got()[0].Params.Message != "Go on?" {
		t.Errorf("one was asked %+v, two %+v; want two, once", asked[0].got(), asked[1].got())
	}

	w.DisownTasks(two)
	for _, ti := range w.Tasks() {
		if ti.Owner != nil {
			t.Errorf("task %s is %p's once its frontend left", ti.TaskID, ti.Owner)
		}
	}
	if _, err := w.CancelTask(t.Context(), "tasky", asking, two); !errors.As(err, &nyt) || nyt.Owner != nil {
		t.Errorf("cancelling a task nobody owns: %v", err)
	}
}

// elicitLog is a frontend (an orchestrator.Asker) that accepts every form
// with content, answers sampling with sample (nil: refuses it), and
// records the forms it was asked.
type elicitLog struct {
	content map[string]any
	sample  *mcpsdk.CreateMessageResult

	mu   sync.Mutex
	reqs []elicitQuestion
}

var _ orchestrator.Asker = (*elicitLog)(nil)

type elicitQuestion struct {
	Server, CallID string
	Params         *mcpsdk.ElicitParams
}

// answering returns l, accepting every form with field set to value.
func (l *elicitLog) answering(field string, value any) *elicitLog {
	l.content = map[string]any{field: value}
	return l
}

func (l *elicitLog) Elicit(_ context.Context, server, callID string, p *mcpsdk.ElicitParams) (*mcpsdk.ElicitResult, error) {
	l.mu.Lock()
	l.reqs = append(l.reqs, elicitQuestion{server, callID, p})
	l.mu.Unlock()
	return &mcpsdk.ElicitResult{Action: "accept", Content: l.content}, nil
}

func (l *elicitLog) Sample(context.Context, string, string, *mcpsdk.CreateMessageParams) (*mcpsdk.CreateMessageResult, error) {
	if l.sample == nil {
		return nil, errors.New("this frontend does no sampling")
	}
	return l.sample, nil
}

func (*elicitLog) SignInOpener(string) func(context.Context, string) error { return nil }

// got returns the forms asked so far.
func (l *elicitLog) got() []elicitQuestion {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]elicitQuestion(nil), l.reqs...)
}
