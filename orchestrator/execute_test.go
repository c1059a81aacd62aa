package orchestrator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// span is when a call ran, in seconds of fake time since the batch began.
type span struct{ Start, End int }

// TestBatching proves the scheduling rule with fake time: consecutive
// read-only calls overlap, a destructive call waits for them and runs alone,
// and results keep the batch's order.
func TestBatching(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fc := newFakeRunner()
		reg := NewRegistry(nil)
		reg.SetServerTools("demo", []*mcpsdk.Tool{
			tool("r1", true, ""), tool("r2", true, ""), tool("r3", true, ""), tool("r4", true, ""),
			tool("r5", true, ""), tool("r6", true, ""), tool("del", false, ""),
		}, fc)
		begin := time.Now()
		var mu sync.Mutex
		spans := map[string]span{}
		for _, name := range []string{"r1", "r2", "r3", "r4", "r5", "r6", "del"} {
			fc.handle(name, func(ctx context.Context, _ map[string]any, _ func(Progress)) (*mcpsdk.CallToolResult, error) {
				start := int(time.Since(begin) / time.Second)
				time.Sleep(time.Second)
				mu.Lock()
				spans[name] = span{start, int(time.Since(begin) / time.Second)}
				mu.Unlock()
				return textResult(name), nil
			})
		}
		var calls []ToolCall
		for i, name := range []string{"r1", "r2", "r3", "r4", "del", "r5", "r6"} {
			calls = append(calls, ToolCall{CallID: fmt.Sprint("c", i), Tool: "mcp__demo__" + name})
		}
		ap := &recordingApprover{answer: Answer{Decision: AllowOnce}}
		o := New(reg, nil)
		results := o.Execute(t.Context(), calls, &ExecOptions{Approver: ap})

		want := map[string]span{
			"r1": {0, 1}, "r2": {0, 1}, "r3": {0, 1}, "r4": {0, 1},
			"del": {1, 2},
			"r5":  {2, 3}, "r6": {2, 3},
		}
		if diff := cmp.Diff(want, spans); diff != "" {
			t.Errorf("spans (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]string{"c0", "c1", "c2", "c3", "c4", "c5", "c6"}, callIDs(results)); diff != "" {
			t.Errorf("result order (-want +got):\n%s", diff)
		}
		for i, name := range []string{"r1", "r2", "r3", "r4", "del", "r5", "r6"} {
			mustNotError(t, results[i])
			if got := results[i].Text(); got != name {
				t.Errorf("result %d = %q, want %q", i, got, name)
			}
		}
		wantDec := []Decision{DecisionAllowed, DecisionAllowed, DecisionAllowed, DecisionAllowed, DecisionAsked, DecisionAllowed, DecisionAllowed}
		if diff := cmp.Diff(wantDec, decisions(results)); diff != "" {
			t.Errorf("decisions (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]string{"mcp__demo__del"}, ap.asked()); diff != "" {
			t.Errorf("approver asked (-want +got):\n%s", diff)
		}
		if got := results[4].DurationMs; got != 1000 {
			t.Errorf("durationMs of del = %d, want 1000", got)
		}
	})
}

// TestParallelLimit checks that at most MaxParallel read-only calls run at once.
func TestParallelLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fc := newFakeRunner()
		reg := NewRegistry(nil)
		reg.SetServerTools("demo", []*mcpsdk.Tool{tool("r", true, "")}, fc)
		begin := time.Now()
		var mu sync.Mutex
		starts := map[int]int{} // second → calls started then
		fc.handle("r", func(ctx context.Context, _ map[string]any, _ func(Progress)) (*mcpsdk.CallToolResult, error) {
			mu.Lock()
			starts[int(time.Since(begin)/time.Second)]++
			mu.Unlock()
			time.Sleep(time.Second)
			return textResult("r"), nil
		})
		calls := make([]ToolCall, 11)
		for i := range calls {
			calls[i] = ToolCall{CallID: fmt.Sprint(i), Tool: "mcp__demo__r"}
		}
		New(reg, &Options{MaxParallel: 4}).Execute(t.Context(), calls, nil)
		if diff := cmp.Diff(map[int]int{0: 4, 1: 4, 2: 3}, starts); diff != "" {
			t.Errorf("calls started per second (-want +got):\n%s", diff)
		}

		// Without MaxParallel, the default: 8 at a time.
		clear(starts)
		begin = time.Now()
		New(reg, nil).Execute(t.Context(), append(calls, calls[:6]...), nil)
		if diff := cmp.Diff(map[int]int{0: 8, 1: 8, 2: 1}, starts); diff != "" {
			t.Errorf("default limit: calls started per second (-want +got):\n%s", diff)
		}

		// Changed at run time (config.json's mcp.maxParallel edited), then
		// back to the default.
		o := New(reg, &Options{MaxParallel: 4})
		for _, tc := range []struct {
			n    int
			want map[int]int
		}{{2, map[int]int{0: 2, 1: 2, 2: 2, 3: 2, 4: 2, 5: 1}}, {0, map[int]int{0: 8, 1: 3}}} {
			o.SetMaxParallel(tc.n)
			clear(starts)
			begin = time.Now()
			o.Execute(t.Context(), calls, nil)
			if diff := cmp.Diff(tc.want, starts); diff != "" {
				t.Errorf("SetMaxParallel(%d): calls started per second (-want +got):\n%s", tc.n, diff)
			}
		}
	})
}

// TestRetryKeepsHardDeadline: the retry of a read-only call runs under the
// call's one hard cap (4× toolTimeout from the first attempt's start), not
// a fresh one: progress cannot stretch a call beyond it by losing the
// connection.
func TestRetryKeepsHardDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fc := newFakeRunner()
		fc.timeout = 10 * time.Second
		reg := NewRegistry(nil)
		reg.SetServerTools("demo", []*mcpsdk.Tool{tool("r", true, "")}, fc)
		fc.handle("r", func(ctx context.Context, _ map[string]any, onProgress func(Progress)) (*mcpsdk.CallToolResult, error) {
			// Progress every 8 s; the first attempt loses its connection
			// after 30 s, the second would finish after an hour.
			end := time.After(time.Hour)
			if fc.count("r") == 1 {
				end = time.After(30 * time.Second)
			}
			tk := time.NewTicker(8 * time.Second)
			defer tk.Stop()
			for {
				select {
				case <-tk.C:
					onProgress(Progress{Progress: 1})
				case <-end:
					if fc.count("r") == 1 {
						return nil, fmt.Errorf("calling r: %w: EOF", ErrConnectionLost)
					}
					return textResult("finished"), nil
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			}
		})
		begin := time.Now()
		rs := New(reg, nil).Execute(t.Context(), []ToolCall{{CallID: "1", Tool: "mcp__demo__r"}}, nil)
		if want := "mcp__demo__r timed out after 40000 ms (progress extended its 10000 ms timeout to the limit of 4×)"; rs[0].Text() != want {
			t.Errorf("result = %q, want %q", rs[0].Text(), want)
		}
		if got := time.Since(begin); got != 40*time.Second {
			t.Errorf("returned after %v, want 40s", got)
		}
		if got := fc.count("r"); got != 2 {
			t.Errorf("server saw %d calls, want 2 (one retry)", got)
		}
	})
}

// TestRetry: a read-only or idempotent call that lost its connection is
// retried once; any other is never retried, and its result says "outcome
// unknown, not retried".
func TestRetry(t *testing.T) {
	fc := newFakeRunner()
	reg := NewRegistry(nil)
	put := tool("put", false, "")
	put.Annotations = &mcpsdk.ToolAnnotations{IdempotentHint: true}
	reg.SetServerTools("demo", []*mcpsdk.Tool{tool("read", true, ""), tool("write", false, ""), tool("flaky", true, ""), put}, fc)
	lostOnce := func(name string) func(context.Context, map[string]any, func(Progress)) (*mcpsdk.CallToolResult, error) {
		return func(context.Context, map[string]any, func(Progress)) (*mcpsdk.CallToolResult, error) {
			if fc.count(name) == 1 {
				return nil, fmt.Errorf("calling %s on demo: %w: EOF", name, ErrConnectionLost)
			}
			return textResult("done " + name), nil
		}
	}
	fc.handle("read", lostOnce("read"))
	fc.handle("write", lostOnce("write"))
	fc.handle("put", lostOnce("put"))
	fc.handle("flaky", func(context.Context, map[string]any, func(Progress)) (*mcpsdk.CallToolResult, error) {
		return nil, fmt.Errorf("calling flaky on demo: %w: EOF", ErrConnectionLost)
	})
	o := New(reg, nil)
	rs := o.Execute(t.Context(), []ToolCall{
		{CallID: "1", Tool: "mcp__demo__read"},
		{CallID: "2", Tool: "mcp__demo__write"},
		{CallID: "3", Tool: "mcp__demo__flaky"},
		{CallID: "4", Tool: "mcp__demo__put"},
	}, &ExecOptions{Approver: &recordingApprover{answer: Answer{Decision: AllowOnce}}})

	mustNotError(t, rs[0])
	if got := rs[0].Text(); got != "done read" {
		t.Errorf("read result = %q, want the retry's", got)
	}
	if !rs[1].IsError || !rs[1].OutcomeUnknown || !strings.Contains(rs[1].Text(), "may or may not have run") || !strings.Contains(rs[1].Text(), OutcomeUnknownText) {
		t.Errorf("write result = %v %v %q, want an error saying %q and that it may have run", rs[1].IsError, rs[1].OutcomeUnknown, rs[1].Text(), OutcomeUnknownText)
	}
	if !rs[2].IsError || rs[2].OutcomeUnknown || !strings.Contains(rs[2].Text(), "retried once") {
		t.Errorf("flaky result = %v %v %q, want an error saying it was retried once", rs[2].IsError, rs[2].OutcomeUnknown, rs[2].Text())
	}
	mustNotError(t, rs[3])
	if got := rs[3].Text(); got != "done put" {
		t.Errorf("put result = %q, want the retry's", got)
	}
	got := map[string]int{"read": fc.count("read"), "write": fc.count("write"), "flaky": fc.count("flaky"), "put": fc.count("put")}
	if diff := cmp.Diff(map[string]int{"read": 2, "write": 1, "flaky": 2, "put": 2}, got); diff != "" {
		t.Errorf("calls the server saw (-want +got):\n%s", diff)
	}
}

// TestValidationRejectsBeforeServer: invalid arguments never reach the
// server, and the result lists every error with its path.
func TestValidationRejectsBeforeServer(t *testing.T) {
	fc := newFakeRunner()
	reg := NewRegistry(nil)
	schema := `{"type":"object","properties":{"path":{"type":"string"},"mode":{"enum":["a","b"]},"n":{"type":"integer"}},"required":["path"]}`
	reg.SetServerTools("demo", []*mcpsdk.Tool{tool("read", true, schema)}, fc)
	o := New(reg, nil)
	rs := o.Execute(t.Context(), []ToolCall{
		{CallID: "bad", Tool: "mcp__demo__read", Arguments: json.RawMessage(`{"mode":"c","n":"x"}`)},
		{CallID: "notobj", Tool: "mcp__demo__read", Arguments: json.RawMessage(`[1]`)},
		{CallID: "unknown", Tool: "mcp__demo__nope"},
		{CallID: "good", Tool: "mcp__demo__read", Arguments: json.RawMessage(`{"path":"a","n":12345678901234567890}`)},
	}, nil)
	if diff := cmp.Diff([]Decision{DecisionInvalid, DecisionInvalid, DecisionInvalid, DecisionAllowed}, decisions(rs)); diff != "" {
		t.Errorf("decisions (-want +got):\n%s", diff)
	}
	text := rs[0].Text()
	for _, want := range []string{"path", "/mode", "/n", "3 errors", "not called"} {
		if !strings.Contains(text, want) {
			t.Errorf("invalid result does not mention %q:\n%s", want, text)
		}
	}
	if !strings.Contains(rs[2].Text(), "no such tool") {
		t.Errorf("unknown tool result = %q", rs[2].Text())
	}
	if got := fc.count("read"); got != 1 {
		t.Errorf("server saw %d calls, want 1 (only the valid one)", got)
	}
}

// TestNullArgumentLeftOut: a null the schema refuses is an argument not
// given; one the schema takes reaches the server; a required one stays
// invalid.
func TestNullArgumentLeftOut(t *testing.T) {
	fc := newFakeRunner()
	reg := NewRegistry(nil)
	schema := `{"type":"object","properties":{"path":{"type":"string"},"verbose":{"type":"boolean"},"note":{"type":["string","null"]}},"required":["path"]}`
	reg.SetServerTools("demo", []*mcpsdk.Tool{tool("read", true, schema)}, fc)
	var (
		mu  sync.Mutex
		got = map[string]map[string]any{} // by path: read-only calls run at once
	)
	fc.handle("read", func(_ context.Context, args map[string]any, _ func(Progress)) (*mcpsdk.CallToolResult, error) {
		mu.Lock()
		defer mu.Unlock()
		got[fmt.Sprint(args["path"])] = args
		return textResult("ok"), nil
	})
	rs := New(reg, nil).Execute(t.Context(), []ToolCall{
		{CallID: "optional", Tool: "mcp__demo__read", Arguments: json.RawMessage(`{"path":"a","verbose":null}`)},
		{CallID: "nullable", Tool: "mcp__demo__read", Arguments: json.RawMessage(`{"path":"b","note":null}`)},
		{CallID: "required", Tool: "mcp__demo__read", Arguments: json.RawMessage(`{"path":null,"verbose":null}`)},
	}, nil)
	if diff := cmp.Diff([]Decision{DecisionAllowed, DecisionAllowed, DecisionInvalid}, decisions(rs)); diff != "" {
		t.Errorf("decisions (-want +got):\n%s", diff)
	}
	want := map[string]map[string]any{"a": {"path": "a"}, "b": {"path": "b", "note": nil}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("arguments the server got (-want +got):\n%s", diff)
	}
	if text := rs[2].Text(); !strings.Contains(text, "/path") {
		t.Errorf("a null required argument is not reported: %s", text)
	}
}

// TestLargeIntegerArgument: numbers reach the server as written.
func TestLargeIntegerArgument(t *testing.T) {
	fc := newFakeRunner()
	reg := NewRegistry(nil)
	reg.SetServerTools("demo", []*mcpsdk.Tool{tool("read", true, `{"type":"object","properties":{"n":{"type":"integer"}}}`)}, fc)
	var got any
	fc.handle("read", func(_ context.Context, args map[string]any, _ func(Progress)) (*mcpsdk.CallToolResult, error) {
		got = args["n"]
		return textResult("ok"), nil
	})
	rs := New(reg, nil).Execute(t.Context(), []ToolCall{{CallID: "1", Tool: "mcp__demo__read", Arguments: json.RawMessage(`{"n":12345678901234567890}`)}}, nil)
	mustNotError(t, rs[0])
	if b, _ := json.Marshal(got); string(b) != "12345678901234567890" {
		t.Errorf("server got n = %s", b)
	}
}

// TestTimeoutRestartedByProgress: toolTimeout restarts on each progress
// notification, up to 4× toolTimeout in all.
func TestTimeoutRestartedByProgress(t *testing.T) {
	tests := []struct {
		name     string
		every    time.Duration // progress period; 0 = none
		finishAt time.Duration
		want     string // result text
		wantAt   time.Duration
		progress int
		// stopAfter, if set, stops progress after that many notifications.
		stopAfter int
	}{
		{name: "no progress times out", finishAt: time.Minute, want: "mcp__demo__slow timed out after 10000 ms", wantAt: 10 * time.Second},
		{name: "progress keeps it alive", every: 8 * time.Second, finishAt: 30 * time.Second, want: "finished", wantAt: 30 * time.Second, progress: 3},
		{name: "finishes within the timeout", finishAt: 9 * time.Second, want: "finished", wantAt: 9 * time.Second},
		{name: "progress extends at most 4x", every: 8 * time.Second, finishAt: time.Hour,
			want: "mcp__demo__slow timed out after 40000 ms (progress extended its 10000 ms timeout to the limit of 4×)", wantAt: 40 * time.Second, progress: 5},
		{name: "progress stops", every: 8 * time.Second, stopAfter: 2, finishAt: time.Hour, want: "mcp__demo__slow timed out after 10000 ms", wantAt: 26 * time.Second, progress: 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				fc := newFakeRunner()
				fc.timeout = 10 * time.Second
				reg := NewRegistry(nil)
				reg.SetServerTools("demo", []*mcpsdk.Tool{tool("slow", true, "")}, fc)
				fc.handle("slow", func(ctx context.Context, _ map[string]any, onProgress func(Progress)) (*mcpsdk.CallToolResult, error) {
					deadline := time.After(tc.finishAt)
					var tick <-chan time.Time
					if tc.every > 0 {
						tk := time.NewTicker(tc.every)
						defer tk.Stop()
						tick = tk.C
					}
					for n := 1; ; n++ {
						select {
						case <-deadline:
							return textResult("finished"), nil
						case <-tick:
							if tc.stopAfter == 0 || n <= tc.stopAfter {
								onProgress(Progress{Progress: float64(n)})
							}
						case <-ctx.Done():
							return nil, ctx.Err()
						}
					}
				})
				var mu sync.Mutex
				relayed := 0
				begin := time.Now()
				rs := New(reg, nil).Execute(t.Context(), []ToolCall{{CallID: "1", Tool: "mcp__demo__slow"}}, &ExecOptions{
					OnProgress: func(callID string, p Progress) {
						mu.Lock()
						defer mu.Unlock()
						if callID != "1" || p.Progress != float64(relayed+1) {
							t.Errorf("relayed progress %s %v after %d", callID, p, relayed)
						}
						relayed++
					},
				})
				if got := rs[0].Text(); got != tc.want {
					t.Errorf("result = %q, want %q", got, tc.want)
				}
				if rs[0].IsError != strings.Contains(tc.want, "timed out") {
					t.Errorf("isError = %v", rs[0].IsError)
				}
				if got := time.Since(begin); got != tc.wantAt {
					t.Errorf("returned after %v, want %v", got, tc.wantAt)
				}
				if relayed != tc.progress {
					t.Errorf("relayed %d progress notifications, want %d", relayed, tc.progress)
				}
			})
		})
	}
}

// TestCancel: cancelling the batch cancels the running call and fails the
// calls that have not started.
func TestCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fc := newFakeRunner()
		reg := NewRegistry(nil)
		reg.SetServerTools("demo", []*mcpsdk.Tool{tool("slow", true, ""), tool("write", false, "")}, fc)
		fc.handle("slow", func(ctx context.Context, _ map[string]any, _ func(Progress)) (*mcpsdk.CallToolResult, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		})
		ctx, cancel := context.WithCancel(t.Context())
		time.AfterFunc(time.Second, cancel)
		rs := New(reg, nil).Execute(ctx, []ToolCall{{CallID: "1", Tool: "mcp__demo__slow"}, {CallID: "2", Tool: "mcp__demo__write"}},
			&ExecOptions{Approver: &recordingApprover{answer: Answer{Decision: AllowOnce}}})
		if !rs[0].IsError || !strings.Contains(rs[0].Text(), "cancelled") {
			t.Errorf("running call: %v %q", rs[0].IsError, rs[0].Text())
		}
		if !rs[1].IsError || !strings.Contains(rs[1].Text(), "cancelled before") || fc.count("write") != 0 {
			t.Errorf("pending call: %v %q, server saw it %d times", rs[1].IsError, rs[1].Text(), fc.count("write"))
		}
	})
}

// TestTruncation: text beyond maxResultChars is cut; the whole text is
// saved to a 0600 file that the note names.
func TestTruncation(t *testing.T) {
	fc := newFakeRunner()
	reg := NewRegistry(nil)
	reg.SetServerTools("demo", []*mcpsdk.Tool{tool("big", true, "")}, fc)
	img := &mcpsdk.ImageContent{Data: []byte{1, 2, 3}, MIMEType: "image/png"}
	fc.handle("big", func(context.Context, map[string]any, func(Progress)) (*mcpsdk.CallToolResult, error) {
		return &mcpsdk.CallToolResult{Content: []mcpsdk.Content{
			&mcpsdk.TextContent{Text: "héllo wörld"}, // 11 characters
			img,
			&mcpsdk.TextContent{Text: strings.Repeat("x", 20)},
		}}, nil
	})
	dir := filepath.Join(t.TempDir(), "results")
	if err := os.Mkdir(dir, 0o755); err != nil { // too open: it is tightened
		t.Fatal(err)
	}
	rs := New(reg, &Options{MaxResultChars: 15, ResultsDir: dir}).Execute(t.Context(), []ToolCall{{CallID: "c/1", Tool: "mcp__demo__big"}}, nil)
	r := rs[0]
	mustNotError(t, r)
	if r.Truncated == nil || r.Truncated.SavedTo == "" {
		t.Fatalf("truncated = %+v", r.Truncated)
	}
	if diff := cmp.Diff(Truncated{ShownChars: 15, TotalChars: 31, SavedTo: r.Truncated.SavedTo}, *r.Truncated); diff != "" {
		t.Errorf("truncated (-want +got):\n%s", diff)
	}
	if len(r.Content) != 4 || r.Content[1] != img {
		t.Fatalf("content = %#v, want text, the image, cut text, note", r.Content)
	}
	if got := r.Content[2].(*mcpsdk.TextContent).Text; got != "xxxx" {
		t.Errorf("cut text = %q", got)
	}
	note := r.Content[3].(*mcpsdk.TextContent).Text
	for _, want := range []string{"15 of 31", "16 cut", r.Truncated.SavedTo} {
		if !strings.Contains(note, want) {
			t.Errorf("note %q does not mention %q", note, want)
		}
	}
	data, err := os.ReadFile(r.Truncated.SavedTo)
	if err != nil {
		t.Fatal(err)
	}
	if want := "héllo wörld\n" + strings.Repeat("x", 20); string(data) != want {
		t.Errorf("saved %q, want %q", data, want)
	}
	if fi, err := os.Stat(r.Truncated.SavedTo); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("saved file mode = %v (%v), want 0600", fi.Mode().Perm(), err)
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("results dir mode = %v (%v), want 0700", fi.Mode().Perm(), err)
	}
	if !regexp.MustCompile(`^c_1-[0-9a-f]{32}\.txt$`).MatchString(filepath.Base(r.Truncated.SavedTo)) || filepath.Dir(r.Truncated.SavedTo) != dir {
		t.Errorf("saved to %q, want a file in %q named after the call and 128 random bits", r.Truncated.SavedTo, dir)
	}
}

// TestApprover covers the ask paths without rule files: nobody to ask,
// the user denies, allows once, and the approver failing.
func TestApprover(t *testing.T) {
	tests := []struct {
		name     string
		approver Approver
		wantDec  Decision
		wantText string
		wantSeen int
	}{
		{name: "no approver", wantDec: DecisionDenied, wantText: `add "mcp__demo__delete_file" to permissions.allow in `},
		{name: "user denies", approver: &recordingApprover{answer: Answer{Decision: Deny}}, wantDec: DecisionDenied, wantText: "denied by the user"},
		{name: "allow once", approver: &recordingApprover{answer: Answer{Decision: AllowOnce}}, wantDec: DecisionAsked, wantText: "ok delete_file", wantSeen: 1},
		{name: "approver fails", approver: &recordingApprover{err: errors.New("method not found")}, wantDec: DecisionDenied, wantText: "counts as a denial"},
		{name: "approver panics", approver: ApproverFunc(func(context.Context, Request) (Answer, error) { panic("bug") }), wantDec: DecisionDenied, wantText: "approver panicked: bug"},
		// The first round of an input_required ask is no failure: the
		// client calls again with the answer.
		{name: "asked in another round", approver: &recordingApprover{err: fmt.Errorf("%w (an input_required result)", ErrAskedLater)}, wantDec: DecisionDenied,
			wantText: "mcp__demo__delete_file was not run yet: it waits for the permission answer; the user is asked in another round (an input_required result)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fc := newFakeRunner()
			reg := NewRegistry(nil)
			reg.SetServerTools("demo", []*mcpsdk.Tool{tool("delete_file", false, `{"type":"object","properties":{"path":{"type":"string"}}}`)}, fc)
			rs := New(reg, nil).Execute(t.Context(), []ToolCall{{CallID: "1", Tool: "mcp__demo__delete_file", Arguments: json.RawMessage(`{"path":"a.txt"}`)}}, &ExecOptions{Approver: tc.approver})
			if rs[0].Decision != tc.wantDec || !strings.Contains(rs[0].Text(), tc.wantText) {
				t.Errorf("got %s %q, want %s containing %q", rs[0].Decision, rs[0].Text(), tc.wantDec, tc.wantText)
			}
			if rs[0].IsError != (tc.wantDec == DecisionDenied) {
				t.Errorf("isError = %v", rs[0].IsError)
			}
			if got := fc.count("delete_file"); got != tc.wantSeen {
				t.Errorf("server saw %d calls, want %d", got, tc.wantSeen)
			}
			if ra, ok := tc.approver.(*recordingApprover); ok {
				// Not annotated: destructive by MCP's default, which the
				// request tells apart from the tool's own word.
				want := []Request{{CallID: "1", Tool: "mcp__demo__delete_file", Server: "demo", Arguments: json.RawMessage(`{"path":"a.txt"}`), Destructive: true, Reason: ra.reqs[0].Reason}}
				if diff := cmp.Diff(want, ra.reqs); diff != "" {
					t.Errorf("approver requests (-want +got):\n%s", diff)
				}
				if ra.reqs[0].Reason == "" {
					t.Errorf("request has no reason")
				}
			}
		})
	}
}

// TestPanickingRunner: a tool that panics fails its own call only.
func TestPanickingRunner(t *testing.T) {
	fc := newFakeRunner()
	reg := NewRegistry(nil)
	reg.SetServerTools("demo", []*mcpsdk.Tool{tool("boom", true, ""), tool("fine", true, "")}, fc)
	fc.handle("boom", func(context.Context, map[string]any, func(Progress)) (*mcpsdk.CallToolResult, error) {
		panic("bug")
	})
	rs := New(reg, nil).Execute(t.Context(), []ToolCall{{CallID: "1", Tool: "mcp__demo__boom"}, {CallID: "2", Tool: "mcp__demo__fine"}}, nil)
	if !rs[0].IsError || !strings.Contains(rs[0].Text(), "panicked: bug") {
		t.Errorf("boom = %v %q", rs[0].IsError, rs[0].Text())
	}
	mustNotError(t, rs[1])
}

// TestApproverTimeout: a prompt nobody answers within the tool's timeout
// is a denial.
func TestApproverTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fc := newFakeRunner()
		fc.timeout = time.Minute
		reg := NewRegistry(nil)
		reg.SetServerTools("demo", []*mcpsdk.Tool{tool("write", false, "")}, fc)
		silent := ApproverFunc(func(ctx context.Context, _ Request) (Answer, error) {
			<-ctx.Done()
			return Answer{}, ctx.Err()
		})
		begin := time.Now()
		rs := New(reg, nil).Execute(t.Context(), []ToolCall{{CallID: "1", Tool: "mcp__demo__write"}}, &ExecOptions{Approver: silent})
		if rs[0].Decision != DecisionDenied || !strings.Contains(rs[0].Text(), "counts as a denial") || fc.count("write") != 0 {
			t.Errorf("got %s %q, server saw %d calls", rs[0].Decision, rs[0].Text(), fc.count("write"))
		}
		if got := time.Since(begin); got != time.Minute {
			t.Errorf("denied after %v, want the tool's timeout (1m)", got)
		}
	})
}

// TestApproverLateAnswer: an approver that ignores its ctx and allows after
// the deadline, or after the batch was cancelled, is still a denial.
func TestApproverLateAnswer(t *testing.T) {
	for _, cancelBatch := range []bool{false, true} {
		t.Run(fmt.Sprint("cancelled=", cancelBatch), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				fc := newFakeRunner()
				fc.timeout = time.Minute
				reg := NewRegistry(nil)
				reg.SetServerTools("demo", []*mcpsdk.Tool{tool("write", false, "")}, fc)
				ctx, cancel := context.WithCancel(t.Context())
				defer cancel()
				late := ApproverFunc(func(context.Context, Request) (Answer, error) {
					if cancelBatch {
						cancel()
					} else {
						time.Sleep(2 * time.Minute)
					}
					return Answer{Decision: AllowOnce}, nil
				})
				rs := New(reg, nil).Execute(ctx, []ToolCall{{CallID: "1", Tool: "mcp__demo__write"}}, &ExecOptions{Approver: late})
				if rs[0].Decision != DecisionDenied || !strings.Contains(rs[0].Text(), "too late") || fc.count("write") != 0 {
					t.Errorf("got %s %q, server saw %d calls", rs[0].Decision, rs[0].Text(), fc.count("write"))
				}
			})
		})
	}
}

// TestProgressAfterResult: progress a Runner reports after its call
// returned is not relayed: the frontend already has the result.
func TestProgressAfterResult(t *testing.T) {
	fc := newFakeRunner()
	reg := NewRegistry(nil)
	reg.SetServerTools("demo", []*mcpsdk.Tool{tool("r", true, "")}, fc)
	var kept func(Progress)
	fc.handle("r", func(_ context.Context, _ map[string]any, onProgress func(Progress)) (*mcpsdk.CallToolResult, error) {
		onProgress(Progress{Progress: 1})
		kept = onProgress
		return textResult("r"), nil
	})
	var relayed []float64
	rs := New(reg, nil).Execute(t.Context(), []ToolCall{{CallID: "1", Tool: "mcp__demo__r"}}, &ExecOptions{
		OnProgress: func(_ string, p Progress) { relayed = append(relayed, p.Progress) },
	})
	mustNotError(t, rs[0])
	kept(Progress{Progress: 2})
	if diff := cmp.Diff([]float64{1}, relayed); diff != "" {
		t.Errorf("relayed progress (-want +got):\n%s", diff)
	}
}

// TestTruncationEmbeddedResource: a server that returns a whole file as an
// embedded text resource is capped like text; a blob passes through.
func TestTruncationEmbeddedResource(t *testing.T) {
	fc := newFakeRunner()
	reg := NewRegistry(nil)
	reg.SetServerTools("demo", []*mcpsdk.Tool{tool("cat", true, "")}, fc)
	blob := &mcpsdk.EmbeddedResource{Resource: &mcpsdk.ResourceContents{URI: "file:///b.bin", Blob: []byte{1, 2}}}
	orig := &mcpsdk.ResourceContents{URI: "file:///a.txt", MIMEType: "text/plain", Text: strings.Repeat("y", 30)}
	fc.handle("cat", func(context.Context, map[string]any, func(Progress)) (*mcpsdk.CallToolResult, error) {
		return &mcpsdk.CallToolResult{Content: []mcpsdk.Content{
			&mcpsdk.TextContent{Text: "head"}, blob, &mcpsdk.EmbeddedResource{Resource: orig},
		}}, nil
	})
	dir := t.TempDir()
	r := New(reg, &Options{MaxResultChars: 10, ResultsDir: dir}).Execute(t.Context(), []ToolCall{{CallID: "1", Tool: "mcp__demo__cat"}}, nil)[0]
	mustNotError(t, r)
	if r.Truncated == nil || r.Truncated.TotalChars != 34 || r.Truncated.ShownChars != 10 {
		t.Fatalf("truncated = %+v, want 10 of 34", r.Truncated)
	}
	if len(r.Content) != 4 || r.Content[1] != blob {
		t.Fatalf("content = %#v, want text, the blob, cut resource, note", r.Content)
	}
	res := r.Content[2].(*mcpsdk.EmbeddedResource).Resource
	if diff := cmp.Diff(mcpsdk.ResourceContents{URI: "file:///a.txt", MIMEType: "text/plain", Text: "yyyyyy"}, *res); diff != "" {
		t.Errorf("cut resource (-want +got):\n%s", diff)
	}
	if len(orig.Text) != 30 {
		t.Errorf("the server's content was modified")
	}
	if data, err := os.ReadFile(r.Truncated.SavedTo); err != nil || string(data) != "head\n"+strings.Repeat("y", 30) {
		t.Errorf("saved %q (%v)", data, err)
	}
}

// A Runner gets the whole call in one value: its id, the tool's name on
// its server, the validated arguments, a progress callback, the batch's
// task mode and its Asker, whatever its type; a built-in's too. Without
// an Asker it gets none. A started task comes back in the Outcome.
func TestRunnerGetsTheCall(t *testing.T) {
	fc := newFakeRunner()
	reg := NewRegistry(nil)
	reg.SetServerTools("demo", []*mcpsdk.Tool{tool("ask", true, `{"type":"object","properties":{"n":{"type":"integer"}}}`)}, fc)
	type asker struct {
		Asker
		name string
	}
	frontend := &asker{name: "frontend A"}
	o := New(reg, nil)
	o.Execute(t.Context(), []ToolCall{{CallID: "a-1", Tool: "mcp__demo__ask", Arguments: json.RawMessage(`{"n":1}`)}},
		&ExecOptions{Asker: frontend, Tasks: TasksReturned})
	o.Execute(t.Context(), []ToolCall{{CallID: "b-1", Tool: "mcp__demo__ask"}}, nil)
	fc.mu.Lock()
	calls := fc.calls
	fc.mu.Unlock()
	if len(calls) != 2 {
		t.Fatalf("the Runner got %d calls, want 2", len(calls))
	}
	for i, c := range calls {
		if c.OnProgress == nil {
			t.Errorf("call %d has no progress callback", i)
		}
	}
	type seen struct {
		ID, Name string
		Args     map[string]any
		Tasks    TaskMode
		Asker    Asker
	}
	got := []seen{}
	for _, c := range calls {
		got = append(got, seen{c.ID, c.Name, c.Args, c.Tasks, c.Asker})
	}
	want := []seen{
		{"a-1", "ask", map[string]any{"n": json.Number("1")}, TasksReturned, frontend},
		{"b-1", "ask", map[string]any{}, TasksAwaited, nil},
	}
	if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b Asker) bool { return a == b })); diff != "" {
		t.Errorf("the calls the Runner got (-want +got):\n%s", diff)
	}

	started := &Task{Server: "demo", ID: "t-1", Tool: "ask", Status: "working"}
	task := runnerFunc(func(_ context.Context, c Call) (Outcome, error) {
		return Outcome{Result: textResult("running as task t-1"), Task: started}, nil
	})
	reg.SetServerTools("tasks", []*mcpsdk.Tool{tool("job", true, "")}, task)
	rs := o.Execute(t.Context(), []ToolCall{{CallID: "c-1", Tool: "mcp__tasks__job"}}, &ExecOptions{Tasks: TasksTracked})
	if rs[0].Task != started || rs[0].IsError {
		t.Errorf("result of a call that started a task: %+v, want its Task %+v", rs[0], started)
	}
}

// runnerFunc is a Runner of one function, whose server is always ready.
type runnerFunc func(ctx context.Context, c Call) (Outcome, error)

func (f runnerFunc) CallTool(ctx context.Context, c Call) (Outcome, error) { return f(ctx, c) }
func (runnerFunc) ToolTimeout() time.Duration                              { return 0 }
func (runnerFunc) Ready(context.Context) (func(), error)                   { return func() {}, nil }
