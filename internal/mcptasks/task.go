package mcptasks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/freecode/freecode/internal/mcpwire"
)

// A Task is what a Handler reports through while it works.
type Task struct {
	e   *Engine // nil when the call runs in the call, not as a task
	id  string
	req *mcpsdk.CallToolRequest
}

// ID returns the task's id ("" when the call is not a task).
func (t *Task) ID() string { return t.id }

// SetStatus sets the task's statusMessage, which tasks/get reports.
func (t *Task) SetStatus(msg string) {
	if t.e == nil {
		return
	}
	t.e.mu.Lock()
	defer t.e.mu.Unlock()
	if tk := t.e.tasks[t.id]; tk != nil && !tk.rec.Status.Terminal() {
		tk.rec.StatusMessage = msg
		t.e.touchLocked(tk)
	}
}

// ErrNoInput is returned by Elicit when the call cannot be asked anything.
var ErrNoInput = errors.New("mcptasks: the client cannot be asked for input")

// Elicit asks the client params and waits for its answer: the task is
// input_required, with the question in inputRequests under a key never
// used before in this task, until a tasks/update answers that key. Several
// goroutines may ask at once; the task is working again when every
// question is answered. A call that is not a task asks by an elicitation
// request of its session, where the revision allows one.
func (t *Task) Elicit(ctx context.Context, params *mcpsdk.ElicitParams) (*mcpsdk.ElicitResult, error) {
	if t.e == nil {
		ss, ok := t.req.GetSession().(*mcpsdk.ServerSession)
		if !ok || ss == nil {
			return nil, ErrNoInput
		}
		return ss.Elicit(ctx, params)
	}
	// The SDK's input map writes the method and the elicitation's mode.
	b, err := json.Marshal(mcpsdk.InputRequestMap{"q": params})
	if err != nil {
		return nil, fmt.Errorf("encoding the question: %w", err)
	}
	var one map[string]json.RawMessage
	if err := json.Unmarshal(b, &one); err != nil {
		return nil, err
	}
	ch := make(chan *mcpsdk.ElicitResult, 1)
	e := t.e
	e.mu.Lock()
	tk := e.tasks[t.id]
	if tk == nil || tk.rec.Status.Terminal() {
		e.mu.Unlock()
		return nil, context.Canceled
	}
	tk.rec.NextKey++
	key := fmt.Sprintf("input-%d", tk.rec.NextKey)
	if tk.asks == nil {
		tk.asks = map[string]chan *mcpsdk.ElicitResult{}
	}
	if tk.rec.InputRequests == nil {
		tk.rec.InputRequests = map[string]json.RawMessage{}
	}
	tk.asks[key] = ch
	tk.rec.InputRequests[key] = one["q"]
	tk.rec.Status = mcpwire.TaskInputRequired
	e.touchLocked(tk)
	e.mu.Unlock()

	select {
	case r := <-ch:
		return r, nil
	case <-ctx.Done():
		// The handler stopped waiting (cancelled, or gave up): the
		// question is no longer asked.
		e.mu.Lock()
		if _, asked := tk.asks[key]; asked && !tk.rec.Status.Terminal() {
			delete(tk.asks, key)
			delete(tk.rec.InputRequests, key)
			if len(tk.rec.InputRequests) == 0 {
				tk.rec.Status = mcpwire.TaskWorking
			}
			e.touchLocked(tk)
		}
		e.mu.Unlock()
		return nil, ctx.Err()
	}
}

// Runs returns how many server processes have run this task's handler,
// this one included (1 unless a restart resumed it).
func (t *Task) Runs() int {
	if t.e == nil {
		return 1
	}
	t.e.mu.Lock()
	defer t.e.mu.Unlock()
	if tk := t.e.tasks[t.id]; tk != nil {
		return tk.rec.Runs
	}
	return 1
}
