package tasks

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

const createTask = `{"resultType":"task","taskId":"t-1","status":"working","statusMessage":"started","createdAt":"2026-12-02T06:00:00Z","lastUpdatedAt":"2026-12-02T06:00:00Z","ttlMs":60000,"pollIntervalMs":250,"_meta":{"x/y":1}}`

// TestFoldKeepsTheTask: a folded task answer decodes as the go-sdk's
// CallToolResult and gives back every field of the task, and the server's
// own _meta; any other answer is left byte for byte.
func TestFoldKeepsTheTask(t *testing.T) {
	task, res := foldedTask(t, createTask)
	if task.TaskID != "t-1" || task.Status != Working || task.StatusMessage != "started" || *task.TTLMs != 60000 || *task.PollIntervalMs != 250 {
		t.Errorf("task = %+v", task)
	}
	if res.Meta["x/y"] != 1.0 {
		t.Errorf("the server's _meta was lost: %v", res.Meta)
	}
	for _, raw := range []string{
		`{"resultType":"complete","content":[{"type":"text","text":"a task"}]}`,
		`{"content":[{"type":"text","text":"\"task\""}]}`,
	} {
		out, ok := Fold(json.RawMessage(raw))
		if ok || string(out) != raw {
			t.Errorf("Fold(%s) = %s, %v", raw, out, ok)
		}
		var res mcpsdk.CallToolResult
		json.Unmarshal(out, &res)
		if _, isTask, _ := Of(&res); isTask {
			t.Errorf("Of(%s) found a task", raw)
		}
	}
}

// foldedTask folds the task answer raw, decodes it as the go-sdk does,
// and reads the task back.
func foldedTask(t *testing.T, raw string) (*Task, *mcpsdk.CallToolResult) {
	t.Helper()
	folded, ok := Fold(json.RawMessage(raw))
	if !ok {
		t.Fatalf("the task answer %s was not folded", raw)
	}
	var res mcpsdk.CallToolResult
	if err := json.Unmarshal(folded, &res); err != nil {
		t.Fatal(err)
	}
	task, isTask, err := Of(&res)
	if err != nil || !isTask {
		t.Fatalf("Of = %v, %v, %v", task, isTask, err)
	}
	return task, &res
}

// TestOfRefusesABadTask: a task answer without an id or with a status
// the extension does not have is an error, not a task.
func TestOfRefusesABadTask(t *testing.T) {
	for _, raw := range []string{
		`{"resultType":"task","status":"working"}`,
		`{"resultType":"task","taskId":"a","status":"sleeping"}`,
	} {
		folded, _ := Fold(json.RawMessage(raw))
		var res mcpsdk.CallToolResult
		json.Unmarshal(folded, &res)
		if _, isTask, err := Of(&res); !isTask || err == nil {
			t.Errorf("Of(%s) = %v, %v; want an error", raw, isTask, err)
		}
	}
}

// TestFoldHTTP: over a real HTTP server, a tools/call's JSON answer and
// its event-stream answer are folded; events around it pass as they are;
// an answer to another method is not touched.
func TestFoldHTTP(t *testing.T) {
	progress := `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p","progress":1,"message":"a task"}}`
	answer := `{"jsonrpc":"2.0","id":3,"result":` + createTask + `}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/json" {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, answer)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "id: 1\nevent: message\ndata: "+progress+"\n\n")
		io.WriteString(w, "id: 2\nevent: message\ndata: "+answer+"\n\n")
	}))
	defer srv.Close()
	get := func(path, method string) string {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+path, strings.NewReader("{}"))
		req.Header.Set("Mcp-Method", method)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		FoldHTTP(req, resp)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	taskOf := func(msg string) *Task {
		t.Helper()
		var m struct{ Result mcpsdk.CallToolResult }
		if err := json.Unmarshal([]byte(msg), &m); err != nil {
			t.Fatalf("%s: %v", msg, err)
		}
		task, isTask, err := Of(&m.Result)
		if !isTask || err != nil {
			t.Fatalf("no task in %s (%v)", msg, err)
		}
		return task
	}
	if task := taskOf(get("/json", "tools/call")); task.TaskID != "t-1" {
		t.Errorf("JSON answer: task %+v", task)
	}
	stream := get("/sse", "tools/call")
	events := strings.Split(strings.TrimSuffix(stream, "\n\n"), "\n\n")
	if len(events) != 2 || events[0] != "id: 1\nevent: message\ndata: "+progress {
		t.Fatalf("stream = %q", stream)
	}
	data, ok := strings.CutPrefix(events[1], "id: 2\nevent: message\ndata: ")
	if !ok {
		t.Fatalf("second event = %q", events[1])
	}
	if task := taskOf(data); task.Status != Working {
		t.Errorf("stream answer: task %+v", task)
	}
	if got := get("/json", "prompts/get"); got != answer {
		t.Errorf("an answer to prompts/get was changed: %s", got)
	}
}

// TestSetNameHeader: a tasks request gets Mcp-Name: <taskId> from its
// body; a tools/call keeps the go-sdk's.
func TestSetNameHeader(t *testing.T) {
	req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"taskId":"t-9"}}`))
	req.GetBody = func() (io.ReadCloser, error) {
		return io.NopCloser(strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"taskId":"t-9"}}`)), nil
	}
	req.Header.Set("Mcp-Method", "tasks/get")
	SetNameHeader(req)
	if got := req.Header.Get("Mcp-Name"); got != "t-9" {
		t.Errorf("Mcp-Name = %q, want t-9", got)
	}
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", "echo")
	SetNameHeader(req)
	if got := req.Header.Get("Mcp-Name"); got != "echo" {
		t.Errorf("Mcp-Name of a tools/call = %q", got)
	}
}
