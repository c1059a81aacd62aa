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
// The package imports the go-sdk only; package mcp wires it into its Conn.
package tasks

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Extension is the extension's identifier, under which a client declares
// it in its capabilities' extensions.
const Extension = "io.modelcontextprotocol/tasks"

// The extension's methods.
const (
	MethodGet    = "tasks/get"
	MethodUpdate = "tasks/update"
	MethodCancel = "tasks/cancel"
)

// A Status is a task's state: Working and InputRequired are live, the
// others final.
type Status string

const (
	Working       Status = "working"
	InputRequired Status = "input_required"
	Completed     Status = "completed"
	Failed        Status = "failed"
	Cancelled     Status = "cancelled"
)

// Terminal reports whether s is a final state, which never changes again.
func (s Status) Terminal() bool { return s == Completed || s == Failed || s == Cancelled }

// Valid reports whether s is one of the extension's states.
func (s Status) Valid() bool { return s == Working || s == InputRequired || s.Terminal() }

// A Task is what the server says of a task: a CreateTaskResult, or the
// DetailedTask of tasks/get.
type Task struct {
	TaskID        string `json:"taskId"`
	Status        Status `json:"status"`
	StatusMessage string `json:"statusMessage,omitempty"`
	CreatedAt     string `json:"createdAt,omitempty"`
	LastUpdatedAt string `json:"lastUpdatedAt,omitempty"`
	// TTLMs is how long after CreatedAt the server keeps the task; nil:
	// as long as it runs.
	TTLMs *int64 `json:"ttlMs,omitempty"`
	// PollIntervalMs is how often the server would have the task polled.
	PollIntervalMs *int64 `json:"pollIntervalMs,omitempty"`
	// InputRequests are an input_required task's questions by key, each
	// {method, params} (elicitation/create, sampling/createMessage, ...).
	InputRequests map[string]json.RawMessage `json:"inputRequests,omitempty"`
	// Result is a completed task's tool result.
	Result *mcpsdk.CallToolResult `json:"result,omitempty"`
	// Error is a failed task's JSON-RPC error.
	Error *jsonrpc.Error `json:"error,omitempty"`

	// LegacyTTL and LegacyPollInterval are TTLMs and PollIntervalMs as a
	// 2025-11-25 server names them (legacy.go); check moves them there.
	LegacyTTL          *int64 `json:"ttl,omitempty"`
	LegacyPollInterval *int64 `json:"pollInterval,omitempty"`
}

// check says what is wrong with a task the server sent, once its fields
// have the extension's names.
func (t *Task) check() error {
	t.normalize()
	if t.TaskID == "" {
		return errors.New("the server's task has no taskId")
	}
	if !t.Status.Valid() {
		return fmt.Errorf("the server's task %s has an unknown status %q", t.TaskID, t.Status)
	}
	return nil
}

// Declare declares the extension in caps.
func Declare(caps *mcpsdk.ClientCapabilities) { caps.AddExtension(Extension, nil) }

// Register registers the extension's methods on c, so that [Get],
// [Update] and [Cancel] can send them.
func Register(c *mcpsdk.Client) error {
	return errors.Join(
		mcpsdk.AddSendingCustomMethod[*taskParams, *getResult](c, MethodGet),
		mcpsdk.AddSendingCustomMethod[*updateParams, *ackResult](c, MethodUpdate),
		mcpsdk.AddSendingCustomMethod[*taskParams, *ackResult](c, MethodCancel),
		mcpsdk.AddSendingCustomMethod[*taskParams, *mcpsdk.CallToolResult](c, MethodResult),
	)
}

type taskParams struct {
	mcpsdk.ParamsBase
	TaskID string `json:"taskId"`
}

type updateParams struct {
	mcpsdk.ParamsBase
	TaskID         string                  `json:"taskId"`
	InputResponses mcpsdk.InputResponseMap `json:"inputResponses"`
}

type getResult struct {
	mcpsdk.ResultBase
	Task
}

type ackResult struct {
	mcpsdk.ResultBase
}

// Get asks the server for the task's state (tasks/get).
func Get(ctx context.Context, cs *mcpsdk.ClientSession, id string) (*Task, error) {
	res, err := mcpsdk.CallCustomMethod[*taskParams, *getResult](ctx, cs, MethodGet, &taskParams{TaskID: id})
	if err != nil {
		return nil, err
	}
	t := &res.Task
	if t.TaskID == "" {
		t.TaskID = id
	}
	if t.TaskID != id {
		return nil, fmt.Errorf("tasks/get of %s answered for task %s", id, t.TaskID)
	}
	if err := t.check(); err != nil {
		return nil, err
	}
	return t, nil
}

// Update answers questions of an input_required task (tasks/update).
func Update(ctx context.Context, cs *mcpsdk.ClientSession, id string, responses mcpsdk.InputResponseMap) error {
	_, err := mcpsdk.CallCustomMethod[*updateParams, *ackResult](ctx, cs, MethodUpdate, &updateParams{TaskID: id, InputResponses: responses})
	return err
}

// Cancel asks the server to cancel the task (tasks/cancel). The task's
// end, cancelled or otherwise, is seen by the next tasks/get.
func Cancel(ctx context.Context, cs *mcpsdk.ClientSession, id string) error {
	_, err := mcpsdk.CallCustomMethod[*taskParams, *ackResult](ctx, cs, MethodCancel, &taskParams{TaskID: id})
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
	var t Task
	if err := json.Unmarshal(b, &t); err != nil {
		return nil, true, fmt.Errorf("the server's task: %w", err)
	}
	if err := t.check(); err != nil {
		return nil, true, err
	}
	return &t, true, nil
}
