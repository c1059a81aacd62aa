package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/freecode/freecode/mcp/tasks"
)

// The Conn's side of the tasks extension (package mcp/tasks): every Conn
// declares it, its transports fold a task answer so that the go-sdk keeps
// it (stdioconn.go, roundtrip.go), and a call answered with a task is
// followed to its end inside CallTool, unless the caller takes tasks
// itself (CallOptions.TakeTasks): then CallTool returns the task answer at
// once, and the caller follows it with the methods below, which outlive
// sessions (a task belongs to the server, not to a session).

// cancelTimeout bounds the tasks/cancel of a task whose call was given up.
const cancelTimeout = 10 * time.Second

// GetTask asks the server for a task's state. While the Conn reconnects
// it waits, within ctx, for the reconnect. Nobody answers what the server
// asks meanwhile (see FollowTask).
func (c *Conn) GetTask(ctx context.Context, id string) (*tasks.Task, error) {
	return c.getTask(ctx, id, asking{})
}

// getTask is GetTask, the server's questions meanwhile going to a.
func (c *Conn) getTask(ctx context.Context, id string, a asking) (*tasks.Task, error) {
	s, err := c.liveSession(ctx)
	if err != nil {
		return nil, fmt.Errorf("tasks/get %s on %s: %w", id, c.srv.Name, err)
	}
	t, err := tasks.Get(ctx, s.cs, id)
	if err != nil {
		return nil, fmt.Errorf("tasks/get %s on %s: %w", id, c.srv.Name, c.hide(err))
	}
	if tasks.NeedsResult(t) {
		return c.legacyResult(ctx, s, t, a)
	}
	return t, nil
}

// legacyResult completes a 2025-11-25 task with its tasks/result (see
// mcp/tasks/legacy.go): the tool's result, or the call's JSON-RPC error as
// a failure. The server answers once the task has ended; meanwhile its
// questions (an input_required task's) come as requests of its own, which
// go to a as during a call. A server without tasks/result leaves t as it
// was.
func (c *Conn) legacyResult(ctx context.Context, s *session, t *tasks.Task, a asking) (*tasks.Task, error) {
	rctx, _, end := c.begin(ctx, s, a)
	defer end()
	res, err := tasks.Result(rctx, s.cs, t.TaskID)
	var werr *jsonrpc.Error
	switch {
	case err == nil:
		done := *t
		done.Status, done.Result = tasks.Completed, res
		if t.Status == tasks.Failed && res.IsError {
			done.Status = tasks.Failed // failed, with the tool's own words as its result
		}
		return &done, nil
	case errors.As(err, &werr) && werr.Code == jsonrpc.CodeMethodNotFound:
		return t, nil
	case errors.As(err, &werr) && ctx.Err() == nil:
		done := *t
		done.Status, done.Error = tasks.Failed, werr
		return &done, nil
	}
	return nil, fmt.Errorf("%s %s on %s: %w", tasks.MethodResult, t.TaskID, c.srv.Name, c.hide(err))
}

// UpdateTask answers questions of an input_required task.
func (c *Conn) UpdateTask(ctx context.Context, id string, responses mcpsdk.InputResponseMap) error {
	s, err := c.liveSession(ctx)
	if err == nil {
		err = tasks.Update(ctx, s.cs, id, responses)
	}
	if err != nil {
		return fmt.Errorf("tasks/update %s on %s: %w", id, c.srv.Name, c.hide(err))
	}
	return nil
}

// CancelTask asks the server to cancel a task (tasks/cancel: a task is
// never cancelled with notifications/cancelled).
func (c *Conn) CancelTask(ctx context.Context, id string) error {
	s, err := c.liveSession(ctx)
	if err == nil {
		err = tasks.Cancel(ctx, s.cs, id)
	}
	if err != nil {
		return fmt.Errorf("tasks/cancel %s on %s: %w", id, c.srv.Name, c.hide(err))
	}
	return nil
}

// FollowOptions are what the following of a task brings. A nil
// *FollowOptions brings none of them.
type FollowOptions struct {
	// OnChange, if set, is told each new state of the task.
	OnChange func(*tasks.Task)
	// CallID is the id of the call that started the task, which the
	// Asker is told with each of its questions.
	CallID string
	// AskerOf says who answers a question of the task when the server
	// asks one (nil: nobody): the frontend that owns the task then, which
	// may not be the one whose call started it. It may be called under a
	// lock of the Conn's: it must return at once.
	AskerOf func() Asker
}

// asking is who answers the questions of the task o follows, and
// onChange its OnChange.
func (o *FollowOptions) asking() (a asking, onChange func(*tasks.Task)) {
	if o == nil {
		return asking{}, nil
	}
	return asking{callID: o.CallID, askerOf: o.AskerOf}, o.OnChange
}

// FollowTask polls the task t until it ends (tasks.Follow) and returns its
// final state. Its questions go to opts.AskerOf, as an elicitation or
// sampling request during a call goes to the call's Asker.
func (c *Conn) FollowTask(ctx context.Context, t *tasks.Task, opts *FollowOptions) (*tasks.Task, error) {
	a, onChange := opts.asking()
	defer c.opts.Telemetry.taskFollowed(c.srv.Name)()
	return c.follow(ctx, t, a, onChange)
}

// follow is FollowTask, the task's questions going to a.
func (c *Conn) follow(ctx context.Context, t *tasks.Task, a asking, onChange func(*tasks.Task)) (*tasks.Task, error) {
	answer := func(ctx context.Context, requests map[string]json.RawMessage) (mcpsdk.InputResponseMap, error) {
		return c.answerTask(ctx, a, requests)
	}
	return tasks.Follow(ctx, connTasks{c, a}, t, tasks.FollowOptions{OnChange: onChange, Answer: answer})
}

// connTasks is a Conn as the server tasks.Follow polls, the task's
// questions going to a.
type connTasks struct {
	c *Conn
	a asking
}

func (t connTasks) Get(ctx context.Context, id string) (*tasks.Task, error) {
	return t.c.getTask(ctx, id, t.a)
}
func (t connTasks) Update(ctx context.Context, id string, r mcpsdk.InputResponseMap) error {
	return t.c.UpdateTask(ctx, id, r)
}

// answerTask answers an input_required task's questions by a's Asker, as
// the Conn's elicitation and sampling handlers answer a server's.
func (c *Conn) answerTask(ctx context.Context, a asking, requests map[string]json.RawMessage) (mcpsdk.InputResponseMap, error) {
	who := asked{asker: a.who(), callID: a.callID}
	out := mcpsdk.InputResponseMap{}
	for key, raw := range requests {
		var req struct {
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		if err := json.Unmarshal(raw, &req); err != nil {
			return nil, fmt.Errorf("input request %q: %w", key, err)
		}
		switch req.Method {
		case "elicitation/create":
			var p mcpsdk.ElicitParams
			if err := json.Unmarshal(req.Params, &p); err != nil {
				return nil, fmt.Errorf("input request %q: %w", key, err)
			}
			res, err := c.elicit(ctx, who, "", &p)
			if err != nil {
				return nil, err
			}
			out[key] = res
		case "sampling/createMessage":
			var p mcpsdk.CreateMessageParams
			if err := json.Unmarshal(req.Params, &p); err != nil {
				return nil, fmt.Errorf("input request %q: %w", key, err)
			}
			res, err := c.sample(ctx, who, "", &p)
			if err != nil {
				return nil, err
			}
			out[key] = res
		default:
			return nil, fmt.Errorf("input request %q asks %s, which FreeCode does not answer for a task", key, req.Method)
		}
	}
	return out, nil
}

// settleTask follows the task a call of name was answered with to its
// end, and returns what the call returns: the completed task's result, or
// an error for a task that failed, was cancelled or expired. When ctx ends
// first, the task is cancelled on the server. Status messages go to the
// call's OnProgress, if set, and the task's questions to its Asker.
func (c *Conn) settleTask(ctx context.Context, name string, t *tasks.Task, opts *CallOptions) (*mcpsdk.CallToolResult, error) {
	var onChange func(*tasks.Task)
	if onProgress := opts.OnProgress; onProgress != nil {
		onChange = func(t *tasks.Task) {
			msg := "task " + t.TaskID + " " + string(t.Status)
			if t.StatusMessage != "" {
				msg += ": " + t.StatusMessage
			}
			onProgress(Progress{Message: msg})
		}
	}
	done := opts.Telemetry.taskFollowed(c.srv.Name)
	final, err := c.follow(ctx, t, asking{callID: opts.ID, asker: opts.Asker}, onChange)
	done()
	if err != nil {
		if ctx.Err() != nil {
			c.cancelAbandoned(ctx, t.TaskID)
		}
		return nil, fmt.Errorf("calling %s on %s: %w", name, c.srv.Name, err)
	}
	switch final.Status {
	case tasks.Completed:
		if final.Result == nil {
			return nil, fmt.Errorf("calling %s on %s: task %s completed without a result", name, c.srv.Name, final.TaskID)
		}
		return final.Result, nil
	case tasks.Failed:
		return nil, fmt.Errorf("calling %s on %s: task %s failed: %s", name, c.srv.Name, final.TaskID, c.redactor.Load().String(final.Failure()))
	default:
		return nil, fmt.Errorf("calling %s on %s: task %s was %s on the server", name, c.srv.Name, final.TaskID, final.Status)
	}
}

// cancelAbandoned cancels, on a context of its own, the task of a call
// whose ctx ended.
func (c *Conn) cancelAbandoned(ctx context.Context, id string) {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cancelTimeout)
	defer cancel()
	if err := c.CancelTask(cctx, id); err != nil {
		c.logger.Warn("could not cancel the task of a call given up", "task", id, "error", err)
	}
}

// errTaskUnreadable is the error of a task answer that is no task.
var errTaskUnreadable = errors.New("the server answered with a task FreeCode cannot read")

// FollowTask follows a task of the named server to its end, as
// Conn.FollowTask does, through whatever Conn the Manager holds for the
// server at each poll (a restarted server's new one), starting a server
// on demand that idled out. A server no longer configured ends it with an
// error wrapping tasks.ErrGone. The server is held (Acquire) meanwhile, so
// that it does not idle out under its task.
func (m *Manager) FollowTask(ctx context.Context, server string, t *tasks.Task, opts *FollowOptions) (*tasks.Task, error) {
	if _, release, err := m.Acquire(ctx, server); err == nil {
		defer release()
	}
	a, onChange := opts.asking()
	mt := managerTasks{m, server, a}
	defer m.opts.ConnOptions.Telemetry.taskFollowed(server)()
	return tasks.Follow(ctx, mt, t, tasks.FollowOptions{OnChange: onChange, Answer: mt.answer})
}

// CancelTask cancels a task of the named server (tasks/cancel).
func (m *Manager) CancelTask(ctx context.Context, server, id string) error {
	c, release, err := m.Acquire(ctx, server)
	if err != nil {
		return fmt.Errorf("tasks/cancel %s on %s: %w", id, server, err)
	}
	defer release()
	return c.CancelTask(ctx, id)
}

// managerTasks is a server's tasks through its Manager's current Conn,
// their questions going to a.
type managerTasks struct {
	m      *Manager
	server string
	a      asking
}

func (mt managerTasks) conn(ctx context.Context) (*Conn, func(), error) {
	if _, err := mt.m.entry(mt.server); err != nil {
		return nil, nil, fmt.Errorf("%w: %w", tasks.ErrGone, err)
	}
	return mt.m.Acquire(ctx, mt.server)
}

func (mt managerTasks) Get(ctx context.Context, id string) (*tasks.Task, error) {
	c, release, err := mt.conn(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	return c.getTask(ctx, id, mt.a)
}

func (mt managerTasks) Update(ctx context.Context, id string, r mcpsdk.InputResponseMap) error {
	c, release, err := mt.conn(ctx)
	if err != nil {
		return err
	}
	defer release()
	return c.UpdateTask(ctx, id, r)
}

func (mt managerTasks) answer(ctx context.Context, requests map[string]json.RawMessage) (mcpsdk.InputResponseMap, error) {
	c, release, err := mt.conn(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	return c.answerTask(ctx, mt.a, requests)
}
