package mcpwire

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The tasks extension (io.modelcontextprotocol/tasks, SEP-2663, on the
// 2026-07-28 revision), as both sides put it on the wire: the client
// (mcp/tasks), the gateway that passes its servers' tasks on (mcpserve),
// and the task engine of the test and demo servers (internal/mcptasks).
// The go-sdk has none of it.

// TasksExtension is the extension's identifier, under
// capabilities.extensions on both sides.
const TasksExtension = "io.modelcontextprotocol/tasks"

// The extension's methods.
const (
	MethodGetTask    = "tasks/get"
	MethodUpdateTask = "tasks/update"
	MethodCancelTask = "tasks/cancel"
)

// Error codes the extension answers with (besides -32602 for a task id the
// server does not know, [UnknownTask]).
const (
	// CodeMissingCapability answers a task method, or a call of a tool
	// that only runs as a task, from a client that did not declare the
	// extension on the request.
	CodeMissingCapability = -32021
	// CodeHeaderMismatch answers an HTTP request whose Mcp-Name header is
	// not the task id of its body.
	CodeHeaderMismatch = -32020
)

// A TaskStatus is a task's state: TaskWorking and TaskInputRequired are
// live, the others final.
type TaskStatus string

const (
	TaskWorking       TaskStatus = "working"
	TaskInputRequired TaskStatus = "input_required"
	TaskCompleted     TaskStatus = "completed"
	TaskFailed        TaskStatus = "failed"
	TaskCancelled     TaskStatus = "cancelled"
)

// Terminal reports whether s is a final state, which never changes again.
func (s TaskStatus) Terminal() bool {
	return s == TaskCompleted || s == TaskFailed || s == TaskCancelled
}

// Valid reports whether s is one of the extension's states.
func (s TaskStatus) Valid() bool { return s == TaskWorking || s == TaskInputRequired || s.Terminal() }

// A Task is a task as the extension's messages carry it: the task of a
// CreateTaskResult (TaskID to PollIntervalMs, [Task.Head]), and the
// DetailedTask of tasks/get, which adds what its state holds.
type Task struct {
	TaskID        string     `json:"taskId"`
	Status        TaskStatus `json:"status"`
	StatusMessage string     `json:"statusMessage,omitempty"`
	CreatedAt     string     `json:"createdAt"`
	LastUpdatedAt string     `json:"lastUpdatedAt"`
	// TTLMs is how long after CreatedAt the server keeps the task, in
	// milliseconds; null: for as long as it runs.
	TTLMs *int64 `json:"ttlMs"`
	// PollIntervalMs is how often the server would have the task polled.
	PollIntervalMs *int64 `json:"pollIntervalMs,omitempty"`

	// InputRequests are an input_required task's questions by key, each
	// {method, params} (elicitation/create, sampling/createMessage, ...).
	InputRequests map[string]json.RawMessage `json:"inputRequests,omitempty"`
	// Result is a completed task's tool result (a tool error too, IsError).
	Result *mcpsdk.CallToolResult `json:"result,omitempty"`
	// Error is a failed task's JSON-RPC error.
	Error *jsonrpc.Error `json:"error,omitempty"`
}

// Head returns t without what its state holds (InputRequests, Result,
// Error): the task as a CreateTaskResult carries it.
func (t Task) Head() Task {
	t.InputRequests, t.Result, t.Error = nil, nil, nil
	return t
}

// Failure says why a failed task failed, in a line: its JSON-RPC error,
// else the text of its result (a tool error), else its status message.
func (t *Task) Failure() string {
	if t.Error == nil {
		if text := resultText(t.Result); text != "" {
			return text
		}
		if t.StatusMessage != "" {
			return t.StatusMessage
		}
		return "the server gave no reason"
	}
	return fmt.Sprintf("%s (JSON-RPC error %d)", t.Error.Message, t.Error.Code)
}

// resultText is the text of a result's text content, on one line.
func resultText(res *mcpsdk.CallToolResult) string {
	if res == nil {
		return ""
	}
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcpsdk.TextContent); ok && tc.Text != "" {
			parts = append(parts, strings.Join(strings.Fields(tc.Text), " "))
		}
	}
	return strings.Join(parts, " ")
}

// TaskParams are the params of tasks/get and tasks/cancel.
type TaskParams struct {
	mcpsdk.ParamsBase
	TaskID string `json:"taskId"`
}

// UpdateTaskParams are the params of tasks/update: answers to the
// questions an input_required task asks, by their keys, each as it was
// sent (a server reads each answer apart, and drops those it did not ask).
type UpdateTaskParams struct {
	mcpsdk.ParamsBase
	TaskID         string                     `json:"taskId"`
	InputResponses map[string]json.RawMessage `json:"inputResponses"`
}

// TaskResult is an answer that holds a task: a tools/call's that became
// one (ResultType "task", the task's Head), or tasks/get's ("complete").
type TaskResult struct {
	mcpsdk.ResultBase
	ResultType string `json:"resultType"`
	Task
}

// AckResult is the empty answer to tasks/update and tasks/cancel.
type AckResult struct {
	mcpsdk.ResultBase
	ResultType string `json:"resultType"` // "complete"
}

// AdvertiseTasks adds the extension to the capabilities of a
// server/discover or initialize result (others are left alone).
func AdvertiseTasks(res mcpsdk.Result) {
	switch r := res.(type) {
	case *mcpsdk.DiscoverResult:
		if r.Capabilities != nil {
			r.Capabilities.AddExtension(TasksExtension, nil)
		}
	case *mcpsdk.InitializeResult:
		if r.Capabilities != nil {
			r.Capabilities.AddExtension(TasksExtension, nil)
		}
	}
}

// TasksDeclared reports whether a request with meta, of session, declares
// the extension: in its _meta (2026-07-28, which then says all), else in
// the session's initialize (older revisions).
func TasksDeclared(meta map[string]any, session mcpsdk.Session) bool {
	if caps, ok := meta[mcpsdk.MetaKeyClientCapabilities]; ok {
		c, _ := caps.(map[string]any)
		ext, _ := c["extensions"].(map[string]any)
		_, ok := ext[TasksExtension]
		return ok
	}
	ss, ok := session.(*mcpsdk.ServerSession)
	if !ok || ss == nil {
		return false
	}
	ip := ss.InitializeParams()
	if ip == nil || ip.Capabilities == nil {
		return false
	}
	_, ok = ip.Capabilities.Extensions[TasksExtension]
	return ok
}

// RequireTasks returns the error a request of a task method answers with
// when it does not declare the extension (TasksDeclared), or nil.
func RequireTasks(method string, meta map[string]any, session mcpsdk.Session) error {
	if TasksDeclared(meta, session) {
		return nil
	}
	return MissingTasksCapability(method + " needs the " + TasksExtension + " extension declared")
}

// MissingTasksCapability is the -32021 error for a request that needs the
// extension declared, saying which in its data.
func MissingTasksCapability(msg string) error {
	data, _ := json.Marshal(map[string]any{"requiredCapabilities": map[string]any{"extensions": map[string]any{TasksExtension: map[string]any{}}}})
	return &jsonrpc.Error{Code: CodeMissingCapability, Message: msg, Data: data}
}

// UnknownTask is the -32602 error for a task id the server does not know.
func UnknownTask(id string) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown task %q", id)}
}
