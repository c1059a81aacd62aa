package mcpserve

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/freecode/freecode/internal/mcpwire"
	"github.com/freecode/freecode/orchestrator"
)

// The gateway passes its servers' tasks (MCP's tasks extension) through to
// a client that declares the extension on its call: the call goes through
// the orchestrator as any call (the permission decision, pinning and the
// rest are settled before the call is made, so a denied call starts no
// task), and when the server answers it with a task the orchestrator hands
// that task back (orchestrator.TasksReturned) instead of following it. The
// client gets a task whose id names the server and the server's task
// ("<server>.<id>": a server name has no "."), and its tasks/get,
// tasks/update and tasks/cancel reach the server's task through the
// workspace. A client that does not declare the extension gets the call's
// end, which the workspace waits for.

// startedTask is the key under which the tool handler of a call that
// became a task hands the task (an *orchestrator.Task) to tasksMiddleware,
// in its result's _meta: the middleware answers with the task instead, and
// takes the key out, so that it never reaches the client.
const startedTask = "freecode/startedTask"

// tasksMiddleware answers a declaring client's tools/call that became a
// task with the task, and advertises the extension.
func (s *Server) tasksMiddleware(next mcpsdk.MethodHandler) mcpsdk.MethodHandler {
	return func(ctx context.Context, method string, req mcpsdk.Request) (mcpsdk.Result, error) {
		res, err := next(ctx, method, req)
		switch method {
		case "tools/call":
			if t := takeStartedTask(res); t != nil && err == nil {
				return s.createTaskResult(ctx, t), nil
			}
		case "server/discover", "initialize":
			mcpwire.AdvertiseTasks(res)
		}
		return res, err
	}
}

// takeStartedTask takes out of a tools/call result the task its call
// started (call in tools.go), nil for none.
func takeStartedTask(res mcpsdk.Result) *orchestrator.Task {
	r, ok := res.(*mcpsdk.CallToolResult)
	if !ok || r == nil {
		return nil
	}
	t, _ := r.Meta[startedTask].(*orchestrator.Task)
	delete(r.Meta, startedTask)
	return t
}

// taskMode is what the call req does with a task: hand it to the client
// when the client declared the extension, else wait for its end.
func taskMode(req *mcpsdk.CallToolRequest) orchestrator.TaskMode {
	if mcpwire.TasksDeclared(req.Params.GetMeta(), req.Session) {
		return orchestrator.TasksReturned
	}
	return orchestrator.TasksAwaited
}

// createTaskResult is the answer of a call that became the task t on its
// server: the server's task as it stands now, under the gateway's id.
func (s *Server) createTaskResult(ctx context.Context, t *orchestrator.Task) mcpsdk.Result {
	var info mcpwire.Task
	// The server's answer to the call was folded into a result the
	// orchestrator does not keep whole: ask for the rest, keeping the
	// status it answered with (the task may have moved on since; the
	// client's first tasks/get sees where).
	if cur, err := s.ws.GetTask(ctx, t.Server, t.ID); err == nil {
		info = cur.Head()
	} else {
		s.logger.Debug("reading a task just started", "server", t.Server, "task", t.ID, "err", err)
		now := time.Now().UTC().Format(time.RFC3339Nano)
		info.CreatedAt, info.LastUpdatedAt = now, now
	}
	info.TaskID = gatewayTaskID(t.Server, t.ID)
	info.Status, info.StatusMessage = mcpwire.TaskStatus(t.Status), t.StatusMessage
	if info.Status == "" {
		info.Status = mcpwire.TaskWorking
	}
	return &mcpwire.TaskResult{ResultType: "task", Task: info}
}

// gatewayTaskID is the id the gateway's client knows the task id of server
// by.
func gatewayTaskID(server, id string) string { return server + "." + id }

// serverTask splits a gateway task id into its server and the server's id.
func serverTask(id string) (server, taskID string, err error) {
	server, taskID, ok := strings.Cut(id, ".")
	if !ok || server == "" || taskID == "" {
		return "", "", mcpwire.UnknownTask(id)
	}
	return server, taskID, nil
}

// addTaskMethods serves tasks/get, tasks/update and tasks/cancel by the
// server's task each names.
func (s *Server) addTaskMethods() error {
	return errors.Join(
		mcpsdk.AddReceivingCustomMethod(s.mcp, mcpwire.MethodGetTask, s.getTask),
		mcpsdk.AddReceivingCustomMethod(s.mcp, mcpwire.MethodUpdateTask, s.updateTask),
		mcpsdk.AddReceivingCustomMethod(s.mcp, mcpwire.MethodCancelTask, s.cancelTask),
	)
}

func (s *Server) getTask(ctx context.Context, ss *mcpsdk.ServerSession, p *mcpwire.TaskParams) (*mcpwire.TaskResult, error) {
	if err := mcpwire.RequireTasks(mcpwire.MethodGetTask, p.GetMeta(), ss); err != nil {
		return nil, err
	}
	server, id, err := serverTask(p.TaskID)
	if err != nil {
		return nil, err
	}
	t, err := s.ws.GetTask(ctx, server, id)
	if err != nil {
		return nil, upstreamError(err)
	}
	d := *t // the server's task as it told it, under the gateway's id
	d.TaskID = gatewayTaskID(server, t.TaskID)
	if t.Result != nil {
		res := *t.Result
		res.Meta = mcpsdk.Meta{"freecode/decision": string(orchestrator.DecisionAllowed)}
		d.Result = &res
	}
	return &mcpwire.TaskResult{ResultType: "complete", Task: d}, nil
}

func (s *Server) updateTask(ctx context.Context, ss *mcpsdk.ServerSession, p *mcpwire.UpdateTaskParams) (*mcpwire.AckResult, error) {
	if err := mcpwire.RequireTasks(mcpwire.MethodUpdateTask, p.GetMeta(), ss); err != nil {
		return nil, err
	}
	server, id, err := serverTask(p.TaskID)
	if err != nil {
		return &mcpwire.AckResult{ResultType: "complete"}, nil // as the spec has it for any unknown task
	}
	var responses mcpsdk.InputResponseMap
	raw, err := json.Marshal(p.InputResponses)
	if err == nil {
		err = json.Unmarshal(raw, &responses)
	}
	if err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "inputResponses: " + err.Error()}
	}
	if err := s.ws.UpdateTask(ctx, server, id, responses); err != nil {
		return nil, upstreamError(err)
	}
	return &mcpwire.AckResult{ResultType: "complete"}, nil
}

func (s *Server) cancelTask(ctx context.Context, ss *mcpsdk.ServerSession, p *mcpwire.TaskParams) (*mcpwire.AckResult, error) {
	if err := mcpwire.RequireTasks(mcpwire.MethodCancelTask, p.GetMeta(), ss); err != nil {
		return nil, err
	}
	server, id, err := serverTask(p.TaskID)
	if err != nil {
		return nil, err
	}
	if err := s.ws.CancelServerTask(ctx, server, id); err != nil {
		return nil, upstreamError(err)
	}
	return &mcpwire.AckResult{ResultType: "complete"}, nil
}

// upstreamError is the error a task method answers with when the server's
// own failed: its JSON-RPC error as it is (an unknown task stays -32602),
// else an internal error saying why.
func upstreamError(err error) error {
	if je, ok := errors.AsType[*jsonrpc.Error](err); ok {
		return je
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
}
