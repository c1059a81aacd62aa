package main

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/freecode/freecode/internal/mcptasks"
)

const longBuildSchema = `{
  "type": "object",
  "properties": {
    "steps": {"type": "integer", "minimum": 1, "maximum": 20, "default": 4},
    "seconds": {"type": "number", "minimum": 0, "maximum": 600, "default": 4},
    "ask": {"type": "boolean", "default": true, "description": "ask whether to publish the build once it passes"}
  },
  "additionalProperties": false
}`

// taskConfig is what the command line asks of tasks.
type taskConfig struct {
	tools    bool   // serve long_build
	dir      string // keep tasks there ("" in memory)
	fixtures bool   // serve the conformance suite's task fixtures
}

// addTasks gives s the tasks extension, with the tools tc asks for; the
// returned stop ends the running tasks' work. Without any it does nothing.
func addTasks(s *mcp.Server, tc taskConfig) (stop func(), err error) {
	if !tc.tools && !tc.fixtures {
		return func() {}, nil
	}
	e, err := mcptasks.New(s, mcptasks.Options{Dir: tc.dir, PollInterval: 500 * time.Millisecond})
	if err != nil {
		return nil, err
	}
	if tc.tools {
		addTaskTools(e)
	}
	if tc.fixtures {
		mcptasks.AddFixtures(e)
	}
	e.Resume()
	return e.Close, nil
}

// addTaskTools adds the tools that run as MCP tasks for a client that
// declares the tasks extension (and in the call for one that does not).
func addTaskTools(e *mcptasks.Engine) {
	t := &mcp.Tool{
		Name:        "long_build",
		Description: "Run a simulated build in the background (an MCP task): a status message a step, then it asks whether to publish.",
		Annotations: &mcp.ToolAnnotations{DestructiveHint: ptr(false), OpenWorldHint: ptr(false)},
	}
	check := compileSchema(t, longBuildSchema)
	e.AddTool(t, mcptasks.Optional, func(ctx context.Context, task *mcptasks.Task, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		raw, bad := check(req.Params.Arguments)
		if bad != nil {
			return bad, nil
		}
		args := struct {
			Steps   int     `json:"steps"`
			Seconds float64 `json:"seconds"`
			Ask     *bool   `json:"ask"`
		}{Steps: 4, Seconds: 4}
		if err := json.Unmarshal(raw, &args); err != nil {
			return toolError(err), nil
		}
		step := time.Duration(args.Seconds * float64(time.Second) / float64(args.Steps))
		for i := 1; i <= args.Steps; i++ {
			task.SetStatus(fmt.Sprintf("step %d/%d", i, args.Steps))
			select {
			case <-time.After(step):
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		verdict := "not published"
		if args.Ask == nil || *args.Ask {
			task.SetStatus("waiting for an answer: publish?")
			r, err := task.Elicit(ctx, &mcp.ElicitParams{
				Message: fmt.Sprintf("The build passed (%d steps). Publish its artifacts?", args.Steps),
				RequestedSchema: map[string]any{
					"type":       "object",
					"properties": map[string]any{"publish": map[string]any{"type": "boolean", "title": "Publish"}},
					"required":   []string{"publish"},
				},
			})
			switch {
			case ctx.Err() != nil:
				return nil, ctx.Err()
			case err != nil:
				verdict = "not published (could not ask: " + err.Error() + ")"
			case r.Action == "accept" && r.Content["publish"] == true:
				verdict = "published"
			default:
				verdict = "not published (" + r.Action + ")"
			}
		}
		return text(fmt.Sprintf("build passed: %d steps in %gs; %s", args.Steps, args.Seconds, verdict)), nil
	})
}
