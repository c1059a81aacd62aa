// Package tasks is the client side of the MCP tasks extension
// (io.modelcontextprotocol/tasks, SEP-2663, on the 2026-07-28 revision)
// over the go-sdk, which has none of it.
//
// A server that supports the extension may answer a tools/call, from a
// client that declares it, with a task (resultType "task") instead of a
// result. The client then follows the task: it polls tasks/get at the
// server's pollIntervalMs until the task ends (completed, with the tool's
// result inlined; failed, with a JSON-RPC error; cancelled), answers the
// questions of an input_required task with tasks/update, and stops it with
// tasks/cancel (never notifications/cancelled, which cancels a request, not
// a task). Over Streamable HTTP the tasks requests carry Mcp-Name: <taskId>.
//
// The go-sdk's CallToolResult keeps resultType unexported and drops every
// field of a task, so a task answer would reach the caller as an empty
// result. The transports of package mcp therefore fold a task answer into
// the result's _meta before the SDK decodes it ([Fold], [FoldHTTP]), and
// [Of] reads it back. docs/upstream/go-sdk-task-result.md says more.
//
// The package imports the go-sdk and internal/mcpwire, which holds the
// extension's wire for both sides, only; package mcp wires it into its
// Conn.
package tasks

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/freecode/freecode/internal/mcpwire"
)

// A Task is what the server says of a task: the task of a CreateTaskResult,
// or the DetailedTask of tasks/get. The extension's types are
// internal/mcpwire's, which the gateway's side speaks too.
type Task = mcpwire.Task

// A Status is a task's state: Working and InputRequired are live, the
// others final.
type Status = mcpwire.TaskStatus

const (
	Working       = mcpwire.TaskWorking
	InputRequired = mcpwire.TaskInputRequired
	Completed     = mcpwire.TaskCompleted
	Failed        = mcpwire.TaskFailed
	Cancelled     = mcpwire.TaskCancelled
)

// serverTask is a task as the server sent it, whose ttl and poll interval
// may have the names of 2025-11-25 (legacy.go); task gives it the
// extension's.
type serverTask struct {
	Task
	LegacyTTL          *int64 `json:"ttl,omitempty"`
	LegacyPollInterval *int64 `json:"pollInterval,omitempty"`
}

// task returns the task, its fields under the extension's names, or what
// is wrong with it.
func (st *serverTask) task() (*Task, error) {
	t := &st.Task
	if t.TTLMs == nil {
		t.TTLMs = st.LegacyTTL
	}
	if t.PollIntervalMs == nil {
		t.PollIntervalMs = st.LegacyPollInterval
	}
	return t, check(t)
}

// check says what is wrong with a task the server sent.
func check(t *Task) error {
	if t.TaskID == "" {
		return errors.New("the server's task has no taskId")
	}
	if !t.Status.Valid() {
		return fmt.Errorf("the server's task %s has an unknown status %q", t.TaskID, t.Status)
	}
	return nil
}

// Declare declares the extension in caps.
func Declare(caps *mcpsdk.ClientCapabilities) { caps.AddExtension(mcpwire.TasksExtension, nil) }

// Register registers the extension's methods on c, so that [Get],
// [Update] and [Cancel] can send them.
func Register(c *mcpsdk.Client) error {
	return errors.Join(
		mcpsdk.AddSendingCustomMethod[*mcpwire.TaskParams, *getResult](c, mcpwire.MethodGetTask),
		mcpsdk.AddSendingCustomMethod[*mcpwire.UpdateTaskParams, *mcpwire.AckResult](c, mcpwire.MethodUpdateTask),
		mcpsdk.AddSendingCustomMethod[*mcpwire.TaskParams, *mcpwire.AckResult](c, mcpwire.MethodCancelTask),
		mcpsdk.AddSendingCustomMethod[*mcpwire.TaskParams, *mcpsdk.CallToolResult](c, MethodResult),
	)
}

// getResult is tasks/get's answer as the client reads it.
type getResult struct {
	mcpsdk.ResultBase
	serverTask
}

// Get asks the server for the task's state (tasks/get).
func Get(ctx context.Context, cs *mcpsdk.ClientSession, id string) (*Task, error) {
	res, err := mcpsdk.CallCustomMethod[*mcpwire.TaskParams, *getResult](ctx, cs, mcpwire.MethodGetTask, &mcpwire.TaskParams{TaskID: id})
	if err != nil {
		return nil, err
	}
	if res.TaskID == "" {
		res.TaskID = id
	}
	if res.TaskID != id {
		return nil, fmt.Errorf("tasks/get of %s answered for task %s", id, res.TaskID)
	}
	return res.task()
}

// Update answers questions of an input_required task (tasks/update).
func Update(ctx context.Context, cs *mcpsdk.ClientSession, id string, responses mcpsdk.InputResponseMap) error {
	p := &mcpwire.UpdateTaskParams{TaskID: id}
	if responses != nil {
		p.InputResponses = make(map[string]json.RawMessage, len(responses))
	}
	for key, r := range responses {
		b, err := json.Marshal(r)
		if err != nil {
			return fmt.Errorf("tasks/update of %s: inputResponses[%q]: %w", id, key, err)
		}
		p.InputResponses[key] = b
	}
	_, err := mcpsdk.CallCustomMethod[*mcpwire.UpdateTaskParams, *mcpwire.AckResult](ctx, cs, mcpwire.MethodUpdateTask, p)
	return err
}

// Cancel asks the server to cancel the task (tasks/cancel). The task's
// end, cancelled or otherwise, is seen by the next tasks/get.
func Cancel(ctx context.Context, cs *mcpsdk.ClientSession, id string) error {
	_, err := mcpsdk.CallCustomMethod[*mcpwire.TaskParams, *mcpwire.AckResult](ctx, cs, mcpwire.MethodCancelTask, &mcpwire.TaskParams{TaskID: id})
	return err
}

// IsUnknown reports whether err is the server's answer that it knows no
// such task (-32602): it never had it, or its ttlMs is over.
func IsUnknown(err error) bool {
	var werr *jsonrpc.Error
	return errors.As(err, &werr) && werr.Code == jsonrpc.CodeInvalidParams
}

// metaKey is the _meta key a folded task answer is kept under.
const metaKey = "freecode/task"

// Fold returns the result of a JSON-RPC answer with a task answer
// (resultType "task", or a 2025-11-25 {"task": {...}}, see legacy.go) made
// into a CallToolResult the go-sdk keeps whole:
// no content, and the server's object under _meta["freecode/task"]. Any
// other result is returned as it is, ok false.
func Fold(result json.RawMessage) (folded json.RawMessage, ok bool) {
	if !bytes.Contains(result, []byte(`"task"`)) {
		return result, false // the common answer, spared a decode
	}
	var probe struct {
		ResultType string                     `json:"resultType"`
		Task       json.RawMessage            `json:"task"`
		Content    json.RawMessage            `json:"content"`
		Meta       map[string]json.RawMessage `json:"_meta"`
	}
	if json.Unmarshal(result, &probe) != nil {
		return result, false
	}
	if probe.ResultType == "" && probe.Content == nil && bytes.HasPrefix(probe.Task, []byte("{")) {
		if out, ok := foldLegacy(probe.Task, probe.Meta); ok {
			return out, true
		}
	}
	if probe.ResultType != "task" {
		return result, false
	}
	meta := probe.Meta
	if meta == nil {
		meta = map[string]json.RawMessage{}
	}
	meta[metaKey] = result
	out, err := json.Marshal(struct {
		ResultType string                     `json:"resultType"`
		Content    []any                      `json:"content"`
		Meta       map[string]json.RawMessage `json:"_meta"`
	}{"task", []any{}, meta})
	if err != nil {
		return result, false
	}
	return out, true
}

// Of returns the task a tools/call was answered with, if it was (see
// [Fold]); an error if the server's task is not one.
func Of(res *mcpsdk.CallToolResult) (*Task, bool, error) {
	if res == nil || res.Meta == nil {
		return nil, false, nil
	}
	v, ok := res.Meta[metaKey]
	if !ok {
		return nil, false, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, true, err
	}
	var st serverTask
	if err := json.Unmarshal(b, &st); err != nil {
		return nil, true, fmt.Errorf("the server's task: %w", err)
	}
	t, err := st.task()
	if err != nil {
		return nil, true, err
	}
	return t, true, nil
}
