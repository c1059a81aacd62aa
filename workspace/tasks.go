package workspace

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/freecode/freecode/mcp"
	"github.com/freecode/freecode/mcp/tasks"
	"github.com/freecode/freecode/orchestrator"
)

// A call its server runs as a task (MCP's tasks extension) under
// orchestrator.TasksTracked is followed here, apart from its batch: the
// tracker polls the task through the Manager (whatever Conn the server
// has, a restarted one's too) until it ends, tells subscribers of each
// change (TaskEvent), sends the task's questions to the Asker of the
// frontend that owns it, and keeps what it follows on disk so that a
// FreeCode started anew picks the polling up (taskstore.go).
//
// A task is its owner's: the frontend whose call started it, told apart
// by the Asker its calls carry (==), as a server's questions are. Its
// result, error and status message, its questions and its cancel are
// that frontend's alone; any other sees that it runs (TaskInfo.SeenBy)
// and may take it over (AdoptTask), which is never done by accident: a
// task followed on after a restart, or whose frontend left, is nobody's
// until one adopts it.

// TaskInfo is a task a call started, as frontends see it.
type TaskInfo struct {
	Server string
	// TaskID is the server's id of the task.
	TaskID string
	// Tool is the server's name of the tool called; CallID the call's id.
	Tool   string
	CallID string
	Status tasks.Status
	// StatusMessage is the server's latest word on the task.
	StatusMessage string
	CreatedAt     time.Time
	UpdatedAt     time.Time
	// Result is a completed task's result.
	Result *orchestrator.ToolResult
	// Error says why a task failed: the server's error, or why FreeCode
	// could not follow it to its end (its server gone, its ttl over).
	Error string
	// Owner is the frontend the task is for, by the Asker its calls
	// carry: the one whose call started it, or that adopted it since.
	// Nil: nobody's, until a frontend adopts it.
	Owner orchestrator.Asker
}

// OwnedBy says whether the task is the frontend a's.
func (t TaskInfo) OwnedBy(a orchestrator.Asker) bool { return a != nil && t.Owner == a }

// SeenBy is the task as the frontend a may see it: whole when it is a's;
// else only that it runs (its server, tool, call, status and times),
// without its result, error or status message, which are its owner's.
func (t TaskInfo) SeenBy(a orchestrator.Asker) TaskInfo {
	if t.OwnedBy(a) {
		return t
	}
	t.Result, t.Error, t.StatusMessage = nil, "", ""
	return t
}

// TaskEvent is a task's new state: a status or status message changed, or
// it ended. Only subscribers that ask get it (SubscribeOptions.Tasks).
type TaskEvent struct {
	Task TaskInfo
}

func (*TaskEvent) event() {}

// maxEndedTasks is how many ended tasks the tracker lists, the latest.
const maxEndedTasks = 100

// ErrNoTask is the error for a task FreeCode does not know.
var ErrNoTask = errors.New("no such task")

// ErrNotYourTask is the error for cancelling a task of another frontend,
// or of none: AdoptTask takes it first.
var ErrNotYourTask = errors.New("the task is not yours")

// NotYourTaskError is ErrNotYourTask for one task, saying whose it is.
type NotYourTaskError struct {
	Server, TaskID string
	Owner          orchestrator.Asker // nil: nobody's
}

func (e *NotYourTaskError) Error() string {
	whose := "another frontend's"
	if e.Owner == nil {
		whose = "no frontend's (followed on after a restart, or its frontend left)"
	}
	return fmt.Sprintf("task %s on %q is %s: adopt it to act on it", e.TaskID, e.Server, whose)
}

func (e *NotYourTaskError) Unwrap() error { return ErrNotYourTask }

type taskKey struct{ server, id string }

// tracked is one task being followed, or ended. Its owner is
// info.Owner.
type tracked struct {
	info      TaskInfo
	poll, ttl *int64 // the server's pollIntervalMs and ttlMs, kept for a restart
}

// taskTracker follows the tasks of tracked calls. Its mu is a leaf.
type taskTracker struct {
	logger  *slog.Logger
	publish func(...Event)
	store   *taskStore // nil: tasks are not kept
	root    string     // the project's, written in the store
	// mgr and orch are set once New made them, before any call.
	mgr  *mcp.Manager
	orch *orchestrator.Orchestrator

	ctx    context.Context // ends at Close: the polling stops, the tasks stay on disk
	cancel context.CancelFunc
	wg     sync.WaitGroup

	// dirty asks the saver (taskstore.go) for a write; saved is closed
	// once it wrote for the last time. Both nil without a store.
	dirty chan struct{}
	saved chan struct{}

	mu    sync.Mutex
	tasks map[taskKey]*tracked
}

func newTaskTracker(publish func(...Event), store *taskStore, root string, logger *slog.Logger) *taskTracker {
	ctx, cancel := context.WithCancel(context.Background())
	tr := &taskTracker{logger: logger, publish: publish, store: store, root: root, ctx: ctx, cancel: cancel, tasks: make(map[taskKey]*tracked)}
	if store != nil {
		tr.dirty, tr.saved = make(chan struct{}, 1), make(chan struct{})
		go tr.saver()
	}
	return tr
}

// start follows a task a call of tool on server started, the task of
// asker's frontend (its owner; nil for none).
func (tr *taskTracker) start(server, tool, callID string, asker orchestrator.Asker, t *tasks.Task, created time.Time) {
	info := TaskInfo{Server: server, TaskID: t.TaskID, Tool: tool, CallID: callID, Status: t.Status, StatusMessage: t.StatusMessage, CreatedAt: created, UpdatedAt: created, Owner: asker}
	tr.follow(&tracked{info: info, poll: t.PollIntervalMs, ttl: t.TTLMs}, t)
}

// follow registers tk and polls its task t in the background.
func (tr *taskTracker) follow(tk *tracked, t *tasks.Task) {
	key := taskKey{tk.info.Server, tk.info.TaskID}
	tr.mu.Lock()
	if tr.ctx.Err() != nil {
		tr.mu.Unlock()
		return
	}
	tr.tasks[key] = tk
	info := tk.info
	tr.wg.Add(1)
	tr.mu.Unlock()
	tr.save()
	tr.publish(&TaskEvent{Task: info})
	go func() {
		defer tr.wg.Done()
		// Its questions go to its owner when they come: one that adopted
		// it meanwhile is asked, not the frontend of the call.
		final, err := tr.mgr.FollowTask(tr.ctx, info.Server, t, &mcp.FollowOptions{
			OnChange: func(t *tasks.Task) { tr.changed(key, t) },
			CallID:   info.CallID,
			AskerOf:  func() mcp.Asker { return tr.owner(key) },
		})
		if err != nil && tr.ctx.Err() != nil {
			return // FreeCode stops: the task stays on disk, to be followed anew
		}
		tr.end(key, final, err)
	}()
}

// changed records a live task's new state.
func (tr *taskTracker) changed(key taskKey, t *tasks.Task) {
	if t.Status.Terminal() {
		return // end says it, with the result
	}
	tr.mu.Lock()
	tk, ok := tr.tasks[key]
	if !ok || (tk.info.Status == t.Status && tk.info.StatusMessage == t.StatusMessage) {
		tr.mu.Unlock()
		return
	}
	tk.info.Status, tk.info.StatusMessage, tk.info.UpdatedAt = t.Status, t.StatusMessage, time.Now()
	info := tk.info
	tr.mu.Unlock()
	tr.publish(&TaskEvent{Task: info})
}

// end records a task's end: its final state, or why it could not be
// followed to it (then it ends as failed).
func (tr *taskTracker) end(key taskKey, final *tasks.Task, err error) {
	tr.mu.Lock()
	tk, ok := tr.tasks[key]
	if !ok {
		tr.mu.Unlock()
		return
	}
	tk.info.UpdatedAt = time.Now()
	switch {
	case err != nil:
		tk.info.Status, tk.info.Error = tasks.Failed, err.Error()
	default:
		tk.info.Status, tk.info.StatusMessage = final.Status, final.StatusMessage
		switch final.Status {
		case tasks.Completed:
			res := final.Result
			if res == nil {
				res = &mcpsdk.CallToolResult{IsError: true, Content: []mcpsdk.Content{&mcpsdk.TextContent{Text: "the task completed without a result"}}}
			}
			r := tr.orch.TaskResult(tk.info.CallID, res)
			tk.info.Result = &r
		case tasks.Failed:
			tk.info.Error = final.Failure()
		}
	}
	info := tk.info
	tr.trimLocked()
	tr.mu.Unlock()
	tr.save()
	tr.publish(&TaskEvent{Task: info})
}

// trimLocked forgets the oldest ended tasks beyond maxEndedTasks.
func (tr *taskTracker) trimLocked() {
	var ended []*tracked
	for _, tk := range tr.tasks {
		if tk.info.Status.Terminal() {
			ended = append(ended, tk)
		}
	}
	if len(ended) <= maxEndedTasks {
		return
	}
	slices.SortFunc(ended, func(a, b *tracked) int { return a.info.UpdatedAt.Compare(b.info.UpdatedAt) })
	for _, tk := range ended[:len(ended)-maxEndedTasks] {
		delete(tr.tasks, taskKey{tk.info.Server, tk.info.TaskID})
	}
}

// list returns the tasks, the oldest first.
func (tr *taskTracker) list() []TaskInfo {
	tr.mu.Lock()
	out := make([]TaskInfo, 0, len(tr.tasks))
	for _, tk := range tr.tasks {
		out = append(out, tk.info)
	}
	tr.mu.Unlock()
	slices.SortFunc(out, func(a, b TaskInfo) int {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), cmp.Compare(a.Server, b.Server), cmp.Compare(a.TaskID, b.TaskID))
	})
	return out
}

// owner is the frontend of the task of key now, nil for none.
func (tr *taskTracker) owner(key taskKey) orchestrator.Asker {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if tk, ok := tr.tasks[key]; ok {
		return tk.info.Owner
	}
	return nil
}

// adopt makes the task a's, and tells every subscriber: its former owner
// learns that it is no longer its own.
func (tr *taskTracker) adopt(server, id string, a orchestrator.Asker) (TaskInfo, bool) {
	tr.mu.Lock()
	tk, ok := tr.tasks[taskKey{server, id}]
	if !ok {
		tr.mu.Unlock()
		return TaskInfo{}, false
	}
	changed := tk.info.Owner != a
	tk.info.Owner = a
	info := tk.info
	tr.mu.Unlock()
	if changed {
		tr.publish(&TaskEvent{Task: info})
	}
	return info, true
}

// disown makes the tasks of a nobody's: its frontend left. Nobody is
// told: no other frontend saw them as its own.
func (tr *taskTracker) disown(a orchestrator.Asker) {
	if a == nil {
		return
	}
	tr.mu.Lock()
	defer tr.mu.Unlock()
	for _, tk := range tr.tasks {
		if tk.info.Owner == a {
			tk.info.Owner = nil
		}
	}
}

func (tr *taskTracker) get(server, id string) (TaskInfo, bool) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	tk, ok := tr.tasks[taskKey{server, id}]
	if !ok {
		return TaskInfo{}, false
	}
	return tk.info, true
}

// close stops the polling and waits for it, and for the last write: what
// is live stays on disk.
func (tr *taskTracker) close() {
	tr.mu.Lock()
	tr.cancel()
	tr.mu.Unlock()
	tr.wg.Wait()
	if tr.dirty != nil {
		close(tr.dirty)
		<-tr.saved
	}
}

// Tasks returns the tasks calls started that FreeCode follows, and the
// latest that ended, the oldest first.
func (w *Workspace) Tasks() []TaskInfo { return w.tasks.list() }

// CancelTask asks the server to cancel one of those tasks (tasks/cancel)
// for the frontend of by, whose task it must be (a *NotYourTaskError
// otherwise), and returns it as it is now: its end, cancelled or
// otherwise, comes as a TaskEvent.
func (w *Workspace) CancelTask(ctx context.Context, server, id string, by orchestrator.Asker) (TaskInfo, error) {
	info, ok := w.tasks.get(server, id)
	if !ok {
		return TaskInfo{}, fmt.Errorf("%w: %s on %q", ErrNoTask, id, server)
	}
	if !info.OwnedBy(by) {
		return TaskInfo{}, &NotYourTaskError{Server: server, TaskID: id, Owner: info.Owner}
	}
	if info.Status.Terminal() {
		return info, nil
	}
	if err := w.mgr.CancelTask(ctx, server, id); err != nil {
		return info, err
	}
	info, _ = w.tasks.get(server, id)
	return info, nil
}

// AdoptTask makes one of those tasks the frontend of by's, live or
// ended: its result, its questions from now on and its cancel are that
// frontend's, and its former owner is told, by a TaskEvent, that it is no
// longer its own. Any frontend may adopt any task (they are the same
// user's); it is never done without asking.
func (w *Workspace) AdoptTask(server, id string, by orchestrator.Asker) (TaskInfo, error) {
	if by == nil {
		return TaskInfo{}, errors.New("adopting a task: no frontend to adopt it")
	}
	info, ok := w.tasks.adopt(server, id, by)
	if !ok {
		return TaskInfo{}, fmt.Errorf("%w: %s on %q", ErrNoTask, id, server)
	}
	return info, nil
}

// DisownTasks makes the tasks of the frontend of a nobody's, until one
// adopts them: that frontend left.
func (w *Workspace) DisownTasks(a orchestrator.Asker) { w.tasks.disown(a) }

// GetTask, UpdateTask and CancelServerTask reach a task of a server
// directly, whether or not FreeCode follows it: for FreeCode's MCP server,
// which hands the tasks of the calls it makes (orchestrator.TasksReturned)
// to its own client.
func (w *Workspace) GetTask(ctx context.Context, server, id string) (*tasks.Task, error) {
	c, release, err := w.mgr.Acquire(ctx, server)
	if err != nil {
		return nil, err
	}
	defer release()
	return c.GetTask(ctx, id)
}

// UpdateTask: see GetTask.
func (w *Workspace) UpdateTask(ctx context.Context, server, id string, responses mcpsdk.InputResponseMap) error {
	c, release, err := w.mgr.Acquire(ctx, server)
	if err != nil {
		return err
	}
	defer release()
	return c.UpdateTask(ctx, id, responses)
}

// CancelServerTask: see GetTask.
func (w *Workspace) CancelServerTask(ctx context.Context, server, id string) error {
	return w.mgr.CancelTask(ctx, server, id)
}

// AwaitTask follows the task a call started under TasksReturned to its
// end, as the call's caller (the CLI) waits for it: its questions go to
// asker (as ExecOptions.Asker) with the call's id, each change of it to
// onChange, and its end is the call's result, capped as any. It waits as
// long as the task lives (its ttlMs); when ctx ends first the task is
// cancelled on its server (tasks/cancel) and the result says so.
func (w *Workspace) AwaitTask(ctx context.Context, task orchestrator.Task, callID string, asker orchestrator.Asker, onChange func(TaskInfo)) orchestrator.ToolResult {
	info := TaskInfo{Server: task.Server, TaskID: task.ID, Tool: task.Tool, CallID: callID, Status: tasks.Status(task.Status), StatusMessage: task.StatusMessage, CreatedAt: task.CreatedAt}
	t := &tasks.Task{TaskID: task.ID, Status: tasks.Status(task.Status), StatusMessage: task.StatusMessage}
	if !t.Status.Valid() {
		t.Status = tasks.Working
	}
	var last *tasks.Task
	final, err := w.mgr.FollowTask(ctx, task.Server, t, &mcp.FollowOptions{
		OnChange: func(t *tasks.Task) {
			last = t
			if onChange != nil {
				info.Status, info.StatusMessage, info.UpdatedAt = t.Status, t.StatusMessage, time.Now()
				onChange(info)
			}
		},
		CallID:  callID,
		AskerOf: func() mcp.Asker { return asker },
	})
	fail := func(text string) orchestrator.ToolResult {
		return orchestrator.ToolResult{CallID: callID, IsError: true, Decision: orchestrator.DecisionAllowed,
			Content: []mcpsdk.Content{&mcpsdk.TextContent{Text: text}}}
	}
	if err != nil {
		if ctx.Err() == nil {
			return fail(fmt.Sprintf("task %s on %s failed: %v", task.ID, task.Server, err))
		}
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		if cerr := w.mgr.CancelTask(cctx, task.Server, task.ID); cerr != nil {
			return fail(fmt.Sprintf("task %s on %s was given up, and cancelling it failed: %v", task.ID, task.Server, cerr))
		}
		state := "working"
		if last != nil {
			state = string(last.Status)
		}
		return fail(fmt.Sprintf("task %s on %s was cancelled (tasks/cancel sent; it was %s)", task.ID, task.Server, state))
	}
	switch final.Status {
	case tasks.Completed:
		if final.Result == nil {
			return fail(fmt.Sprintf("task %s on %s completed without a result", task.ID, task.Server))
		}
		return w.orch.TaskResult(callID, final.Result)
	case tasks.Failed:
		return fail(fmt.Sprintf("task %s on %s failed: %s", task.ID, task.Server, final.Failure()))
	}
	return fail(fmt.Sprintf("task %s on %s was %s on the server", task.ID, task.Server, final.Status))
}
