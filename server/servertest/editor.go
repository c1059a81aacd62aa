package servertest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	lsp "go.lsp.dev/protocol"

	"github.com/freecode/freecode/internal/frontend"
	"github.com/freecode/freecode/internal/protocol"
)

// EditorOptions configure a fake editor.
type EditorOptions struct {
	// Folders are its workspace folders (default: the sandbox's project).
	Folders []string
	// Token, if set, replaces the token it presents.
	Token *string
	// NoPermission makes it a frontend that does not implement
	// freecode/permission/request.
	NoPermission bool
	// NoInitialize leaves Run's first frontend connected but not
	// initialized.
	NoInitialize bool
	// Hold, if set, makes a frontend that falls behind: at the first
	// notification it gets, it stops reading until Hold is closed.
	Hold <-chan struct{}
	// Elicit, Sample and ShowDocument, if set, answer the sidecar's
	// freecode/elicitation/request, freecode/sampling/request and
	// window/showDocument, and are declared in initialize; Capabilities,
	// if set, is declared in place of what they say (see
	// frontend.Options).
	Elicit       func(ctx context.Context, req *protocol.ElicitationRequest) (*protocol.ElicitationResponse, error)
	Sample       func(ctx context.Context, req *protocol.SamplingRequest) (*protocol.SamplingResult, error)
	ShowDocument func(ctx context.Context, p *lsp.ShowDocumentParams) (*lsp.ShowDocumentResult, error)
	Capabilities *protocol.ClientCapabilities
}

// Answer is a fake editor's answer to a permission prompt. It may block,
// as a user who takes their time; ctx ends when the sidecar stops waiting.
type Answer func(ctx context.Context, req *protocol.PermissionRequest) (*protocol.PermissionResponse, error)

// Reply is the Answer that always answers d.
func Reply(d protocol.PermissionDecision) Answer {
	return func(context.Context, *protocol.PermissionRequest) (*protocol.PermissionResponse, error) {
		return &protocol.PermissionResponse{Decision: d}, nil
	}
}

// Editor is a fake editor: a frontend.Client that keeps the sidecar's
// notifications for the test to await and answers its permission prompts
// with the Answer set (deny until one is).
type Editor struct {
	*frontend.Client
	Name string
	t    *testing.T
	rwc  io.Closer // what Vanish closes
	// fopts are its options, kept for connectTab.
	fopts *frontend.Options

	// mu guards the fields below.
	mu      sync.Mutex
	notes   []frontend.Notification
	changed chan struct{}  // closed and replaced when a note or a prompt comes
	cursors map[string]int // by stream: its notes before it were consumed by an Await
	prompts []protocol.PermissionRequest
	answer  Answer
}

// newEditor returns an editor over rwc; with rwc nil, its caller connects
// it (connectTab).
func newEditor(t *testing.T, name string, rwc io.ReadWriteCloser, fopts *frontend.Options, log io.Writer, o *EditorOptions) *Editor {
	ed := &Editor{Name: name, t: t, rwc: rwc, fopts: fopts, changed: make(chan struct{}), cursors: map[string]int{}, answer: Reply(protocol.Deny)}
	var mu sync.Mutex
	fopts.Trace = func(dir protocol.Direction, body []byte) {
		mu.Lock()
		fmt.Fprintf(log, "%s %s %s\n", name, dir, body)
		mu.Unlock()
		if o.Hold != nil && dir == protocol.Received && isNotification(body) {
			// The trace runs on the read loop: holding it holds the
			// connection, and the sidecar's writes wait.
			<-o.Hold
		}
	}
	fopts.OnNotification = ed.note
	if !o.NoPermission {
		fopts.OnPermission = ed.prompt
	}
	fopts.OnElicitation, fopts.OnSampling, fopts.OnShowDocument = o.Elicit, o.Sample, o.ShowDocument
	fopts.Capabilities = o.Capabilities
	if rwc != nil {
		ed.Client = frontend.New(rwc, fopts)
	}
	return ed
}

// isNotification reports whether a message is a notification: it has a
// method and no id.
func isNotification(body []byte) bool {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	return json.Unmarshal(body, &m) == nil && m.ID == nil && m.Method != ""
}

func (ed *Editor) note(n frontend.Notification) {
	ed.mu.Lock()
	defer ed.mu.Unlock()
	ed.notes = append(ed.notes, n)
	close(ed.changed)
	ed.changed = make(chan struct{})
}

func (ed *Editor) prompt(ctx context.Context, req *protocol.PermissionRequest) (*protocol.PermissionResponse, error) {
	ed.mu.Lock()
	ed.prompts = append(ed.prompts, *req)
	answer := ed.answer
	close(ed.changed)
	ed.changed = make(chan struct{})
	ed.mu.Unlock()
	return answer(ctx, req)
}

// SetAnswer sets how the editor answers the prompts to come.
func (ed *Editor) SetAnswer(a Answer) {
	ed.mu.Lock()
	defer ed.mu.Unlock()
	ed.answer = a
}

// Prompts returns the permission prompts the editor got so far.
func (ed *Editor) Prompts() []protocol.PermissionRequest {
	ed.mu.Lock()
	defer ed.mu.Unlock()
	return append([]protocol.PermissionRequest(nil), ed.prompts...)
}

// Vanish drops the editor's connection at once, as an editor that crashes
// does: nothing is said, nothing is waited for.
func (ed *Editor) Vanish() {
	ed.rwc.Close()
}

// waitChange waits for the next note or prompt.
func (ed *Editor) waitChange(ch <-chan struct{}, timer *time.Timer, what, stream string) {
	ed.t.Helper()
	select {
	case <-ch:
	case <-timer.C:
		ed.t.Fatalf("%s: no %s within %v; notifications since the last await:\n%s", ed.Name, what, HangGuard, ed.describe(stream))
	}
}

// AwaitPrompts waits until the editor has had n prompts, and returns them.
func (ed *Editor) AwaitPrompts(n int) []protocol.PermissionRequest {
	ed.t.Helper()
	timer := time.NewTimer(HangGuard)
	defer timer.Stop()
	for {
		ed.mu.Lock()
		got, ch := len(ed.prompts), ed.changed
		ed.mu.Unlock()
		if got >= n {
			return ed.Prompts()
		}
		ed.waitChange(ch, timer, fmt.Sprintf("%d permission prompts", n), "")
	}
}

// Await waits for a notification of the stream for which match is true,
// from those an earlier Await of the stream did not consume, and consumes
// it and those before it. A stream is a name for a sequence that the test
// follows (a server's statuses, the tools changes, …): awaiting one server's
// state consumes nothing of another's.
func (ed *Editor) Await(stream, what string, match func(frontend.Notification) bool) frontend.Notification {
	ed.t.Helper()
	timer := time.NewTimer(HangGuard)
	defer timer.Stop()
	for {
		ed.mu.Lock()
		for i := ed.cursors[stream]; i < len(ed.notes); i++ {
			if match(ed.notes[i]) {
				ed.cursors[stream] = i + 1
				n := ed.notes[i]
				ed.mu.Unlock()
				return n
			}
		}
		ch := ed.changed
		ed.mu.Unlock()
		ed.waitChange(ch, timer, what, stream)
	}
}

// Mark returns a position in the notifications, for Since.
func (ed *Editor) Mark() int {
	ed.mu.Lock()
	defer ed.mu.Unlock()
	return len(ed.notes)
}

// Since returns the notifications of method that came since mark.
func (ed *Editor) Since(mark int, method string) []frontend.Notification {
	ed.mu.Lock()
	defer ed.mu.Unlock()
	var out []frontend.Notification
	for _, n := range ed.notes[mark:] {
		if n.Method == method {
			out = append(out, n)
		}
	}
	return out
}

// describe lists the notifications the stream did not consume.
func (ed *Editor) describe(stream string) string {
	ed.mu.Lock()
	defer ed.mu.Unlock()
	var b strings.Builder
	for _, n := range ed.notes[ed.cursors[stream]:] {
		fmt.Fprintf(&b, "  %s %s\n", n.Method, n.Params)
	}
	return b.String()
}

// decodeAs decodes a notification's params, failing the test if it cannot.
func decodeAs[T any](t *testing.T, n frontend.Notification) T {
	t.Helper()
	var v T
	if err := n.Decode(&v); err != nil {
		t.Fatalf("%s: %v: %s", n.Method, err, n.Params)
	}
	return v
}

// AwaitStatus waits for a freecode/servers/status of server in state.
func (ed *Editor) AwaitStatus(server string, state protocol.ServerState) protocol.ServerStatus {
	ed.t.Helper()
	n := ed.Await("status "+server, fmt.Sprintf("status %s of %s", state, server), func(n frontend.Notification) bool {
		var st protocol.ServerStatus
		return n.Method == protocol.NotifyServersStatus && json.Unmarshal(n.Params, &st) == nil && st.Name == server && st.State == state
	})
	return decodeAs[protocol.ServerStatus](ed.t, n)
}

// AwaitToolsChanged waits for a freecode/tools/changed for which match
// (nil: any) is true.
func (ed *Editor) AwaitToolsChanged(match func(protocol.ToolsChanged) bool) protocol.ToolsChanged {
	ed.t.Helper()
	n := ed.Await("tools changed", "tools changed", func(n frontend.Notification) bool {
		var tc protocol.ToolsChanged
		return n.Method == protocol.NotifyToolsChanged && json.Unmarshal(n.Params, &tc) == nil && (match == nil || match(tc))
	})
	return decodeAs[protocol.ToolsChanged](ed.t, n)
}

// AwaitProblems waits for the freecode/config/problems of the file at path.
func (ed *Editor) AwaitProblems(path string) protocol.ConfigProblems {
	ed.t.Helper()
	n := ed.Await("problems "+path, "problems of "+path, func(n frontend.Notification) bool {
		var cp protocol.ConfigProblems
		return n.Method == protocol.NotifyConfigProblems && json.Unmarshal(n.Params, &cp) == nil && cp.Path == path
	})
	return decodeAs[protocol.ConfigProblems](ed.t, n)
}

// AwaitLogMessage waits for a window/logMessage holding text.
func (ed *Editor) AwaitLogMessage(text string) lsp.LogMessageParams {
	ed.t.Helper()
	n := ed.Await("logMessage", "window/logMessage with "+text, func(n frontend.Notification) bool {
		var lm lsp.LogMessageParams
		return n.Method == protocol.MethodLogMessage && n.Decode(&lm) == nil && strings.Contains(lm.Message, text)
	})
	return decodeAs[lsp.LogMessageParams](ed.t, n)
}

// AwaitLog waits for a freecode/servers/log line of server holding text.
func (ed *Editor) AwaitLog(server, text string) protocol.ServerLog {
	ed.t.Helper()
	n := ed.Await("log "+server, fmt.Sprintf("log line of %s with %q", server, text), func(n frontend.Notification) bool {
		var l protocol.ServerLog
		return n.Method == protocol.NotifyServersLog && json.Unmarshal(n.Params, &l) == nil && l.Name == server && strings.Contains(l.Message, text)
	})
	return decodeAs[protocol.ServerLog](ed.t, n)
}

// AwaitReviews waits for a freecode/tools/reviewNeeded of server for which
// match (nil: any) is true.
func (ed *Editor) AwaitReviews(server string, match func(protocol.ReviewNeeded) bool) protocol.ReviewNeeded {
	ed.t.Helper()
	n := ed.Await("reviews "+server, "reviews of "+server, func(n frontend.Notification) bool {
		var rn protocol.ReviewNeeded
		return n.Method == protocol.NotifyReviewNeeded && json.Unmarshal(n.Params, &rn) == nil && rn.Server == server && (match == nil || match(rn))
	})
	return decodeAs[protocol.ReviewNeeded](ed.t, n)
}

// AwaitRulesReview waits for a freecode/rules/reviewNeeded for which match
// (nil: any) is true.
func (ed *Editor) AwaitRulesReview(match func(protocol.RulesReview) bool) protocol.RulesReview {
	ed.t.Helper()
	n := ed.Await("rules review", "the project's rules awaiting review", func(n frontend.Notification) bool {
		var rr protocol.RulesReview
		return n.Method == protocol.NotifyRulesReview && json.Unmarshal(n.Params, &rr) == nil && (match == nil || match(rr))
	})
	return decodeAs[protocol.RulesReview](ed.t, n)
}

// AwaitTask waits for a freecode/tasks/changed of the task taskID in
// status.
func (ed *Editor) AwaitTask(taskID string, status protocol.TaskStatus) protocol.TaskInfo {
	ed.t.Helper()
	n := ed.Await("task "+taskID, fmt.Sprintf("task %s %s", taskID, status), func(n frontend.Notification) bool {
		var ti protocol.TaskInfo
		return n.Method == protocol.NotifyTasksChanged && json.Unmarshal(n.Params, &ti) == nil && ti.TaskID == taskID && ti.Status == status
	})
	return decodeAs[protocol.TaskInfo](ed.t, n)
}
