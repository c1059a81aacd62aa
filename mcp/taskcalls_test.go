package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/freecode/freecode/config"
	"github.com/freecode/freecode/internal/mcptest"
	"github.com/freecode/freecode/mcp/tasks"
)

// tasksSrvs are the two ways to reach the real tasks server of
// internal/mcptest: over Streamable HTTP on loopback at 2026-07-28, and as
// a stdio subprocess (this test binary).
func tasksSrvs(t *testing.T) map[string]func(t *testing.T) config.Server {
	return map[string]func(t *testing.T) config.Server{
		"http": func(t *testing.T) config.Server {
			h := mcptest.StartTasksHTTP(t, "")
			srv := remoteServer(h.URL, config.TransportHTTP)
			srv.Name, srv.Enabled, srv.Scope = "tasky", true, "user"
			return srv
		},
		"stdio": func(t *testing.T) config.Server {
			srv := testSrv(t, "tasky")
			srv.Env = map[string]string{mcptest.TasksServerEnv: mcptest.TasksForget}
			return srv
		},
	}
}

// hold returns the arguments of the server's hold tool and the function
// that releases it.
func hold(t *testing.T) (map[string]any, func()) {
	path := filepath.Join(t.TempDir(), "release")
	return map[string]any{"release": path}, func() {
		if err := os.WriteFile(path, nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// TestGoSDKCallToolLosesATask shows the go-sdk defect the transports work
// around (docs/upstream/go-sdk-task-result.md): the SDK's own client,
// declaring the extension, gets the server's task answer as an empty
// result that says nothing of a task, while a Conn gets the task.
func TestGoSDKCallToolLosesATask(t *testing.T) {
	h := mcptest.StartTasksHTTP(t, "")
	caps := &mcpsdk.ClientCapabilities{}
	tasks.Declare(caps)
	client := mcpsdk.NewClient(&mcpsdk.Implementation{Name: "plain", Version: "1"}, &mcpsdk.ClientOptions{Capabilities: caps})
	cs, err := client.Connect(t.Context(), &mcpsdk.StreamableClientTransport{Endpoint: h.URL, HTTPClient: &http.Client{}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	args, release := hold(t)
	defer release()
	res, err := cs.CallTool(t.Context(), &mcpsdk.CallToolParams{Name: "hold", Arguments: args})
	if err != nil {
		t.Fatalf("the SDK's CallTool: %v", err)
	}
	b, _ := json.Marshal(res)
	if len(res.Content) != 0 || res.NeedsInput() || strings.Contains(string(b), "taskId") {
		t.Fatalf("the go-sdk kept something of the task (%s): the workaround may go", b)
	}
	if ids := h.Engine().IDs(); len(ids) != 1 {
		t.Fatalf("the server has %d tasks, want the one it answered with", len(ids))
	}

	srv := remoteServer(h.URL, config.TransportHTTP)
	srv.Name, srv.Enabled, srv.Scope = "tasky", true, "user"
	c := startTestConn(t, srv, nil)
	res, err = c.CallTool(t.Context(), "hold", args, &CallOptions{TakeTasks: true})
	if err != nil {
		t.Fatal(err)
	}
	task, isTask, err := tasks.Of(res)
	if !isTask || err != nil || task.TaskID == "" || task.Status != tasks.Working {
		t.Fatalf("a Conn's CallTool: task %+v, %v, %v", task, isTask, err)
	}
}

// TestConnTaskStates follows each of the extension's end states through a
// Conn's CallTool, which waits for the task's end, over HTTP and stdio.
func TestConnTaskStates(t *testing.T) {
	for name, mk := range tasksSrvs(t) {
		t.Run(name, func(t *testing.T) {
			c := startTestConn(t, mk(t), nil)

			// working → completed, the status messages as progress.
			args, release := hold(t)
			var mu sync.Mutex
			var msgs []string
			go func() { release() }()
			res, err := c.CallTool(t.Context(), "hold", args, &CallOptions{OnProgress: func(p Progress) {
				mu.Lock()
				msgs = append(msgs, p.Message)
				mu.Unlock()
			}})
			if err != nil {
				t.Fatalf("hold: %v", err)
			}
			if got := res.Content[0].(*mcpsdk.TextContent).Text; !strings.HasPrefix(got, "released ") {
				t.Errorf("hold's result = %q", got)
			}
			mu.Lock()
			if len(msgs) == 0 || !strings.Contains(msgs[0], " working") {
				t.Errorf("progress = %q, want the task's status first", msgs)
			}
			mu.Unlock()

			// completed with a tool error: a result with IsError, not a failure.
			res, err = c.CallTool(t.Context(), "failing_job", nil, nil)
			if err != nil || !res.IsError {
				t.Errorf("failing_job = %+v, %v; want a result with isError", res, err)
			}

			// failed: the server's JSON-RPC error.
			_, err = c.CallTool(t.Context(), "protocol_error_job", nil, nil)
			if err == nil || !strings.Contains(err.Error(), "failed") || !strings.Contains(err.Error(), "-32603") {
				t.Errorf("protocol_error_job: %v, want the task failed with -32603", err)
			}

			// A tool that is no task answers as ever.
			if got := callText(t, c, "greet", map[string]any{"name": "ada"}); got != "Hello, ada!" {
				t.Errorf("greet = %q", got)
			}
		})
	}
}

// TestConnTaskCancel: a task taken by the caller is cancelled with
// tasks/cancel and ends cancelled; a call that waits for its task and is
// given up cancels the task on the server.
func TestConnTaskCancel(t *testing.T) {
	for name, mk := range tasksSrvs(t) {
		t.Run(name, func(t *testing.T) {
			c := startTestConn(t, mk(t), nil)
			args, _ := hold(t) // never released
			res, err := c.CallTool(t.Context(), "hold", args, &CallOptions{TakeTasks: true})
			if err != nil {
				t.Fatal(err)
			}
			task, _, _ := tasks.Of(res)
			if err := c.CancelTask(t.Context(), task.TaskID); err != nil {
				t.Fatalf("CancelTask: %v", err)
			}
			final, err := c.FollowTask(t.Context(), task, nil)
			if err != nil || final.Status != tasks.Cancelled {
				t.Fatalf("after tasks/cancel: %+v, %v; want cancelled", final, err)
			}

			// Given up: the call's ctx ends while it waits for its task.
			ctx, cancel := context.WithCancel(t.Context())
			started := make(chan string, 1)
			go func() {
				_, err := c.CallTool(ctx, "hold", args, &CallOptions{OnProgress: func(p Progress) {
					if id, ok := strings.CutPrefix(p.Message, "task "); ok {
						select {
						case started <- strings.Fields(id)[0]:
						default:
						}
					}
				}})
				if !errors.Is(err, context.Canceled) {
					t.Errorf("a call given up: %v, want context.Canceled", err)
				}
			}()
			id := <-started
			cancel()
			final, err = c.FollowTask(t.Context(), &tasks.Task{TaskID: id, Status: tasks.Working}, nil)
			if err != nil || final.Status != tasks.Cancelled {
				t.Fatalf("the task of a call given up: %+v, %v; want cancelled", final, err)
			}
		})
	}
}

// TestConnTaskInputRequired: an input_required task's question goes to the
// call's Asker, and its answer back by tasks/update; two questions at
// once are both asked, and answered.
func TestConnTaskInputRequired(t *testing.T) {
	for name, mk := range tasksSrvs(t) {
		t.Run(name, func(t *testing.T) {
			srv := mk(t)
			c := newTestConnOpts(t, srv, nil, &ConnOptions{Environ: testEnviron, Elicitation: true})
			if err := c.Start(t.Context()); err != nil {
				t.Fatal(err)
			}
			var mu sync.Mutex
			var asked []string
			a := &askFuncs{elicit: func(_ context.Context, q question) (*mcpsdk.ElicitResult, error) {
				mu.Lock()
				asked = append(asked, q.CallID+": "+q.Params.Message)
				mu.Unlock()
				if strings.HasPrefix(q.Params.Message, "Name") {
					return &mcpsdk.ElicitResult{Action: "accept", Content: map[string]any{"name": strings.TrimSuffix(q.Params.Message, "?")}}, nil
				}
				return &mcpsdk.ElicitResult{Action: "accept", Content: map[string]any{"confirm": true}}, nil
			}}
			res, err := c.CallTool(t.Context(), "confirm_delete", map[string]any{"filename": "notes.txt"}, by(a, "call-1"))
			if err != nil {
				t.Fatal(err)
			}
			if got := res.Content[0].(*mcpsdk.TextContent).Text; got != "deleted notes.txt" {
				t.Errorf("confirm_delete = %q", got)
			}
			res, err = c.CallTool(t.Context(), "multi_input", nil, by(a, "call-1"))
			if err != nil {
				t.Fatal(err)
			}
			if got := res.Content[0].(*mcpsdk.TextContent).Text; got != "got Name 1 and Name 2" && got != "got Name 2 and Name 1" {
				t.Errorf("multi_input = %q", got)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(asked) != 3 || asked[0] != "call-1: Delete notes.txt?" {
				t.Errorf("asked = %q", asked)
			}
		})
	}
}

// TestTaskQuestionGoesToItsOwnerNow: a task followed apart from its call
// asks whoever FollowOptions.AskerOf says when its question comes, with
// the call's id: the frontend that adopted it, not the one whose call
// started it; nobody, once it says nobody (the question is declined).
func TestTaskQuestionGoesToItsOwnerNow(t *testing.T) {
	for name, mk := range tasksSrvs(t) {
		t.Run(name, func(t *testing.T) {
			c := newTestConnOpts(t, mk(t), nil, &ConnOptions{Environ: testEnviron, Elicitation: true})
			if err := c.Start(t.Context()); err != nil {
				t.Fatal(err)
			}
			var a, b elicitLog
			askerA, askerB := a.asker(map[string]any{"go": true}), b.asker(map[string]any{"go": true})
			for _, tc := range []struct {
				owner Asker
				want  string
			}{{askerB, "went on"}, {nil, "stopped (decline)"}} {
				args, release := hold(t)
				res, err := c.CallTool(t.Context(), "ask_after", args, &CallOptions{ID: "call-1", Asker: askerA, TakeTasks: true})
				if err != nil {
					t.Fatal(err)
				}
				task, _, _ := tasks.Of(res)
				var mu sync.Mutex
				owner := Asker(askerA)
				done := make(chan *tasks.Task, 1)
				go func() {
					final, err := c.FollowTask(t.Context(), task, &FollowOptions{CallID: "call-1", AskerOf: func() Asker {
						mu.Lock()
						defer mu.Unlock()
						return owner
					}})
					if err != nil {
						t.Errorf("FollowTask: %v", err)
					}
					done <- final
				}()
				mu.Lock()
				owner = tc.owner // adopted (or left) before the question comes
				mu.Unlock()
				release()
				final := <-done
				if final == nil || final.Result == nil || resultText(final.Result) != tc.want {
					t.Errorf("owned by %v: the task ended %+v, want %q", tc.owner, final, tc.want)
				}
			}
			if got := a.got(); len(got) != 0 {
				t.Errorf("the Asker of the call that started the tasks was asked %+v", got)
			}
			if got := b.got(); len(got) != 1 || got[0].CallID != "call-1" || got[0].Params.Message != "Go on?" {
				t.Errorf("the owner was asked %+v, want Go on? once, for call-1", got)
			}
		})
	}
}

// TestConnSendsNoPingToAStatelessServer: a 2026-07-28 server served
// statelessly has no ping (it would answer one with an error): a Conn at
// that revision sends none, and the session lives on across the ticks of
// the health check, with it the calls and the tasks being polled.
func TestConnSendsNoPingToAStatelessServer(t *testing.T) {
	h := mcptest.StartTasksHTTP(t, "")
	srv := remoteServer(h.URL, config.TransportHTTP)
	srv.Name, srv.Enabled, srv.Scope = "tasky", true, "user"
	rec := mcptest.NewRecorder()
	const interval = 20 * time.Millisecond
	c := newTestConnOpts(t, srv, rec, &ConnOptions{Environ: testEnviron, PingInterval: interval})
	if err := c.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	if v := c.Status().ProtocolVersion; v != LatestProtocolVersion {
		t.Fatalf("connected at %q, want %q", v, LatestProtocolVersion)
	}
	// Calls across ten ticks at least.
	for start := time.Now(); time.Since(start) < 10*interval; {
		if got := callText(t, c, "greet", map[string]any{"name": "ada"}); got != "Hello, ada!" {
			t.Fatalf("greet = %q", got)
		}
		time.Sleep(interval / 2)
	}
	if st := c.Status(); st.State != StateConnected || st.LastPing != 0 {
		t.Errorf("after ten ticks: state %v, last ping %v; want connected, and no ping sent", st.State, st.LastPing)
	}
	if states := rec.States("tasky"); slices.Contains(states, StateReconnecting.String()) {
		t.Errorf("the session was lost at a tick: %v", states)
	}
}
