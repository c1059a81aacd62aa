package orchestrator

import (
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// A call's server may run it as a task (MCP's tasks extension): it answers
// at once that the work goes on, and the outcome comes later. What becomes
// of such a call is the batch's choice (ExecOptions.Tasks); the Runner,
// which alone knows the server's answer, acts on it and says so in the
// call's Outcome. The permission gate and the definition under review are
// settled before the call is made, as for any call: a task starts only
// once they allowed it.

// TaskMode is what a batch does with a call its server runs as a task.
type TaskMode int

const (
	// TasksAwaited: the call waits for the task's end, within its
	// timeouts, as for any call; a call given up cancels the task.
	TasksAwaited TaskMode = iota
	// TasksTracked: the call's result says at once that it runs as a
	// task (ToolResult.Task), and the Runner's side follows the task to
	// its end apart from the batch, which goes on.
	TasksTracked
	// TasksReturned: as TasksTracked, but nobody follows the task: the
	// caller does (FreeCode's MCP server hands it to its own client).
	TasksReturned
)

// Task is a call that runs as a task on its server.
type Task struct {
	Server string
	// ID is the server's id of the task; Tool the server's name of the tool.
	ID   string
	Tool string
	// Status and StatusMessage are what the server said when it started
	// it, at CreatedAt.
	Status        string
	StatusMessage string
	CreatedAt     time.Time
}

// TaskResult is the result of a call that ran as a task, once the task
// completed with res: capped as any call's result is.
func (o *Orchestrator) TaskResult(callID string, res *mcpsdk.CallToolResult) ToolResult {
	r := ToolResult{
		CallID:            callID,
		Content:           res.Content,
		StructuredContent: res.StructuredContent,
		IsError:           res.IsError,
		Decision:          DecisionAllowed,
	}
	if r.Content == nil {
		r.Content = []mcpsdk.Content{}
	}
	o.capResult(&r)
	return r
}
