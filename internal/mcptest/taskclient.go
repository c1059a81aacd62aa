package mcptest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/freecode/freecode/internal/mcpwire"
)

// RPCError is a JSON-RPC error answer.
type RPCError struct {
	Code    int64           `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data"`
}

func (e *RPCError) Error() string { return fmt.Sprintf("%d %s", e.Code, e.Message) }

// TasksClient speaks JSON-RPC to a tasks server the way a client of the
// extension does: over Streamable HTTP at 2026-07-28 (every request carries
// its _meta and the Mcp-Method / Mcp-Name headers), or over a stdio
// subprocess in a 2025-11-25 session declared in initialize.
type TasksClient struct {
	T       testing.TB
	Declare bool // whether requests declare the tasks extension

	// HTTP
	url  string
	http *http.Client

	// stdio
	mu     sync.Mutex
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  *bufio.Scanner
	nextID int
}

// NewTasksClient returns a client of the tasks server at url (2026-07-28,
// stateless) whose requests declare the extension when declare is set.
func NewTasksClient(t testing.TB, url string, declare bool) *TasksClient {
	// A connection per request: a restarted server's client must not
	// find the old server's connection.
	tr := &http.Transport{DisableKeepAlives: true}
	return &TasksClient{T: t, url: url, http: &http.Client{Transport: tr}, Declare: declare}
}

func (c *TasksClient) caps() map[string]any {
	if !c.Declare {
		return map[string]any{}
	}
	return map[string]any{"extensions": map[string]any{mcpwire.TasksExtension: map[string]any{}}}
}

// Call sends method with params and returns its result, or its error.
func (c *TasksClient) Call(method string, params map[string]any) (json.RawMessage, error) {
	c.T.Helper()
	return c.CallWith(method, params, nil)
}

// CallWith is Call with HTTP headers set (or replaced) on the request.
func (c *TasksClient) CallWith(method string, params map[string]any, headers map[string]string) (json.RawMessage, error) {
	c.T.Helper()
	if params == nil {
		params = map[string]any{}
	}
	c.mu.Lock()
	c.nextID++
	id := c.nextID
	c.mu.Unlock()
	var resp struct {
		ID     int             `json:"id"`
		Result json.RawMessage `json:"result"`
		Error  *RPCError       `json:"error"`
	}
	if c.url != "" {
		params["_meta"] = map[string]any{
			"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
			"io.modelcontextprotocol/clientCapabilities": c.caps(),
			"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "t", "version": "1"},
		}
		body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
		req, _ := http.NewRequestWithContext(c.T.Context(), http.MethodPost, c.url, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
		req.Header.Set("Mcp-Method", method)
		switch {
		case method == "tools/call":
			req.Header.Set("Mcp-Name", params["name"].(string))
		case strings.HasPrefix(method, "tasks/"):
			req.Header.Set("Mcp-Name", params["taskId"].(string))
		}
		for k, v := range headers {
			req.Header.Set(k, v)
		}
		res, err := c.http.Do(req)
		if err != nil {
			c.T.Fatalf("%s: %v", method, err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
			// The answer is the last data line of the stream.
			for l := range strings.Lines(string(b)) {
				if d, ok := strings.CutPrefix(strings.TrimSpace(l), "data:"); ok {
					b = []byte(d)
				}
			}
		}
		if err := json.Unmarshal(b, &resp); err != nil {
			c.T.Fatalf("%s: HTTP %d, not a JSON-RPC answer: %s", method, res.StatusCode, b)
		}
	} else {
		c.send(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
		for {
			if !c.lines.Scan() {
				return nil, fmt.Errorf("%s: the server closed its output (%v)", method, c.lines.Err())
			}
			resp.ID, resp.Result, resp.Error = 0, nil, nil
			if json.Unmarshal(c.lines.Bytes(), &resp) == nil && resp.ID == id {
				break
			}
		}
	}
	if resp.Error != nil {
		return nil, resp.Error
	}
	return resp.Result, nil
}

func (c *TasksClient) send(msg any) {
	b, _ := json.Marshal(msg)
	if _, err := c.stdin.Write(append(b, '\n')); err != nil {
		c.T.Fatal(err)
	}
}

// StartTasksStdio starts the test binary (whose TestMain calls
// RunTasksServerIfAsked) as a tasks server (TasksServerEnv =
// dir) and opens a 2025-11-25 session declaring the extension.
func StartTasksStdio(t testing.TB, dir string) *TasksClient {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), TasksServerEnv+"="+dir)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &TasksClient{T: t, Declare: true, cmd: cmd, stdin: stdin, lines: bufio.NewScanner(stdout)}
	c.lines.Buffer(nil, 1<<20)
	t.Cleanup(func() {
		stdin.Close()
		cmd.Wait()
	})
	if _, err := c.Call("initialize", map[string]any{
		"protocolVersion": "2025-11-25",
		"capabilities":    c.caps(),
		"clientInfo":      map[string]any{"name": "t", "version": "1"},
	}); err != nil {
		t.Fatal(err)
	}
	c.send(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
	return c
}

// WireTask is what a task message holds.
type WireTask struct {
	ResultType     string                     `json:"resultType"`
	TaskID         string                     `json:"taskId"`
	Status         string                     `json:"status"`
	StatusMessage  string                     `json:"statusMessage"`
	PollIntervalMs int64                      `json:"pollIntervalMs"`
	TTLMs          *int64                     `json:"ttlMs"`
	InputRequests  map[string]json.RawMessage `json:"inputRequests"`
	Result         *struct {
		Content []struct{ Text string } `json:"content"`
		IsError bool                    `json:"isError"`
	} `json:"result"`
	Error *RPCError `json:"error"`
}

// Text is the first text of a completed task's result.
func (w WireTask) Text() string {
	if w.Result == nil || len(w.Result.Content) == 0 {
		return ""
	}
	return w.Result.Content[0].Text
}

func decodeTask(t testing.TB, raw json.RawMessage) WireTask {
	t.Helper()
	var w WireTask
	if err := json.Unmarshal(raw, &w); err != nil {
		t.Fatalf("not a task: %s", raw)
	}
	return w
}

// Start calls tool and requires a live task back (working, or already
// input_required).
func (c *TasksClient) Start(tool string, args map[string]any) WireTask {
	c.T.Helper()
	raw, err := c.Call("tools/call", map[string]any{"name": tool, "arguments": args})
	if err != nil {
		c.T.Fatalf("tools/call %s: %v", tool, err)
	}
	w := decodeTask(c.T, raw)
	if w.ResultType != "task" || w.TaskID == "" || (w.Status != "working" && w.Status != "input_required") || w.PollIntervalMs <= 0 {
		c.T.Fatalf("tools/call %s answered %s, want a live task", tool, raw)
	}
	return w
}

// Get sends tasks/get.
func (c *TasksClient) Get(id string) (WireTask, error) {
	c.T.Helper()
	raw, err := c.Call("tasks/get", map[string]any{"taskId": id})
	if err != nil {
		return WireTask{}, err
	}
	return decodeTask(c.T, raw), nil
}

// Await polls tasks/get at the task's pollIntervalMs until cond holds.
func (c *TasksClient) Await(id string, cond func(WireTask) bool) WireTask {
	c.T.Helper()
	for {
		w, err := c.Get(id)
		if err != nil {
			c.T.Fatalf("tasks/get %s: %v", id, err)
		}
		if cond(w) {
			return w
		}
		time.Sleep(time.Duration(w.PollIntervalMs) * time.Millisecond)
	}
}

// TaskStatus is the condition of Await that the task is in status s.
func TaskStatus(s string) func(WireTask) bool { return func(w WireTask) bool { return w.Status == s } }

// IsAck reports whether raw is the extension's empty acknowledgement:
// resultType "complete" and nothing of a task.
func IsAck(raw json.RawMessage) bool {
	var m map[string]any
	if json.Unmarshal(raw, &m) != nil || m["resultType"] != "complete" {
		return false
	}
	delete(m, "resultType")
	delete(m, "_meta")
	return len(m) == 0
}

// Release creates the file a hold task waits for.
func Release(t testing.TB, path string) {
	t.Helper()
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
}
