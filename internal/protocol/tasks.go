package protocol

import (
	"encoding/json"
	"time"
)

// The MCP tasks a call started, as frontends see them (freecode/tasks and
// its notifications).

// TaskStatus is a task's state, as the MCP tasks extension names it.
type TaskStatus string

// The states of a task: working and inputRequired are live, the others
// final.
const (
	TaskWorking       TaskStatus = "working"
	TaskInputRequired TaskStatus = "input_required"
	TaskCompleted     TaskStatus = "completed"
	TaskFailed        TaskStatus = "failed"
	TaskCancelled     TaskStatus = "cancelled"
)

// TaskResult is what a completed task's tool returned, as a ToolResult
// has it (capped the same way).
type TaskResult struct {
	Content           []ContentBlock  `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent,omitempty"`
	IsError           bool            `json:"isError"`
	Truncated         *Truncated      `json:"truncated,omitempty"`
}

// TaskInfo is a task a call started (freecode/tasks, the params of
// freecode/tasks/changed, ToolResult.Task), as one frontend may see it. A
// task is the frontend's whose call started it, or that adopted it since
// (freecode/tasks/adopt): only that one is told its result, error and
// status message, and may cancel it. Any other is told that it runs.
type TaskInfo struct {
	Server string `json:"server"`
	// TaskID is the server's id of the task.
	TaskID string `json:"taskId"`
	// Tool is the server's name of the tool; CallID the call's id.
	Tool          string     `json:"tool"`
	CallID        string     `json:"callId"`
	Status        TaskStatus `json:"status"`
	StatusMessage string     `json:"statusMessage,omitempty"`
	CreatedAt     time.Time  `json:"createdAt"`
	UpdatedAt     time.Time  `json:"updatedAt"`
	// Result is a completed task's result.
	Result *TaskResult `json:"result,omitempty"`
	// Error says why a task failed.
	Error string `json:"error,omitempty"`
	// Mine says the task is the frontend's that is told of it.
	Mine bool `json:"mine,omitempty"`
}
