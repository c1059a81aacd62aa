// Package mcptasks is the server side of the MCP tasks extension
// (io.modelcontextprotocol/tasks, SEP-2663) on a go-sdk server, which has
// no tasks of its own: a tools/call of a task tool, from a client that
// declares the extension, is answered at once with a task (resultType
// "task") whose work goes on in the background, and the client follows it
// with tasks/get, answers its questions with tasks/update and stops it with
// tasks/cancel.
//
// An Engine installs itself on a server (Install) as a receiving middleware
// and three custom methods; AddTool adds a tool whose handler gets a *Task
// through which it reports status messages and asks for input. Tasks live
// in memory, or in a directory (Options.Dir) that a restarted server reads
// back: there a task the old process left unfinished is run again.
//
// The package imports the go-sdk, internal/atomicfile and internal/mcpwire
// (the extension's wire, which the client and the gateway speak too) only,
// so the test servers in internal/mcptest and examples/demo-server share it.
package mcptasks

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/freecode/freecode/internal/mcpwire"
)

// Options configure an Engine.
type Options struct {
	// Dir, if set, is where tasks are kept (a 0700 directory, one 0600
	// file a task), so that a server started again on it still answers
	// for them. Empty keeps them in memory: a restarted server has
	// forgotten them and answers tasks/get with -32602.
	Dir string
	// PollInterval is the pollIntervalMs the server suggests; 0 means
	// 200ms.
	PollInterval time.Duration
	// TTL is how long a task is kept after its creation (ttlMs); 0 means
	// an hour, a negative value for as long as the server runs (null).
	TTL time.Duration
	// Now, if set, is the clock (tests).
	Now func() time.Time
}

// Support says when a tool's call becomes a task.
type Support int

const (
	// Optional tools run as tasks for clients that declare the extension,
	// and in the call itself for the others.
	Optional Support = iota
	// Required tools run only as tasks: a client that does not declare
	// the extension is answered with -32021.
	Required
)

// A Handler does a task tool's work. It runs detached from the call that
// started it (the call has been answered), until it returns or ctx is
// done: the client cancelled the task, or the server is shutting down. A
// returned error makes the task failed with that JSON-RPC error (a
// *jsonrpc.Error keeps its code, any other is -32603); a panic too. A tool
// error is a result with IsError, and the task is completed.
type Handler func(ctx context.Context, t *Task, req *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error)

// A Gate runs in the call, before a task is made: a result with
// InputRequests answers the call as input_required (SEP-2322's multi
// round trip: the client calls again with InputResponses, which come
// through the gate again, and then reach the handler in
// req.Params.InputResponses); nil lets the call become a task. An error
// answers the call with it.
type Gate func(ctx context.Context, req *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error)

type tool struct {
	support Support
	gate    Gate
	h       Handler
}

// An Engine keeps the tasks of one server and answers the extension's
// methods for it. Its methods are safe for concurrent use.
type Engine struct {
	opts   Options
	server *mcpsdk.Server
	ctx    context.Context // the lifetime of handlers; done on Close
	stop   context.CancelFunc
	wg     sync.WaitGroup // running handlers

	mu      sync.Mutex
	tools   map[string]*tool
	tasks   map[string]*task
	changed chan struct{} // closed and replaced on every change of a task
	closed  bool
}

// task is one task's state: what is persisted, and what lives only in the
// process running it.
type task struct {
	rec    record
	cancel context.CancelFunc                   // of the running handler; nil when none runs
	asks   map[string]chan *mcpsdk.ElicitResult // questions waiting for tasks/update, by key
}

// New returns an engine serving tasks on server: it adds the receiving
// middleware that turns calls of its tools into tasks and advertises the
// extension in server/discover and initialize, and the methods tasks/get,
// tasks/update and tasks/cancel. With opts.Dir it reads the tasks kept
// there; call Resume once the tools are added to run the unfinished ones
// again.
func New(server *mcpsdk.Server, opts Options) (*Engine, error) {
	if opts.PollInterval <= 0 {
		opts.PollInterval = 200 * time.Millisecond
	}
	if opts.TTL == 0 {
		opts.TTL = time.Hour
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	ctx, stop := context.WithCancel(context.Background())
	e := &Engine{
		opts:    opts,
		server:  server,
		ctx:     ctx,
		stop:    stop,
		tools:   map[string]*tool{},
		tasks:   map[string]*task{},
		changed: make(chan struct{}),
	}
	if opts.Dir != "" {
		recs, err := loadRecords(opts.Dir)
		if err != nil {
			stop()
			return nil, err
		}
		for _, r := range recs {
			e.tasks[r.ID] = &task{rec: r}
		}
	}
	server.AddReceivingMiddleware(e.middleware)
	if err := mcpsdk.AddReceivingCustomMethod(server, mcpwire.MethodGetTask, e.getTask); err != nil {
		stop()
		return nil, err
	}
	if err := mcpsdk.AddReceivingCustomMethod(server, mcpwire.MethodUpdateTask, e.updateTask); err != nil {
		stop()
		return nil, err
	}
	if err := mcpsdk.AddReceivingCustomMethod(server, mcpwire.MethodCancelTask, e.cancelTask); err != nil {
		stop()
		return nil, err
	}
	return e, nil
}

// AddTool adds a tool to the server whose calls run h as a task (see
// Support). For a client that does not declare the extension an Optional
// tool runs h within the call; its Task then has no id, keeps no status
// message, and asks its questions as elicitation requests of the session.
func (e *Engine) AddTool(t *mcpsdk.Tool, support Support, h Handler) {
	e.AddGatedTool(t, support, nil, h)
}

// AddGatedTool is AddTool with a gate that runs in the call first, for a
// tool that gathers input before it goes to the background.
func (e *Engine) AddGatedTool(t *mcpsdk.Tool, support Support, gate Gate, h Handler) {
	e.mu.Lock()
	e.tools[t.Name] = &tool{support: support, gate: gate, h: h}
	e.mu.Unlock()
	e.server.AddTool(t, func(ctx context.Context, req *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
		// Reached only by a client without the extension (the middleware
		// takes the others' calls), for an Optional tool.
		if gate != nil {
			if res, err := gate(ctx, req); res != nil || err != nil {
				return res, err
			}
		}
		return h(ctx, &Task{req: req}, req)
	})
}

// Resume runs again, from the start, every task a previous process left
// unfinished in Options.Dir, with the arguments it was called with; a task
// whose tool the server no longer has fails. Questions the old process
// asked are dropped: the handler asks again, under new keys.
func (e *Engine) Resume() {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, t := range e.tasks {
		if t.rec.Status.Terminal() || t.cancel != nil {
			continue
		}
		tl := e.tools[t.rec.Tool]
		if tl == nil {
			t.rec.Status = mcpwire.TaskFailed
			t.rec.Error = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("the server restarted and no longer has tool %q", t.rec.Tool)}
			t.rec.InputRequests = nil
			e.touchLocked(t)
			continue
		}
		t.rec.Runs++
		t.rec.Status = mcpwire.TaskWorking
		t.rec.StatusMessage = "resumed after a server restart"
		t.rec.InputRequests = nil
		e.touchLocked(t)
		req := &mcpsdk.CallToolRequest{Params: &mcpsdk.CallToolParamsRaw{Name: t.rec.Tool, Arguments: t.rec.Arguments}}
		if len(t.rec.Answers) > 0 {
			// Kept as the SDK wrote them, so they read back.
			json.Unmarshal(t.rec.Answers, &req.Params.InputResponses)
		}
		e.runLocked(t, tl, req)
	}
}

// Close stops every running handler as a dying process would: their tasks
// stay as they are (in Options.Dir, unfinished), and what the handlers
// return is dropped. It waits for them to return.
func (e *Engine) Close() {
	e.mu.Lock()
	e.closed = true
	e.mu.Unlock()
	e.stop()
	e.wg.Wait()
}

// Get returns the task id as tasks/get would.
func (e *Engine) Get(id string) (mcpwire.Task, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	t := e.liveLocked(id)
	if t == nil {
		return mcpwire.Task{}, false
	}
	return e.detailLocked(t), true
}

// Await waits until the task id exists and cond holds of it, or ctx is
// done.
func (e *Engine) Await(ctx context.Context, id string, cond func(mcpwire.Task) bool) (mcpwire.Task, error) {
	for {
		e.mu.Lock()
		ch := e.changed
		var d mcpwire.Task
		t := e.liveLocked(id)
		if t != nil {
			d = e.detailLocked(t)
		}
		e.mu.Unlock()
		if t != nil && cond(d) {
			return d, nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return d, fmt.Errorf("task %s: %w (last status %q)", id, ctx.Err(), d.Status)
		}
	}
}

// IDs returns the ids of the tasks the engine knows, in no order.
func (e *Engine) IDs() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	ids := make([]string, 0, len(e.tasks))
	for id := range e.tasks {
		ids = append(ids, id)
	}
	return ids
}

// middleware takes the calls of task tools from clients that declare the
// extension, and adds the extension to the capabilities the server
// advertises.
func (e *Engine) middleware(next mcpsdk.MethodHandler) mcpsdk.MethodHandler {
	return func(ctx context.Context, method string, req mcpsdk.Request) (mcpsdk.Result, error) {
		switch method {
		case "tools/call":
			call, ok := req.(*mcpsdk.CallToolRequest)
			if !ok || call.Params == nil {
				break
			}
			e.mu.Lock()
			tl := e.tools[call.Params.Name]
			e.mu.Unlock()
			if tl == nil {
				break
			}
			if !mcpwire.TasksDeclared(req.GetParams().GetMeta(), req.GetSession()) {
				if tl.support == Required {
					return nil, mcpwire.MissingTasksCapability(fmt.Sprintf("tool %q runs only as a task: declare the %s extension", call.Params.Name, mcpwire.TasksExtension))
				}
				break
			}
			if tl.gate != nil {
				res, err := tl.gate(ctx, call)
				if err != nil {
					return nil, err
				}
				if res != nil {
					// The SDK sets resultType only on what its own
					// handlers return.
					return &inputRequiredResult{ResultType: "input_required", InputRequests: res.InputRequests, RequestState: res.RequestState}, nil
				}
			}
			return e.start(tl, call)
		case "server/discover", "initialize":
			res, err := next(ctx, method, req)
			mcpwire.AdvertiseTasks(res)
			return res, err
		}
		return next(ctx, method, req)
	}
}

// inputRequiredResult answers a gated call that needs input first.
type inputRequiredResult struct {
	mcpsdk.ResultBase
	ResultType    string                 `json:"resultType"` // "input_required"
	InputRequests mcpsdk.InputRequestMap `json:"inputRequests"`
	RequestState  string                 `json:"requestState,omitempty"`
}

// start makes the call a task, kept (on disk with Options.Dir) before it
// is answered, so that a tasks/get right after the answer finds it.
func (e *Engine) start(tl *tool, req *mcpsdk.CallToolRequest) (mcpsdk.Result, error) {
	var answers json.RawMessage
	if len(req.Params.InputResponses) > 0 {
		var err error
		if answers, err = json.Marshal(req.Params.InputResponses); err != nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "inputResponses: " + err.Error()}
		}
	}
	var b [16]byte
	rand.Read(b[:])
	now := e.opts.Now().UTC()
	t := &task{rec: record{
		ID:            hex.EncodeToString(b[:]),
		Tool:          req.Params.Name,
		Arguments:     req.Params.Arguments,
		Answers:       answers,
		Status:        mcpwire.TaskWorking,
		CreatedAt:     now,
		LastUpdatedAt: now,
		Runs:          1,
	}}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the server is shutting down"}
	}
	if err := e.saveLocked(t); err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "keeping the task: " + err.Error()}
	}
	e.tasks[t.rec.ID] = t
	e.broadcastLocked()
	// The handler's request outlives the call: keep what it reads, not
	// the session, which a stateless server closes with the answer.
	run := &mcpsdk.CallToolRequest{Params: &mcpsdk.CallToolParamsRaw{Meta: req.Params.Meta, Name: req.Params.Name, Arguments: req.Params.Arguments, InputResponses: req.Params.InputResponses}, Extra: req.Extra}
	e.runLocked(t, tl, run)
	return &mcpwire.TaskResult{ResultType: "task", Task: e.infoLocked(t)}, nil
}

// runLocked starts t's handler.
func (e *Engine) runLocked(t *task, tl *tool, req *mcpsdk.CallToolRequest) {
	ctx, cancel := context.WithCancel(e.ctx)
	t.cancel = cancel
	id := t.rec.ID
	e.wg.Go(func() {
		defer cancel()
		res, err := runHandler(ctx, tl.h, &Task{e: e, id: id, req: req}, req)
		e.finish(id, ctx, res, err)
	})
}

// runHandler calls h, turning a panic into an error.
func runHandler(ctx context.Context, h Handler, t *Task, req *mcpsdk.CallToolRequest) (res *mcpsdk.CallToolResult, err error) {
	defer func() {
		if p := recover(); p != nil {
			res, err = nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("the tool's handler panicked: %v", p)}
		}
	}()
	return h(ctx, t, req)
}

// finish records what a handler returned, unless the task ended without
// it (cancelled) or the engine is closing.
func (e *Engine) finish(id string, ctx context.Context, res *mcpsdk.CallToolResult, err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	t := e.tasks[id]
	if e.closed || t == nil || t.rec.Status.Terminal() {
		return
	}
	t.cancel = nil
	t.asks = nil
	t.rec.InputRequests = nil
	switch {
	case err != nil:
		t.rec.Status = mcpwire.TaskFailed
		t.rec.Error = toWireError(err)
	case res == nil:
		t.rec.Status = mcpwire.TaskFailed
		t.rec.Error = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the tool's handler returned no result"}
	default:
		// A result that does not encode fails here, saying so, not in
		// every tasks/get that would send it.
		if _, merr := json.Marshal(res); merr != nil {
			t.rec.Status = mcpwire.TaskFailed
			t.rec.Error = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "encoding the result: " + merr.Error()}
			break
		}
		t.rec.Status = mcpwire.TaskCompleted
		t.rec.Result = res
	}
	e.touchLocked(t)
}

func toWireError(err error) *jsonrpc.Error {
	if je, ok := errors.AsType[*jsonrpc.Error](err); ok {
		return &jsonrpc.Error{Code: je.Code, Message: je.Message, Data: je.Data}
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
}

// onTask runs f, with e.mu held, on the task a request of method names,
// once the request declares the extension; else, or when the task is
// unknown, it returns the error to answer with.
func (e *Engine) onTask(method string, p *mcpwire.TaskParams, ss *mcpsdk.ServerSession, f func(*task)) error {
	if err := mcpwire.RequireTasks(method, p.GetMeta(), ss); err != nil {
		return err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	t := e.liveLocked(p.TaskID)
	if t == nil {
		return mcpwire.UnknownTask(p.TaskID)
	}
	f(t)
	return nil
}

func (e *Engine) getTask(_ context.Context, ss *mcpsdk.ServerSession, p *mcpwire.TaskParams) (*mcpwire.TaskResult, error) {
	res := &mcpwire.TaskResult{ResultType: "complete"}
	if err := e.onTask(mcpwire.MethodGetTask, p, ss, func(t *task) { res.Task = e.detailLocked(t) }); err != nil {
		return nil, err
	}
	return res, nil
}

// updateTask hands answers to the questions they are keyed by; answers to
// keys not outstanding, and to tasks the server does not know, are
// dropped (the spec has the server acknowledge them all the same).
func (e *Engine) updateTask(_ context.Context, ss *mcpsdk.ServerSession, p *mcpwire.UpdateTaskParams) (*mcpwire.AckResult, error) {
	if err := mcpwire.RequireTasks(mcpwire.MethodUpdateTask, p.GetMeta(), ss); err != nil {
		return nil, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	t := e.liveLocked(p.TaskID)
	if t == nil || t.rec.Status != mcpwire.TaskInputRequired {
		return &mcpwire.AckResult{ResultType: "complete"}, nil
	}
	answered := false
	for key, raw := range p.InputResponses {
		ch, ok := t.asks[key]
		if !ok {
			continue
		}
		var r mcpsdk.ElicitResult
		if err := json.Unmarshal(raw, &r); err != nil || r.Action == "" {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("inputResponses[%q] is not an elicitation result", key)}
		}
		ch <- &r
		delete(t.asks, key)
		delete(t.rec.InputRequests, key)
		answered = true
	}
	if answered {
		if len(t.rec.InputRequests) == 0 {
			t.rec.Status = mcpwire.TaskWorking
		}
		e.touchLocked(t)
	}
	return &mcpwire.AckResult{ResultType: "complete"}, nil
}

// cancelTask ends a live task as cancelled at once, and stops its handler.
func (e *Engine) cancelTask(_ context.Context, ss *mcpsdk.ServerSession, p *mcpwire.TaskParams) (*mcpwire.AckResult, error) {
	err := e.onTask(mcpwire.MethodCancelTask, p, ss, func(t *task) {
		if t.rec.Status.Terminal() {
			return
		}
		if t.cancel != nil {
			t.cancel()
			t.cancel = nil
		}
		t.asks = nil
		t.rec.InputRequests = nil
		t.rec.Status = mcpwire.TaskCancelled
		t.rec.StatusMessage = "cancelled by the client"
		e.touchLocked(t)
	})
	if err != nil {
		return nil, err
	}
	return &mcpwire.AckResult{ResultType: "complete"}, nil
}

// liveLocked returns the task id unless it is unknown or past its TTL (then
// it is forgotten).
func (e *Engine) liveLocked(id string) *task {
	t := e.tasks[id]
	if t == nil {
		return nil
	}
	if e.opts.TTL > 0 && t.rec.Status.Terminal() && e.opts.Now().After(t.rec.CreatedAt.Add(e.opts.TTL)) {
		delete(e.tasks, id)
		e.removeLocked(id)
		return nil
	}
	return t
}

// infoLocked is t as a CreateTaskResult carries it.
func (e *Engine) infoLocked(t *task) mcpwire.Task {
	var ttl *int64
	if e.opts.TTL > 0 {
		ms := e.opts.TTL.Milliseconds()
		ttl = &ms
	}
	poll := max(1, e.opts.PollInterval.Milliseconds())
	return mcpwire.Task{
		TaskID:         t.rec.ID,
		Status:         t.rec.Status,
		StatusMessage:  t.rec.StatusMessage,
		CreatedAt:      t.rec.CreatedAt.Format(time.RFC3339Nano),
		LastUpdatedAt:  t.rec.LastUpdatedAt.Format(time.RFC3339Nano),
		TTLMs:          ttl,
		PollIntervalMs: &poll,
	}
}

// detailLocked is t as tasks/get tells it.
func (e *Engine) detailLocked(t *task) mcpwire.Task {
	d := e.infoLocked(t)
	d.Error = t.rec.Error
	switch t.rec.Status {
	case mcpwire.TaskInputRequired:
		d.InputRequests = map[string]json.RawMessage{}
		for k, v := range t.rec.InputRequests {
			d.InputRequests[k] = v
		}
	case mcpwire.TaskCompleted:
		d.Result = t.rec.Result
	}
	return d
}

// touchLocked records a change of t: its time, the file, the waiters.
func (e *Engine) touchLocked(t *task) {
	t.rec.LastUpdatedAt = e.opts.Now().UTC()
	// A task that cannot be kept still runs; the next change tries again.
	_ = e.saveLocked(t)
	e.broadcastLocked()
}

func (e *Engine) broadcastLocked() {
	close(e.changed)
	e.changed = make(chan struct{})
}
