package tasks

import (
	"bytes"
	"context"
	"encoding/json"
	"sync"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/freecode/freecode/internal/mcpwire"
)

// The tasks of the 2025-11-25 revision (SEP-1686, which the extension
// replaced) are what servers of that revision built on the TypeScript SDK
// have, server-everything's simulate-research-query among them. They differ
// from the extension's in four places, which this file bridges so that the
// rest of the package, and whoever follows a task, sees one kind of task:
//
//   - A tool says it runs as a task in its definition (execution.taskSupport
//     "required" or "optional"), and the client asks for one by a task field
//     in the tools/call's params; a required tool's call without it is
//     refused (-32601). The go-sdk drops execution from a tool and has no
//     field for the ask, so the transport notes the required tools as their
//     lists pass ([LegacyTools]) and adds the field to their calls.
//   - The answer is {"task": {...}}, without resultType: [Fold] folds it too.
//   - The task's ttl and pollInterval are named without "Ms" (same unit).
//   - tasks/get never holds the result: a task that ended is asked
//     tasks/result for it, which answers the tool's result or its JSON-RPC
//     error; and an input_required task's questions are the server's own
//     requests (elicitation/create, ...), which it sends while a tasks/result
//     is open ([NeedsResult], [Result]).
//
// Optional tools are called as before, in the call.

// MethodResult is the 2025-11-25 request for a task's result.
const MethodResult = "tasks/result"

// LegacyTools keeps which tools of a 2025-11-25 server must be called as
// tasks, from the pages of its tools/list as they pass. Safe for
// concurrent use.
type LegacyTools struct {
	mu       sync.Mutex
	required map[string]bool
	quoted   [][]byte // the required names as JSON strings, for mayRequire
}

// Note reads a JSON-RPC result; if it is a page of tools/list whose tools
// say their task support, it notes which require a task.
func (l *LegacyTools) Note(result json.RawMessage) {
	if !bytes.Contains(result, []byte(`"taskSupport"`)) {
		return // the common page, spared a decode
	}
	var page struct {
		Tools []struct {
			Name      string `json:"name"`
			Execution *struct {
				TaskSupport string `json:"taskSupport"`
			} `json:"execution"`
		} `json:"tools"`
	}
	if json.Unmarshal(result, &page) != nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, t := range page.Tools {
		if t.Execution != nil && t.Execution.TaskSupport == "required" {
			if l.required == nil {
				l.required = map[string]bool{}
			}
			l.required[t.Name] = true
		} else {
			delete(l.required, t.Name)
		}
	}
	l.quoted = l.quoted[:0]
	for name := range l.required {
		q, _ := json.Marshal(name) // a string always marshals
		l.quoted = append(l.quoted, q)
	}
}

// AskForTask returns the params of a tools/call with a task asked for, if
// the tool it calls requires one and the params do not ask already.
func (l *LegacyTools) AskForTask(params json.RawMessage) (json.RawMessage, bool) {
	var p map[string]json.RawMessage
	var name string
	if !l.mayRequire(params) || json.Unmarshal(params, &p) != nil || p["task"] != nil || json.Unmarshal(p["name"], &name) != nil || !l.requires(name) {
		return params, false
	}
	p["task"] = json.RawMessage(`{}`) // the server's own ttl
	out, err := json.Marshal(p)
	if err != nil {
		return params, false
	}
	return out, true
}

// mayRequire reports whether params may call a tool that requires a
// task: else the call is sent without being decoded, which on a server
// with such a tool (server-everything has one) was a map's decode per
// call. Params without an escape hold the name they call as it is,
// quoted, so a call whose params hold no required name, quoted, calls
// none of them.
func (l *LegacyTools) mayRequire(params json.RawMessage) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.required) == 0 {
		return false
	}
	if bytes.IndexByte(params, '\\') >= 0 {
		return true
	}
	for _, q := range l.quoted {
		if bytes.Contains(params, q) {
			return true
		}
	}
	return false
}

func (l *LegacyTools) requires(name string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.required[name]
}

// foldLegacy folds a 2025-11-25 task answer, {"task": {...}}, as Fold does
// the extension's: the task object, its fields named as the extension
// names them, under _meta["freecode/task"].
func foldLegacy(task json.RawMessage, meta map[string]json.RawMessage) (json.RawMessage, bool) {
	var st serverTask
	if json.Unmarshal(task, &st) != nil || st.TaskID == "" {
		return nil, false
	}
	t, _ := st.task()
	b, err := json.Marshal(t)
	if err != nil {
		return nil, false
	}
	if meta == nil {
		meta = map[string]json.RawMessage{}
	}
	meta[metaKey] = b
	out, err := json.Marshal(struct {
		Content []any                      `json:"content"`
		Meta    map[string]json.RawMessage `json:"_meta"`
	}{[]any{}, meta})
	if err != nil {
		return nil, false
	}
	return out, true
}

// NeedsResult reports whether t is a 2025-11-25 task whose next step is
// tasks/result: it ended and tasks/get did not say how, or it waits for
// input without saying for what (its server asks while a tasks/result is
// open).
func NeedsResult(t *Task) bool {
	switch {
	case t.Result != nil || t.Error != nil:
		return false
	case t.Status == Completed, t.Status == Failed:
		return true
	case t.Status == InputRequired:
		return len(t.InputRequests) == 0
	}
	return false
}

// Result asks the server for a task's result (tasks/result, 2025-11-25).
// The server answers once the task has ended: the tool's result, or the
// JSON-RPC error of the call.
func Result(ctx context.Context, cs *mcpsdk.ClientSession, id string) (*mcpsdk.CallToolResult, error) {
	return mcpsdk.CallCustomMethod[*mcpwire.TaskParams, *mcpsdk.CallToolResult](ctx, cs, MethodResult, &mcpwire.TaskParams{TaskID: id})
}
