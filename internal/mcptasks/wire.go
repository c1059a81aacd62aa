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
// The package imports the go-sdk and internal/atomicfile only, so the test
// servers in internal/mcptest and examples/demo-server share it.
package mcptasks

import (
	"encoding/json"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Extension is the extension's identifier, under capabilities.extensions
// on both sides.
const Extension = "io.modelcontextprotocol/tasks"

// The methods of the extension.
const (
	MethodGet    = "tasks/get"
	MethodUpdate = "tasks/update"
	MethodCancel = "tasks/cancel"
)

// Error codes the extension answers with (besides -32602 for a task id the
// server does not know).
const (
	// CodeMissingCapability answers a task method, or a call of a tool
	// that only runs as a task, from a client that did not declare the
	// extension on the request.
	CodeMissingCapability = -32021
	// CodeHeaderMismatch answers an HTTP request whose Mcp-Name header is
	// not the task id of its body.
	CodeHeaderMismatch = -32020
)

// A Status is a task's state. Working and InputRequired are live; the
// others are terminal and never change again.
type Status string

const (
	Working       Status = "working"
	InputRequired Status = "input_required"
	Completed     Status = "completed"
	Failed        Status = "failed"
	Cancelled     Status = "cancelled"
)

// Terminal reports whether s is a final state.
func (s Status) Terminal() bool { return s == Completed || s == Failed || s == Cancelled }

// TaskInfo is the wire shape every task message carries.
type TaskInfo struct {
	TaskID        string `json:"taskId"`
	Status        Status `json:"status"`
	StatusMessage string `json:"statusMessage,omitempty"`
	CreatedAt     string `json:"createdAt"`
	LastUpdatedAt string `json:"lastUpdatedAt"`
	// TTLMs is how long after CreatedAt the server keeps the task, in
	// milliseconds; null means for as long as it runs.
	TTLMs          *int64 `json:"ttlMs"`
	PollIntervalMs int64  `json:"pollIntervalMs,omitempty"`
}

// DetailedTask is a task with what its state holds: the questions of an
// input_required task, the tool result of a completed one, the JSON-RPC
// error of a failed one.
type DetailedTask struct {
	TaskInfo
	InputRequests map[string]json.RawMessage `json:"inputRequests,omitempty"`
	Result        json.RawMessage            `json:"result,omitempty"`
	Error         *WireError                 `json:"error,omitempty"`
}

// WireError is a JSON-RPC error object.
type WireError struct {
	Code    int64           `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// CreateTaskResult answers a tools/call that became a task.
type CreateTaskResult struct {
	mcpsdk.ResultBase
	ResultType string `json:"resultType"` // "task"
	TaskInfo
}

// GetResult answers tasks/get.
type GetResult struct {
	mcpsdk.ResultBase
	ResultType string `json:"resultType"` // "complete"
	DetailedTask
}

// inputRequiredResult answers a gated call that needs input first.
type inputRequiredResult struct {
	mcpsdk.ResultBase
	ResultType    string                 `json:"resultType"` // "input_required"
	InputRequests mcpsdk.InputRequestMap `json:"inputRequests"`
	RequestState  string                 `json:"requestState,omitempty"`
}

// AckResult is the empty answer to tasks/update and tasks/cancel.
type AckResult struct {
	mcpsdk.ResultBase
	ResultType string `json:"resultType"` // "complete"
}

// GetParams are the params of tasks/get and tasks/cancel.
type GetParams struct {
	mcpsdk.ParamsBase
	TaskID string `json:"taskId"`
}

// UpdateParams are the params of tasks/update: answers to the questions an
// input_required task asks, by their keys.
type UpdateParams struct {
	mcpsdk.ParamsBase
	TaskID         string                     `json:"taskId"`
	InputResponses map[string]json.RawMessage `json:"inputResponses"`
}
