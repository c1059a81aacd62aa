package workspace

import (
	"context"
	"errors"
	"fmt"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/freecode/freecode/mcp"
	"github.com/freecode/freecode/mcp/oauth"
	"github.com/freecode/freecode/mcp/tasks"
	"github.com/freecode/freecode/orchestrator"
)

// The orchestrator declares what it needs of whatever runs a tool
// (orchestrator.Runner) and the errors it tells apart; this file is the
// one place that meets those with the MCP client: a server's tools run
// through the Manager's Conn, and mcp's errors say what became of a call
// in the orchestrator's terms.

// serverRunner runs the tools of one MCP server through whatever Conn the
// Manager holds for it at call time, so a restarted server's new Conn is
// used without its tools being registered anew.
type serverRunner struct {
	server string
	mgr    *mcp.Manager
	tasks  *taskTracker
	tel    *mcp.Telemetry // nil: no spans of the MCP requests
}

var _ orchestrator.Runner = (*serverRunner)(nil)

// runner returns the Runner of server's tools.
func (w *Workspace) runner(server string) orchestrator.Runner {
	return &serverRunner{server: server, mgr: w.mgr, tasks: w.tasks, tel: w.tel}
}

// CallTool makes call on the server, starting a server on demand first,
// within the call's deadline. What the server asks during the call goes
// to the call's Asker, with its id. A call the server runs as a task is
// what call.Tasks says (tasks.go).
func (r *serverRunner) CallTool(ctx context.Context, call orchestrator.Call) (orchestrator.Outcome, error) {
	conn, release, err := r.mgr.Acquire(ctx, r.server)
	if err != nil {
		return orchestrator.Outcome{}, callError(fmt.Errorf("starting %s for %s: %w", r.server, call.Name, err))
	}
	defer release()
	// An orchestrator.Asker is an mcp.Asker as it is: the two interfaces
	// have the same methods, each declared by its consumer.
	opts := &mcp.CallOptions{ID: call.ID, Asker: call.Asker, TakeTasks: call.Tasks != orchestrator.TasksAwaited,
		Trace: call.Trace, Telemetry: r.tel}
	if onProgress := call.OnProgress; onProgress != nil {
		opts.OnProgress = func(p mcp.Progress) {
			onProgress(orchestrator.Progress{Progress: p.Progress, Total: p.Total, Message: p.Message})
		}
	}
	res, err := conn.CallTool(ctx, call.Name, call.Args, opts)
	if err != nil || !opts.TakeTasks {
		return orchestrator.Outcome{Result: res}, callError(err)
	}
	t, isTask, _ := tasks.Of(res) // an unreadable one is CallTool's error
	if !isTask {
		return orchestrator.Outcome{Result: res}, nil
	}
	created := time.Now()
	if at, err := time.Parse(time.RFC3339Nano, t.CreatedAt); err == nil {
		created = at
	}
	if call.Tasks == orchestrator.TasksTracked {
		r.tasks.start(r.server, call.Name, call.ID, call.Asker, t, created)
	}
	return orchestrator.Outcome{
		Result: &mcpsdk.CallToolResult{
			Content: []mcpsdk.Content{&mcpsdk.TextContent{Text: TaskStartedText(t.TaskID)}},
			Meta:    res.Meta, // the server's task, whole: tasks.Of reads it
		},
		Task: &orchestrator.Task{Server: r.server, ID: t.TaskID, Tool: call.Name, Status: string(t.Status), StatusMessage: t.StatusMessage, CreatedAt: created},
	}, nil
}

// TaskStartedText is the text of the result of a call that runs as a task.
func TaskStartedText(id string) string { return "running as task " + id }

// Ready starts the server if it runs on demand and is idle (or failed),
// and waits within ctx until it is connected with its tools registered.
func (r *serverRunner) Ready(ctx context.Context) (func(), error) {
	conn, release, err := r.mgr.Acquire(ctx, r.server)
	if err != nil {
		return func() {}, callError(fmt.Errorf("starting %s: %w", r.server, err))
	}
	if err := conn.Wait(ctx); err != nil {
		release()
		return func() {}, callError(err)
	}
	return release, nil
}

// ToolTimeout is the server's toolTimeout, as its Conn runs it.
func (r *serverRunner) ToolTimeout() time.Duration {
	if conn, ok := r.mgr.Conn(r.server); ok {
		return conn.Config().ToolTimeout
	}
	return 0
}

// callError returns err as the orchestrator tells errors apart: wrapping
// orchestrator.ErrConnectionLost for mcp.ErrConnectionLost,
// orchestrator.ErrNotConnected for mcp.ErrNotConnected, and an
// *orchestrator.RefusedError for oauth.ErrNeedsAuth, while it still wraps
// mcp's errors, which those who test for them keep finding, and reads as
// it did.
func callError(err error) error {
	if err == nil {
		return nil
	}
	var kinds []error
	if errors.Is(err, mcp.ErrConnectionLost) {
		kinds = append(kinds, orchestrator.ErrConnectionLost)
	}
	if errors.Is(err, mcp.ErrNotConnected) {
		kinds = append(kinds, orchestrator.ErrNotConnected)
	}
	if len(kinds) > 0 {
		err = &mappedError{err: err, kinds: kinds}
	}
	if errors.Is(err, oauth.ErrNeedsAuth) {
		err = &orchestrator.RefusedError{Reason: oauth.Reason(err), Err: err}
	}
	return err
}

// mappedError is an mcp error that also wraps the orchestrator's errors
// of the same meaning.
type mappedError struct {
	err   error
	kinds []error
}

func (e *mappedError) Error() string { return e.err.Error() }

func (e *mappedError) Unwrap() []error { return append([]error{e.err}, e.kinds...) }
