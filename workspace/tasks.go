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
// change (TaskEvent), sends the task's questions to the Answerer of the
// frontend that made the call, and keeps what it follows on disk so that
// a FreeCode started anew picks the polling up (taskstore.go).

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

type taskKey struct{ server, id string }

// tracked is one task being followed, or ended.
type tracked struct {
	info      TaskInfo
	answerer  *mcp.Answerer // the frontend that made the call; nil after a restart
	poll, ttl *int64        // the server's pollIntervalMs and ttlMs, kept for a restart
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

	mu    sync.Mutex
	tasks map[taskKey]*tracked
}

func newTaskTracker(publish func(...Event), store *taskStore, root string, logger *slog.Logger) *taskTracker {
	ctx, cancel := context.WithCancel(context.Background())
	return &taskTracker{logger: logger, publish: publish, store: store, root: root, ctx: ctx, cancel: cancel, tasks: make(map[taskKey]*tracked)}
}

// start follows a task a call of tool on server started, its questions
// going to answerer with the call's id.
func (tr *taskTracker) start(server, tool, callID string, answerer *mcp.Answerer, t *tasks.Task, created time.Time) {
	info := TaskInfo{Server: server, TaskID: t.TaskID, Tool: tool, CallID: callID, Status: t.Status, StatusMessage: t.StatusMessage, CreatedAt: created, UpdatedAt: created}
	tr.follow(&tracked{info: info, answerer: answerer, poll: t.PollIntervalMs, ttl: t.TTLMs}, t)
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
		ctx := mcp.WithAnswerer(tr.ctx, tk.answerer, info.CallID)
		final, err := tr.mgr.FollowTask(ctx, info.Server, t, func(t *tasks.Task) { tr.changed(key, t) })
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
	tk.answerer = nil
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

func (tr *taskTracker) get(server, id string) (TaskInfo, bool) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	tk, ok := tr.tasks[taskKey{server, id}]
	if !ok {
		return TaskInfo{}, false
	}
	return tk.info, true
}

// close stops the polling and waits for it; what is live stays on disk.
func (tr *taskTracker) close() {
	tr.mu.Lock()
	tr.cancel()
	tr.mu.Unlock()
	tr.wg.Wait()
}

// Tasks returns the tasks calls started that FreeCode follows, and the
// latest that ended, the oldest first.
func (w *Workspace) Tasks() []TaskInfo { return w.tasks.list() }

// CancelTask asks the server to cancel one of those tasks (tasks/cancel),
// and returns it as it is now: its end, cancelled or otherwise, comes as
// a TaskEvent.
func (w *Workspace) CancelTask(ctx context.Context, server, id string) (TaskInfo, error) {
	info, ok := w.tasks.get(server, id)
	if !ok {
		return TaskInfo{}, fmt.Errorf("%w: %s on %q", ErrNoTask, id, server)
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
