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
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/freecode/freecode/internal/mcptasks"
)

// rpcError is a JSON-RPC error answer.
type rpcError struct {
	Code    int64           `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data"`
}

func (e *rpcError) Error() string { return fmt.Sprintf("%d %s", e.Code, e.Message) }

// wireClient speaks JSON-RPC to a tasks server the way a client of the
// extension does: over Streamable HTTP at 2026-07-28 (every request carries
// its _meta and the Mcp-Method / Mcp-Name headers), or over a stdio
// subprocess in a 2025-11-25 session declared in initialize.
type wireClient struct {
	t       *testing.T
	declare bool // whether requests declare the tasks extension

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

func httpClient(t *testing.T, url string, declare bool) *wireClient {
	// A connection per request: a restarted server's client must not
	// find the old server's connection.
	tr := &http.Transport{DisableKeepAlives: true}
	return &wireClient{t: t, url: url, http: &http.Client{Transport: tr}, declare: declare}
}

func (c *wireClient) caps() map[string]any {
	if !c.declare {
		return map[string]any{}
	}
	return map[string]any{"extensions": map[string]any{mcptasks.Extension: map[string]any{}}}
}

// call sends method with params and returns its result, or its error.
func (c *wireClient) call(method string, params map[string]any) (json.RawMessage, error) {
	c.t.Helper()
	return c.callWith(method, params, nil)
}

// callWith is call with HTTP headers set (or replaced) on the request.
func (c *wireClient) callWith(method string, params map[string]any, headers map[string]string) (json.RawMessage, error) {
	c.t.Helper()
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
		Error  *rpcError       `json:"error"`
	}
	if c.url != "" {
		params["_meta"] = map[string]any{
			"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
			"io.modelcontextprotocol/clientCapabilities": c.caps(),
			"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "t", "version": "1"},
		}
		body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
		req, _ := http.NewRequestWithContext(c.t.Context(), http.MethodPost, c.url, bytes.NewReader(body))
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
			c.t.Fatalf("%s: %v", method, err)
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
			c.t.Fatalf("%s: HTTP %d, not a JSON-RPC answer: %s", method, res.StatusCode, b)
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

func (c *wireClient) send(msg any) {
	b, _ := json.Marshal(msg)
	if _, err := c.stdin.Write(append(b, '\n')); err != nil {
		c.t.Fatal(err)
	}
}

// stdioClient starts the test binary as a tasks server (TasksServerEnv =
// dir) and opens a 2025-11-25 session declaring the extension.
func stdioClient(t *testing.T, dir string) *wireClient {
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
	c := &wireClient{t: t, declare: true, cmd: cmd, stdin: stdin, lines: bufio.NewScanner(stdout)}
	c.lines.Buffer(nil, 1<<20)
	t.Cleanup(func() {
		stdin.Close()
		cmd.Wait()
	})
	if _, err := c.call("initialize", map[string]any{
		"protocolVersion": "2025-11-25",
		"capabilities":    c.caps(),
		"clientInfo":      map[string]any{"name": "t", "version": "1"},
	}); err != nil {
		t.Fatal(err)
	}
	c.send(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
	return c
}

// wireTask is what a task message holds.
type wireTask struct {
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
	Error *rpcError `json:"error"`
}

func (w wireTask) text() string {
	if w.Result == nil || len(w.Result.Content) == 0 {
		return ""
	}
	return w.Result.Content[0].Text
}

func decodeTask(t *testing.T, raw json.RawMessage) wireTask {
	t.Helper()
	var w wireTask
	if err := json.Unmarshal(raw, &w); err != nil {
		t.Fatalf("not a task: %s", raw)
	}
	return w
}

// start calls tool and requires a task back.
func (c *wireClient) start(tool string, args map[string]any) wireTask {
	c.t.Helper()
	raw, err := c.call("tools/call", map[string]any{"name": tool, "arguments": args})
	if err != nil {
		c.t.Fatalf("tools/call %s: %v", tool, err)
	}
	w := decodeTask(c.t, raw)
	if w.ResultType != "task" || w.TaskID == "" || w.Status != "working" || w.PollIntervalMs <= 0 {
		c.t.Fatalf("tools/call %s answered %s, want a working task", tool, raw)
	}
	return w
}

func (c *wireClient) get(id string) (wireTask, error) {
	c.t.Helper()
	raw, err := c.call("tasks/get", map[string]any{"taskId": id})
	if err != nil {
		return wireTask{}, err
	}
	return decodeTask(c.t, raw), nil
}

// await polls tasks/get at the task's pollIntervalMs until cond holds.
func (c *wireClient) await(id string, cond func(wireTask) bool) wireTask {
	c.t.Helper()
	for {
		w, err := c.get(id)
		if err != nil {
			c.t.Fatalf("tasks/get %s: %v", id, err)
		}
		if cond(w) {
			return w
		}
		time.Sleep(time.Duration(w.PollIntervalMs) * time.Millisecond)
	}
}

func status(s string) func(wireTask) bool { return func(w wireTask) bool { return w.Status == s } }

// isAck reports whether raw is the extension's empty acknowledgement:
// resultType "complete" and nothing of a task.
func isAck(raw json.RawMessage) bool {
	var m map[string]any
	if json.Unmarshal(raw, &m) != nil || m["resultType"] != "complete" {
		return false
	}
	delete(m, "resultType")
	delete(m, "_meta")
	return len(m) == 0
}

func release(t *testing.T, path string) {
	t.Helper()
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestTasksStates drives a task through each state over HTTP at
// 2026-07-28: working with a status message, input_required answered by
// tasks/update, completed, failed, cancelled.
func TestTasksStates(t *testing.T) {
	h := StartTasksHTTP(t, "")
	c := httpClient(t, h.URL, true)

	t.Run("working then completed", func(t *testing.T) {
		rel := filepath.Join(t.TempDir(), "go")
		id := c.start("hold", map[string]any{"release": rel}).TaskID
		w := c.await(id, func(w wireTask) bool { return strings.HasPrefix(w.StatusMessage, "holding until") })
		if w.Status != "working" || w.Result != nil || w.Error != nil {
			t.Fatalf("held task: %+v", w)
		}
		release(t, rel)
		w = c.await(id, status("completed"))
		if want := "released " + rel + " (run 1)"; w.text() != want || w.Result.IsError {
			t.Errorf("completed task: result %q (isError %v), want %q", w.text(), w.Result.IsError, want)
		}
	})

	t.Run("input_required then completed", func(t *testing.T) {
		id := c.start("confirm_delete", map[string]any{"filename": "a.txt"}).TaskID
		w := c.await(id, status("input_required"))
		if len(w.InputRequests) != 1 {
			t.Fatalf("inputRequests: %v", w.InputRequests)
		}
		var key string
		for k, v := range w.InputRequests {
			key = k
			if !strings.Contains(string(v), `"method":"elicitation/create"`) || !strings.Contains(string(v), "Delete a.txt?") {
				t.Errorf("inputRequests[%s] = %s", k, v)
			}
		}
		// An answer to a key the task did not ask is acknowledged and
		// changes nothing.
		if _, err := c.call("tasks/update", map[string]any{"taskId": id, "inputResponses": map[string]any{"nope": map[string]any{"action": "accept"}}}); err != nil {
			t.Fatal(err)
		}
		if w, _ := c.get(id); w.Status != "input_required" {
			t.Fatalf("after an answer to no question: %s", w.Status)
		}
		raw, err := c.call("tasks/update", map[string]any{"taskId": id, "inputResponses": map[string]any{key: map[string]any{"action": "accept", "content": map[string]any{"confirm": true}}}})
		if err != nil || !isAck(raw) {
			t.Fatalf("tasks/update: %s, %v", raw, err)
		}
		if w := c.await(id, status("completed")); w.text() != "deleted a.txt" {
			t.Errorf("result %q", w.text())
		}
	})

	t.Run("two questions answered one at a time", func(t *testing.T) {
		id := c.start("multi_input", nil).TaskID
		w := c.await(id, func(w wireTask) bool { return len(w.InputRequests) == 2 })
		var keys []string
		for k := range w.InputRequests {
			keys = append(keys, k)
		}
		c.call("tasks/update", map[string]any{"taskId": id, "inputResponses": map[string]any{keys[0]: map[string]any{"action": "accept", "content": map[string]any{"name": "x"}}}})
		w, _ = c.get(id)
		if _, still := w.InputRequests[keys[1]]; w.Status != "input_required" || len(w.InputRequests) != 1 || !still {
			t.Fatalf("after one answer: %+v", w)
		}
		c.call("tasks/update", map[string]any{"taskId": id, "inputResponses": map[string]any{keys[1]: map[string]any{"action": "accept", "content": map[string]any{"name": "y"}}}})
		if w := c.await(id, status("completed")); !strings.Contains(w.text(), "x") || !strings.Contains(w.text(), "y") {
			t.Errorf("result %q", w.text())
		}
	})

	t.Run("tool error is completed", func(t *testing.T) {
		id := c.start("failing_job", nil).TaskID
		if w := c.await(id, status("completed")); !w.Result.IsError {
			t.Errorf("failing_job: %+v", w)
		}
	})

	t.Run("failed", func(t *testing.T) {
		id := c.start("protocol_error_job", nil).TaskID
		w := c.await(id, status("failed"))
		if w.Error == nil || w.Error.Code != -32603 || !strings.Contains(w.Error.Message, "panicked") || w.Result != nil {
			t.Errorf("failed task: %+v", w)
		}
	})

	t.Run("cancelled", func(t *testing.T) {
		rel := filepath.Join(t.TempDir(), "go")
		id := c.start("hold", map[string]any{"release": rel}).TaskID
		raw, err := c.call("tasks/cancel", map[string]any{"taskId": id})
		if err != nil || !isAck(raw) {
			t.Fatalf("tasks/cancel: %s, %v", raw, err)
		}
		if w, _ := c.get(id); w.Status != "cancelled" {
			t.Fatalf("after cancel: %s", w.Status)
		}
		// The work stopped: releasing it later changes nothing, and a
		// second cancel is acknowledged the same.
		release(t, rel)
		if _, err := c.call("tasks/cancel", map[string]any{"taskId": id}); err != nil {
			t.Fatal(err)
		}
		d, _ := h.Engine().Await(t.Context(), id, func(mcptasks.DetailedTask) bool { return true })
		if d.Status != mcptasks.Cancelled || d.Result != nil {
			t.Errorf("cancelled task became %+v", d)
		}
	})

	t.Run("unknown task", func(t *testing.T) {
		for _, m := range []string{"tasks/get", "tasks/cancel"} {
			if _, err := c.call(m, map[string]any{"taskId": "nope"}); err == nil || err.(*rpcError).Code != -32602 {
				t.Errorf("%s of an unknown task: %v, want -32602", m, err)
			}
		}
	})

	t.Run("Mcp-Name must be the task id", func(t *testing.T) {
		rel := filepath.Join(t.TempDir(), "go")
		id := c.start("hold", map[string]any{"release": rel}).TaskID
		defer c.call("tasks/cancel", map[string]any{"taskId": id})
		for _, name := range []string{"other", ""} {
			_, err := c.callWith("tasks/get", map[string]any{"taskId": id}, map[string]string{"Mcp-Name": name})
			if err == nil || err.(*rpcError).Code != mcptasks.CodeHeaderMismatch {
				t.Errorf("tasks/get with Mcp-Name %q: %v, want -32020", name, err)
			}
		}
	})
}

// TestTasksUndeclared: a client that does not declare the extension gets
// plain results, and is refused the task methods and the tools that only
// run as tasks.
func TestTasksUndeclared(t *testing.T) {
	h := StartTasksHTTP(t, "")
	c := httpClient(t, h.URL, false)
	raw, err := c.call("tools/call", map[string]any{"name": "slow_compute", "arguments": map[string]any{"seconds": 0, "label": "now"}})
	if err != nil || !strings.Contains(string(raw), "computed now in 0s") || strings.Contains(string(raw), "taskId") {
		t.Fatalf("slow_compute without the extension: %s, %v", raw, err)
	}
	_, err = c.call("tools/call", map[string]any{"name": "failing_job"})
	if e, ok := err.(*rpcError); !ok || e.Code != mcptasks.CodeMissingCapability || !strings.Contains(string(e.Data), mcptasks.Extension) {
		t.Errorf("failing_job without the extension: %v", err)
	}
	for _, m := range []string{"tasks/get", "tasks/update", "tasks/cancel"} {
		if _, err := c.call(m, map[string]any{"taskId": "x", "inputResponses": map[string]any{}}); err == nil || err.(*rpcError).Code != mcptasks.CodeMissingCapability {
			t.Errorf("%s without the extension: %v", m, err)
		}
	}
	if len(h.Engine().IDs()) != 0 {
		t.Errorf("tasks made for a client without the extension: %v", h.Engine().IDs())
	}
}

// TestTasksRestartHTTP restarts the server mid-task: one keeping its tasks
// in a directory runs the unfinished task again and answers for it; one
// keeping them in memory has forgotten it.
func TestTasksRestartHTTP(t *testing.T) {
	t.Run("persisted", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "tasks")
		h := StartTasksHTTP(t, dir)
		c := httpClient(t, h.URL, true)
		rel := filepath.Join(t.TempDir(), "go")
		id := c.start("hold", map[string]any{"release": rel}).TaskID
		done := c.start("slow_compute", map[string]any{"seconds": 0, "label": "early"}).TaskID
		c.await(done, status("completed"))
		if err := h.Restart(); err != nil {
			t.Fatal(err)
		}
		w := c.await(id, func(w wireTask) bool { return strings.HasPrefix(w.StatusMessage, "holding until") })
		if w.Status != "working" {
			t.Fatalf("after the restart: %+v", w)
		}
		release(t, rel)
		if w := c.await(id, status("completed")); w.text() != "released "+rel+" (run 2)" {
			t.Errorf("resumed task's result %q", w.text())
		}
		if w, err := c.get(done); err != nil || w.text() != "computed early in 0s" {
			t.Errorf("task completed before the restart: %+v, %v", w, err)
		}
		fi, err := os.Stat(filepath.Join(dir, id+".json"))
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("task file: %v, %v", fi, err)
		}
	})
	t.Run("forgotten", func(t *testing.T) {
		h := StartTasksHTTP(t, "")
		c := httpClient(t, h.URL, true)
		id := c.start("hold", map[string]any{"release": filepath.Join(t.TempDir(), "go")}).TaskID
		if err := h.Restart(); err != nil {
			t.Fatal(err)
		}
		if _, err := c.get(id); err == nil || err.(*rpcError).Code != -32602 {
			t.Errorf("tasks/get after a forgetful restart: %v, want -32602", err)
		}
	})
}

// TestTasksStdioCrash runs the tasks server as a subprocess, crashes it
// mid-task and starts it again on the same directory.
func TestTasksStdioCrash(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tasks")
	rel := filepath.Join(t.TempDir(), "go")
	c := stdioClient(t, dir)
	id := c.start("hold", map[string]any{"release": rel}).TaskID
	if _, err := c.call("tools/call", map[string]any{"name": "crash"}); err == nil {
		t.Fatal("crash answered")
	}
	c.cmd.Wait()
	if code := c.cmd.ProcessState.ExitCode(); code != 3 {
		t.Fatalf("crash exited %d", code)
	}
	c = stdioClient(t, dir)
	if w := c.await(id, status("working")); w.StatusMessage == "" {
		t.Fatalf("after the crash: %+v", w)
	}
	release(t, rel)
	if w := c.await(id, status("completed")); w.text() != "released "+rel+" (run 2)" {
		t.Errorf("result %q", w.text())
	}

	f := stdioClient(t, TasksForget)
	id = f.start("hold", map[string]any{"release": filepath.Join(t.TempDir(), "never")}).TaskID
	f.call("tools/call", map[string]any{"name": "crash"})
	f.cmd.Wait()
	f = stdioClient(t, TasksForget)
	if _, err := f.get(id); err == nil || err.(*rpcError).Code != -32602 {
		t.Errorf("tasks/get after a forgetful crash: %v, want -32602", err)
	}
}
