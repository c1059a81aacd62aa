package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/freecode/freecode/internal/termtext"
	"github.com/freecode/freecode/orchestrator"
	"github.com/freecode/freecode/workspace"
)

// awaitTask waits for the end of the task the call of res started, showing
// each change of it on stderr, and returns the call's final result: the
// task's result, or an error result saying how it ended. When ctx ends
// (Ctrl-C) the task is cancelled on its server.
func awaitTask(ctx context.Context, w *workspace.Workspace, res orchestrator.ToolResult, asker orchestrator.Asker, stderr io.Writer) orchestrator.ToolResult {
	t, start := *res.Task, time.Now()
	fmt.Fprintf(stderr, "running as task %s on %s; waiting for its end (Ctrl-C cancels it)\n", termtext.Escape(t.ID), termtext.Escape(t.Server))
	final := w.AwaitTask(ctx, t, res.CallID, asker, func(ti workspace.TaskInfo) {
		line := "task " + string(ti.Status)
		if ti.StatusMessage != "" {
			line += ": " + ti.StatusMessage
		}
		fmt.Fprintf(stderr, "progress: %s\n", termtext.Escape(line))
	})
	final.DurationMs = res.DurationMs + time.Since(start).Milliseconds()
	final.Decision = res.Decision
	return final
}
