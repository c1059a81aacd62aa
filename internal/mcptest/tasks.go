package mcptest

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"sync"
	"testing"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/freecode/freecode/internal/mcptasks"
)

// TasksServerEnv, set in a server entry's env, makes the test binary (whose
// TestMain calls RunTasksServerIfAsked) a stdio MCP server of the tasks
// extension (see NewTasksServer). Its value is the directory the server
// keeps its tasks in, so that the process started after a crash still
// answers for them; TasksForget instead keeps them in memory, and the
// process after a crash has forgotten them.
const TasksServerEnv = "FREECODE_MCPTEST_TASKSERVER"

// TasksForget, as TasksServerEnv's value, makes a tasks server that keeps
// its tasks in memory only.
const TasksForget = "forget"

// NewTasksServer returns a go-sdk server called "tasky" whose tools run as
// tasks (io.modelcontextprotocol/tasks) for a client that declares the
// extension, its engine, which keeps the tasks in dir (or in memory when
// dir is ""), with pollIntervalMs 50. Its tools are the conformance
// suite's fixtures (see mcptasks.AddFixtures: greet, slow_compute,
// failing_job, protocol_error_job, confirm_delete, multi_input) and
//
//	hold {release: path}  a task (Optional) working, with statusMessage
//	                      "holding until <path> exists", until a file exists
//	                      at path; then "released <path> (run <n>)", n
//	                      counting the processes that ran it
//	ask_after {release: path}
//	                      hold's wait, then a question ("Go on?", a form
//	                      of a boolean go): "went on" when accepted with go
//	                      true, else "stopped (<action>)"; a question that
//	                      comes while the task is followed, not at its start
//
// Tasks an earlier server left unfinished in dir are run again.
func NewTasksServer(dir string) (*mcpsdk.Server, *mcptasks.Engine, error) {
	s := mcpsdk.NewServer(&mcpsdk.Implementation{Name: "tasky", Version: "1.0.0"}, nil)
	e, err := mcptasks.New(s, mcptasks.Options{Dir: dir, PollInterval: 50 * time.Millisecond})
	if err != nil {
		return nil, nil, err
	}
	mcptasks.AddFixtures(e)
	e.AddTool(&mcpsdk.Tool{
		Name:        "hold",
		Description: "Works until a file exists at release.",
		InputSchema: map[string]any{"type": "object", "properties": map[string]any{"release": map[string]any{"type": "string"}}, "required": []string{"release"}},
	}, mcptasks.Optional, hold)
	e.AddTool(&mcpsdk.Tool{
		Name:        "ask_after",
		Description: "Works until a file exists at release, then asks whether to go on.",
		InputSchema: map[string]any{"type": "object", "properties": map[string]any{"release": map[string]any{"type": "string"}}, "required": []string{"release"}},
	}, mcptasks.Optional, askAfter)
	e.Resume()
	return s, e, nil
}

// hold works until its release file exists, looking every 10ms.
func hold(ctx context.Context, t *mcptasks.Task, req *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
	var args struct{ Release string }
	if err := json.Unmarshal(req.Params.Arguments, &args); err != nil || args.Release == "" {
		return nil, fmt.Errorf("hold needs a release path: %v", err)
	}
	t.SetStatus("holding until " + args.Release + " exists")
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		if _, err := os.Stat(args.Release); err == nil {
			break
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return &mcpsdk.CallToolResult{Content: []mcpsdk.Content{&mcpsdk.TextContent{Text: fmt.Sprintf("released %s (run %d)", args.Release, t.Runs())}}}, nil
}

// askAfter holds as hold does, then asks whether to go on.
func askAfter(ctx context.Context, t *mcptasks.Task, req *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
	if _, err := hold(ctx, t, req); err != nil {
		return nil, err
	}
	r, err := t.Elicit(ctx, &mcpsdk.ElicitParams{
		Message:         "Go on?",
		RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"go": map[string]any{"type": "boolean"}}, "required": []string{"go"}},
	})
	if err != nil {
		return nil, err
	}
	if r.Action == "accept" && r.Content["go"] == true {
		return &mcpsdk.CallToolResult{Content: []mcpsdk.Content{&mcpsdk.TextContent{Text: "went on"}}}, nil
	}
	return &mcpsdk.CallToolResult{Content: []mcpsdk.Content{&mcpsdk.TextContent{Text: fmt.Sprintf("stopped (%s)", r.Action)}}}, nil
}

// RunTasksServerIfAsked serves, when TasksServerEnv is set, NewTasksServer
// over stdio, with one more tool:
//
//	crash {}  exits the process (status 3) without answering, as a server
//	          dying mid-task does
//
// It returns only when not asked.
func RunTasksServerIfAsked() {
	dir := os.Getenv(TasksServerEnv)
	if dir == "" {
		return
	}
	if dir == TasksForget {
		dir = ""
	}
	s, e, err := NewTasksServer(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "tasks server:", err)
		os.Exit(1)
	}
	s.AddTool(&mcpsdk.Tool{Name: "crash", Description: "Exits the server process.", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
			fmt.Fprintln(os.Stderr, "tasks server: crashing as asked")
			os.Exit(3)
			return nil, nil
		})
	err = s.Run(context.Background(), &mcpsdk.StdioTransport{})
	e.Close()
	if err != nil {
		fmt.Fprintln(os.Stderr, "tasks server:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// TasksHTTP is a tasks server (NewTasksServer) over Streamable HTTP on
// loopback: 2026-07-28 requests are served statelessly, older revisions'
// sessions statefully, and task methods have their Mcp-Name checked.
type TasksHTTP struct {
	// URL is the endpoint; it stays the same across Restart.
	URL string
	dir string

	mu     sync.Mutex
	addr   string
	srv    *http.Server
	engine *mcptasks.Engine
	sdk    *mcpsdk.Server
}

// StartTasksHTTP starts a tasks server over HTTP keeping its tasks in dir
// ("" for memory only). It is closed when the test ends.
func StartTasksHTTP(t testing.TB, dir string) *TasksHTTP {
	h := &TasksHTTP{dir: dir}
	if err := h.start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	h.URL = "http://" + h.addr + "/mcp"
	t.Cleanup(h.Close)
	return h
}

// Engine returns the running server's task engine.
func (h *TasksHTTP) Engine() *mcptasks.Engine {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.engine
}

// Restart stops the server as a crash would (running tasks stay
// unfinished, connections drop) and starts a new one at the same address
// on the same directory: with one it resumes the unfinished tasks, without
// one it knows none.
func (h *TasksHTTP) Restart() error {
	h.Close()
	return h.start(h.addr)
}

// Close stops the server as a crash would.
func (h *TasksHTTP) Close() {
	h.mu.Lock()
	srv, e := h.srv, h.engine
	h.srv = nil
	h.mu.Unlock()
	if srv == nil {
		return
	}
	srv.Close()
	e.Close()
	for ss := range h.sdk.Sessions() {
		ss.Close()
	}
}

func (h *TasksHTTP) start(addr string) error {
	s, e, err := NewTasksServer(h.dir)
	if err != nil {
		return err
	}
	var l net.Listener
	// The port of a server just closed may linger a moment.
	for range 50 {
		if l, err = net.Listen("tcp", addr); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		e.Close()
		return err
	}
	srv := &http.Server{Handler: mcptasks.HTTPHandler(s)}
	go srv.Serve(l)
	h.mu.Lock()
	h.addr, h.srv, h.engine, h.sdk = l.Addr().String(), srv, e, s
	h.mu.Unlock()
	return nil
}
