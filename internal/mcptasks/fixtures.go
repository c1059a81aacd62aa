package mcptasks

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// AddFixtures adds to e's server the tools the MCP conformance suite's
// tasks-* server scenarios call, with the behaviour they expect of them,
// for the test servers that run those scenarios (internal/mcptest's and
// examples/demo-server):
//
//	greet {name}                  not a task: "Hello, <name>!"
//	slow_compute {seconds, label?} a task (Optional) that works seconds, then
//	                              "computed <label> in <seconds>s"
//	failing_job {}                a task (Required) ending after 100ms with a tool error
//	protocol_error_job {}         a task (Optional) whose handler panics: failed, -32603
//	confirm_delete {filename}     a task (Optional) that asks to confirm, then
//	                              "deleted <filename>" or "kept <filename>"
//	multi_input {}                a task (Optional) asking two questions at once
//	test_tool_with_task {}        asks user_name in the call (input_required),
//	                              then a task (Required): "Hello, <name>, from a task"
func AddFixtures(e *Engine) {
	e.server.AddTool(&mcpsdk.Tool{
		Name:        "greet",
		Description: "Greets name (never a task).",
		InputSchema: objectSchema(map[string]any{"name": map[string]any{"type": "string"}}, "name"),
	}, func(_ context.Context, req *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
		var args struct{ Name string }
		if err := json.Unmarshal(req.Params.Arguments, &args); err != nil {
			return nil, err
		}
		return textResult(fmt.Sprintf("Hello, %s!", args.Name)), nil
	})

	e.AddTool(&mcpsdk.Tool{
		Name:        "slow_compute",
		Description: "Works for seconds (a task for clients of the tasks extension), then says so.",
		InputSchema: objectSchema(map[string]any{
			"seconds": map[string]any{"type": "number", "minimum": 0},
			"label":   map[string]any{"type": "string"},
		}, "seconds"),
	}, Optional, func(ctx context.Context, t *Task, req *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
		var args struct {
			Seconds float64
			Label   string
		}
		if err := json.Unmarshal(req.Params.Arguments, &args); err != nil {
			return nil, err
		}
		t.SetStatus(fmt.Sprintf("computing %s for %gs", args.Label, args.Seconds))
		select {
		case <-time.After(time.Duration(args.Seconds * float64(time.Second))):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return textResult(fmt.Sprintf("computed %s in %gs", args.Label, args.Seconds)), nil
	})

	e.AddTool(&mcpsdk.Tool{
		Name:        "failing_job",
		Description: "A task that ends with a tool error.",
		InputSchema: objectSchema(nil),
	}, Required, func(ctx context.Context, t *Task, _ *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
		t.SetStatus("about to fail")
		select {
		case <-time.After(100 * time.Millisecond):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		res := textResult("the job failed, as it always does")
		res.IsError = true
		return res, nil
	})

	e.AddTool(&mcpsdk.Tool{
		Name:        "protocol_error_job",
		Description: "A task whose handler panics: it fails with a JSON-RPC error.",
		InputSchema: objectSchema(nil),
	}, Optional, func(context.Context, *Task, *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
		panic("protocol_error_job always panics")
	})

	e.AddTool(&mcpsdk.Tool{
		Name:        "confirm_delete",
		Description: "Asks to confirm deleting filename (nothing is deleted).",
		InputSchema: objectSchema(map[string]any{"filename": map[string]any{"type": "string"}}, "filename"),
	}, Optional, func(ctx context.Context, t *Task, req *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
		var args struct{ Filename string }
		if err := json.Unmarshal(req.Params.Arguments, &args); err != nil {
			return nil, err
		}
		r, err := t.Elicit(ctx, &mcpsdk.ElicitParams{
			Message:         fmt.Sprintf("Delete %s?", args.Filename),
			RequestedSchema: objectSchema(map[string]any{"confirm": map[string]any{"type": "boolean"}}, "confirm"),
		})
		if err != nil {
			return nil, err
		}
		if r.Action == "accept" && r.Content["confirm"] == true {
			return textResult("deleted " + args.Filename), nil
		}
		return textResult(fmt.Sprintf("kept %s (%s)", args.Filename, r.Action)), nil
	})

	e.AddTool(&mcpsdk.Tool{
		Name:        "multi_input",
		Description: "Asks two questions at once, then reports both answers.",
		InputSchema: objectSchema(nil),
	}, Optional, func(ctx context.Context, t *Task, _ *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
		schema := objectSchema(map[string]any{"name": map[string]any{"type": "string"}}, "name")
		type answer struct {
			r   *mcpsdk.ElicitResult
			err error
		}
		var answers [2]chan answer
		for i := range answers {
			answers[i] = make(chan answer, 1)
			go func() {
				r, err := t.Elicit(ctx, &mcpsdk.ElicitParams{Message: fmt.Sprintf("Name %d?", i+1), RequestedSchema: schema})
				answers[i] <- answer{r, err}
			}()
		}
		var names [2]any
		for i, ch := range answers {
			a := <-ch
			if a.err != nil {
				return nil, a.err
			}
			names[i] = a.r.Content["name"]
		}
		return textResult(fmt.Sprintf("got %v and %v", names[0], names[1])), nil
	})

	nameSchema := objectSchema(map[string]any{"name": map[string]any{"type": "string"}}, "name")
	e.AddGatedTool(&mcpsdk.Tool{
		Name:        "test_tool_with_task",
		Description: "Asks a name in the call, then greets it from a task.",
		InputSchema: objectSchema(nil),
	}, Required, func(_ context.Context, req *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
		if _, ok := req.Params.InputResponses["user_name"].(*mcpsdk.ElicitResult); ok {
			return nil, nil
		}
		return &mcpsdk.CallToolResult{InputRequests: mcpsdk.InputRequestMap{
			"user_name": &mcpsdk.ElicitParams{Message: "Your name?", RequestedSchema: nameSchema},
		}}, nil
	}, func(ctx context.Context, t *Task, req *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
		r, _ := req.Params.InputResponses["user_name"].(*mcpsdk.ElicitResult)
		if r == nil || r.Action != "accept" {
			return textResult("no name given"), nil
		}
		t.SetStatus("greeting")
		select {
		case <-time.After(100 * time.Millisecond):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return textResult(fmt.Sprintf("Hello, %v, from a task", r.Content["name"])), nil
	})
}

func objectSchema(props map[string]any, required ...string) map[string]any {
	s := map[string]any{"type": "object"}
	if props != nil {
		s["properties"] = props
	}
	if len(required) > 0 {
		s["required"] = required
	}
	return s
}

func textResult(text string) *mcpsdk.CallToolResult {
	return &mcpsdk.CallToolResult{Content: []mcpsdk.Content{&mcpsdk.TextContent{Text: text}}}
}
