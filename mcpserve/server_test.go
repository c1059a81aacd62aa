package mcpserve

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/freecode/freecode/internal/toolid"
	"github.com/freecode/freecode/orchestrator"
	"github.com/freecode/freecode/workspace"
)

// clock is a built-in tool.
type clock struct{ orchestrator.NoServer }

func (clock) CallTool(context.Context, orchestrator.Call) (orchestrator.Outcome, error) {
	return orchestrator.Outcome{Result: text("noon")}, nil
}

// The tools list is the registry's: built-ins first, every server tool
// under its id (or alias), with the server's own schemas and annotations.
func TestToolsList(t *testing.T) {
	e := newEnv(t, []map[string]any{backend(t, "srv")}, nil)
	e.open(t, &orchestrator.Tool{ID: "clock", Description: "Tell the time", ReadOnly: true, Runner: clock{}})
	cs := e.connect(t, nil)

	res, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*mcpsdk.Tool{}
	var names []string
	for _, tool := range res.Tools {
		byName[tool.Name] = tool
		names = append(names, tool.Name)
	}
	longID := "mcp__srv__" + longToolName
	alias := toolid.Alias(longID)
	want := []string{"clock", "mcp__srv__addtool", "mcp__srv__block", "mcp__srv__echo", "mcp__srv__progress",
		"mcp__srv__structured", "mcp__srv__write", alias}
	slices.Sort(want)
	slices.Sort(names)
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("listed names (-want +got):\n%s", diff)
	}

	echo := byName["mcp__srv__echo"]
	if echo == nil {
		t.Fatal("no mcp__srv__echo")
	}
	// The schema as the server sent it: not a provider's conversion,
	// which would drop $schema and reorder nothing less.
	var gotSchema, wantSchema any
	b, _ := json.Marshal(echo.InputSchema)
	json.Unmarshal(b, &gotSchema)
	json.Unmarshal([]byte(testInputSchema), &wantSchema)
	if diff := cmp.Diff(wantSchema, gotSchema); diff != "" {
		t.Errorf("echo's input schema (-want +got):\n%s", diff)
	}
	f := false
	tru := true
	annotations := []struct {
		name string
		want mcpsdk.ToolAnnotations
	}{
		{"mcp__srv__echo", mcpsdk.ToolAnnotations{Title: "Echo", ReadOnlyHint: true, OpenWorldHint: &f}},
		{"mcp__srv__write", mcpsdk.ToolAnnotations{DestructiveHint: &tru, OpenWorldHint: &tru}},
		{"mcp__srv__addtool", mcpsdk.ToolAnnotations{DestructiveHint: &f, OpenWorldHint: &tru}},
	}
	for _, a := range annotations {
		got := byName[a.name]
		if got == nil || got.Annotations == nil {
			t.Errorf("%s: no annotations", a.name)
			continue
		}
		if diff := cmp.Diff(a.want, *got.Annotations); diff != "" {
			t.Errorf("%s annotations (-want +got):\n%s", a.name, diff)
		}
	}
	if echo.Title != "Echo" || echo.Description != "Echo the text" {
		t.Errorf("echo: title %q, description %q", echo.Title, echo.Description)
	}
	var gotOut, wantOut any
	b, _ = json.Marshal(byName["mcp__srv__structured"].OutputSchema)
	json.Unmarshal(b, &gotOut)
	json.Unmarshal([]byte(testOutputSchema), &wantOut)
	if diff := cmp.Diff(wantOut, gotOut); diff != "" {
		t.Errorf("structured's output schema (-want +got):\n%s", diff)
	}
	if byName["mcp__srv__echo"].OutputSchema != nil {
		t.Errorf("echo has an output schema: %v", byName["mcp__srv__echo"].OutputSchema)
	}
	if r := callTool(t, cs, alias, `{}`); r.IsError || resultText(r) != "long" {
		t.Errorf("calling the alias: %+v", r)
	}
	if r := callTool(t, cs, "clock", `{}`); r.IsError || resultText(r) != "noon" {
		t.Errorf("calling the built-in: %+v", r)
	}
}

// answer is an elicitation handler that answers every form with action
// and, for "accept", the decision.
func answer(action, decision string, asked chan<- *mcpsdk.ElicitParams) func(context.Context, *mcpsdk.ElicitRequest) (*mcpsdk.ElicitResult, error) {
	return func(_ context.Context, req *mcpsdk.ElicitRequest) (*mcpsdk.ElicitResult, error) {
		if asked != nil {
			asked <- req.Params
		}
		res := &mcpsdk.ElicitResult{Action: action}
		if action == "accept" {
			res.Content = map[string]any{"decision": decision}
		}
		return res, nil
	}
}

// Every call goes through the rules: deny is a tool error naming the rule;
// ask is an elicitation for a client that can answer one, a denial naming
// the rule to add for one that cannot.
func TestPermissions(t *testing.T) {
	e := newEnv(t, []map[string]any{backend(t, "srv")}, nil)
	e.rules(t, map[string][]string{"deny": {"mcp__srv__progress"}, "ask": {"mcp__srv__echo"}})
	e.open(t)

	tests := []struct {
		name     string
		elicit   func(context.Context, *mcpsdk.ElicitRequest) (*mcpsdk.ElicitResult, error)
		tool     string
		wantErr  bool
		decision string
		contains string
	}{
		{"read-only, no rule", nil, "mcp__srv__structured", false, "allowed", "hi"},
		{"deny rule", nil, "mcp__srv__progress", true, "denied", `denied by rule "mcp__srv__progress" in ` + filepath.Join(e.dir, "settings.json")},
		{"ask rule, no elicitation", nil, "mcp__srv__echo", true, "denied", `remove "mcp__srv__echo" from permissions.ask`},
		{"not read-only, no elicitation", nil, "mcp__srv__write", true, "denied", `add "mcp__srv__write" to permissions.allow`},
		{"ask rule, allowed once", answer("accept", choiceAllowOnce, nil), "mcp__srv__echo", false, "asked", "hi"},
		{"not read-only, allowed once", answer("accept", choiceAllowOnce, nil), "mcp__srv__write", false, "asked", "wrote hi"},
		{"not read-only, denied in the form", answer("accept", choiceDeny, nil), "mcp__srv__write", true, "denied", "denied by the user"},
		{"not read-only, declined", answer("decline", "", nil), "mcp__srv__write", true, "denied", "denied by the user"},
		{"not read-only, cancelled", answer("cancel", "", nil), "mcp__srv__write", true, "denied", "denied by the user"},
		{"deny rule, elicitation never asked", answer("accept", choiceAllowOnce, nil), "mcp__srv__progress", true, "denied", "denied by rule"},
	}
	for _, version := range askRevisions {
		for _, tc := range tests {
			t.Run(version+"/"+tc.name, func(t *testing.T) {
				cs := e.connectAt(t, &mcpsdk.ClientOptions{ElicitationHandler: tc.elicit}, version)
				r := callTool(t, cs, tc.tool, `{"text":"hi"}`)
				if r.IsError != tc.wantErr || r.Meta["freecode/decision"] != tc.decision || !strings.Contains(resultText(r), tc.contains) {
					t.Errorf("isError %v, decision %v, text %q; want isError %v, decision %s, text containing %q",
						r.IsError, r.Meta["freecode/decision"], resultText(r), tc.wantErr, tc.decision, tc.contains)
				}
			})
		}
	}
}

// The permission form names the tool, the reason and the arguments, with
// text from the model escaped, and offers allow once and deny only.
func TestPermissionForm(t *testing.T) {
	for _, version := range askRevisions {
		t.Run(version, func(t *testing.T) { testPermissionForm(t, version) })
	}
}

func testPermissionForm(t *testing.T, version string) {
	e := newEnv(t, []map[string]any{backend(t, "srv")}, nil)
	e.open(t)
	asked := make(chan *mcpsdk.ElicitParams, 1)
	cs := e.connectAt(t, &mcpsdk.ClientOptions{ElicitationHandler: answer("accept", choiceAllowOnce, asked)}, version)
	r := callTool(t, cs, "mcp__srv__write", `{"text":"a\u202eb"}`)
	if r.IsError {
		t.Fatalf("write: %s", resultText(r))
	}
	p := waitFor(t, asked, "elicitation")
	for _, want := range []string{"mcp__srv__write", `MCP server "srv"`, "not read-only", "no rule; tool is not read-only", `{"text":"a\u202eb"}`} {
		if !strings.Contains(p.Message, want) {
			t.Errorf("message %q does not contain %q", p.Message, want)
		}
	}
	if strings.ContainsRune(p.Message, '\u202e') {
		t.Errorf("message holds a raw bidirectional control: %q", p.Message)
	}
	if diff := cmp.Diff([]string{"allowOnce", "deny"}, choicesOf(t, p)); diff != "" {
		t.Errorf("choices (-want +got):\n%s", diff)
	}
}

// choicesOf returns the decisions a permission form offers.
func choicesOf(t *testing.T, p *mcpsdk.ElicitParams) []string {
	t.Helper()
	b, _ := json.Marshal(p.RequestedSchema)
	var schema struct {
		Properties map[string]struct {
			OneOf []struct{ Const string } `json:"oneOf"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(b, &schema); err != nil {
		t.Fatal(err)
	}
	var choices []string
	for _, c := range schema.Properties["decision"].OneOf {
		choices = append(choices, c.Const)
	}
	return choices
}

// Arguments too long for the form are listed key by key, long values cut,
// so a padding value that sorts first cannot push the argument that
// matters out of sight; and since the call is not shown whole, the form
// cannot allow it, even if the client answers "allow once". (The go-sdk's
// client of 2026-07-28 will not send an answer the form does not offer;
// TestInputRequired sends it by hand.)
func TestPermissionFormLongArguments(t *testing.T) {
	e := newEnv(t, []map[string]any{backend(t, "srv")}, nil)
	e.open(t)
	asked := make(chan *mcpsdk.ElicitParams, 1)
	cs := e.connectAt(t, &mcpsdk.ClientOptions{ElicitationHandler: answer("accept", choiceAllowOnce, asked)}, "2025-11-25")
	pad := strings.Repeat("x", 3*maxShownArgs)
	r := callTool(t, cs, "mcp__srv__write", `{"file":"`+pad+`","text":"rm -rf ~"}`)
	p := waitFor(t, asked, "elicitation")
	if !r.IsError || r.Meta["freecode/decision"] != "denied" || strings.Contains(resultText(r), "wrote") ||
		!strings.Contains(resultText(r), "too large to be shown whole") {
		t.Errorf("isError %v, decision %v, text %q; want a denial saying the call could not be shown whole",
			r.IsError, r.Meta["freecode/decision"], resultText(r))
	}
	for _, want := range []string{`"text": "rm -rf ~"`, `"file": "` + pad[:maxShownValue] + `"…(6000 characters in all)`, "cannot allow the call"} {
		if !strings.Contains(p.Message, want) {
			t.Errorf("message does not contain %q:\n%s", want, p.Message)
		}
	}
	if n := len(p.Message); n > maxShownArgs {
		t.Errorf("message of %d bytes; want the padding cut", n)
	}
	if diff := cmp.Diff([]string{"deny"}, choicesOf(t, p)); diff != "" {
		t.Errorf("choices (-want +got):\n%s", diff)
	}
}

// No name reaches a tool around the rules: only listed names are tools,
// and a rule naming a tool by id or by alias covers every way to call it.
func TestDeniedToolUnreachable(t *testing.T) {
	longID := "mcp__srv__" + longToolName
	alias := toolid.Alias(longID)
	tests := []struct {
		name string
		deny string
	}{
		{"deny by id", "mcp__srv__echo"},
		{"deny by server", "mcp__srv"},
		{"deny all MCP tools", "mcp__*"},
		{"deny the long id", longID},
		{"deny the alias", alias},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, []map[string]any{backend(t, "srv")}, nil)
			e.rules(t, map[string][]string{"deny": {tc.deny}})
			e.open(t)
			// The client would allow anything it is asked.
			cs := e.connect(t, &mcpsdk.ClientOptions{ElicitationHandler: answer("accept", choiceAllowOnce, nil)})
			covered := []string{alias}
			if tc.deny != longID && tc.deny != alias {
				covered = []string{"mcp__srv__echo"}
			}
			if tc.deny == "mcp__srv" || tc.deny == "mcp__*" {
				covered = append(covered, alias)
			}
			for _, name := range covered {
				r := callTool(t, cs, name, `{"text":"hi"}`)
				if !r.IsError || r.Meta["freecode/decision"] != "denied" || !strings.Contains(resultText(r), "denied by rule") {
					t.Errorf("%s: isError %v, decision %v, %q; want a denial by rule", name, r.IsError, r.Meta["freecode/decision"], resultText(r))
				}
			}
			// Names that are not listed are no tools at all.
			odd := []string{
				longID,                    // the id behind an alias
				"MCP__srv__echo",          // case
				"mcp__SRV__echo",          // case
				"mcp__srv__echo ",         // trailing space
				"mcp__srv__ech\u043e",     // Cyrillic o
				"mcp__srv__echo\u200b",    // zero-width space
				"mcp__srv___echo",         // a third underscore
				"mcp__srv__echo\x00",      // NUL
				"mcp__srv__echo/../write", // path
				"echo",                    // the server's own name
			}
			for _, name := range odd {
				res, err := cs.CallTool(t.Context(), &mcpsdk.CallToolParams{Name: name, Arguments: map[string]any{"text": "hi"}})
				if err == nil && !res.IsError {
					t.Errorf("%q reached a tool: %q", name, resultText(res))
				}
			}
		})
	}
}

// A cloned repository's server is neither listed nor callable until the
// user approves it; approved, it is listed and clients are told.
func TestProjectServerNeedsApproval(t *testing.T) {
	e := newEnv(t, []map[string]any{backend(t, "srv")}, nil)
	writeJSON(t, filepath.Join(e.root, ".freecode", "settings.json"), map[string]any{"mcp": map[string]any{"servers": []map[string]any{backend(t, "proj")}}})
	e.open(t)
	changed := make(chan struct{}, 16)
	cs := e.connect(t, &mcpsdk.ClientOptions{
		ElicitationHandler: answer("accept", choiceAllowOnce, nil),
		ToolListChangedHandler: func(context.Context, *mcpsdk.ToolListChangedRequest) {
			changed <- struct{}{}
		},
	})
	for _, name := range listNames(t, cs) {
		if strings.HasPrefix(name, "mcp__proj__") {
			t.Errorf("listed before approval: %s", name)
		}
	}
	for _, name := range []string{"mcp__proj__echo", "mcp__proj__write"} {
		res, err := cs.CallTool(t.Context(), &mcpsdk.CallToolParams{Name: name, Arguments: map[string]any{"text": "hi"}})
		if err == nil && !res.IsError {
			t.Errorf("%s ran before approval: %q", name, resultText(res))
		}
	}

	e.approveProject(t, "proj")
	for {
		waitFor(t, changed, "tools/list_changed after approval")
		if slices.Contains(listNames(t, cs), "mcp__proj__echo") {
			break
		}
	}
	if r := callTool(t, cs, "mcp__proj__echo", `{"text":"hi"}`); r.IsError || resultText(r) != "hi" {
		t.Errorf("after approval: %+v", r)
	}
}

// A tool a pinned server adds later is neither listed nor run under the
// allow rules that cover it until the user accepts it; then it is listed,
// the client told, without a restart, and it runs by its allow rule.
// A 2025-11-25 client is told on its session; a 2026-07-28 one on the
// subscriptions/listen stream its go-sdk client opens.
func TestListChanged(t *testing.T) {
	for _, version := range askRevisions {
		t.Run(version, func(t *testing.T) { testListChanged(t, version) })
	}
}

func testListChanged(t *testing.T, version string) {
	e := newEnv(t, []map[string]any{backend(t, "srv")}, nil)
	e.rules(t, map[string][]string{"allow": {"mcp__srv__addtool", "mcp__srv__fresh"}})
	e.open(t)
	changed := make(chan struct{}, 16)
	cs := e.connectAt(t, &mcpsdk.ClientOptions{ToolListChangedHandler: func(context.Context, *mcpsdk.ToolListChangedRequest) {
		changed <- struct{}{}
	}}, version)
	sub := e.w.Subscribe(&workspace.SubscribeOptions{Reviews: true})
	defer sub.Close()
	if r := callTool(t, cs, "mcp__srv__addtool", `{"text":"fresh"}`); r.IsError {
		t.Fatalf("addtool: %s", resultText(r))
	}
	awaitReviews(t, sub, "srv", 1)
	if names := listNames(t, cs); slices.Contains(names, "mcp__srv__fresh") {
		t.Errorf("the new tool is listed before it was accepted: %v", names)
	}
	// Not listed, it is no tool of this server's to call.
	if r, err := cs.CallTool(t.Context(), &mcpsdk.CallToolParams{Name: "mcp__srv__fresh", Arguments: map[string]any{}}); err == nil && !r.IsError {
		t.Errorf("the new tool ran before it was accepted: %+v", r)
	}
	if _, err := e.w.AcceptDefinition(t.Context(), "srv", "fresh", ""); err != nil {
		t.Fatal(err)
	}
	for {
		waitFor(t, changed, "tools/list_changed")
		if slices.Contains(listNames(t, cs), "mcp__srv__fresh") {
			break
		}
	}
	if r := callTool(t, cs, "mcp__srv__fresh", `{}`); r.IsError || resultText(r) != "fresh" {
		t.Errorf("the new tool: %+v", r)
	}
}

// awaitReviews waits until server has n tools awaiting review.
func awaitReviews(t *testing.T, sub *workspace.Subscription, server string, n int) {
	t.Helper()
	deadline := time.After(time.Minute)
	for {
		select {
		case ev := <-sub.Events():
			if rv, ok := ev.(*workspace.ReviewEvent); ok && rv.Server == server && len(rv.Reviews) == n {
				return
			}
		case <-deadline:
			t.Fatalf("no %d reviews of %s within a minute", n, server)
		}
	}
}

// Progress is relayed under the caller's token; cancellation reaches the
// server's call.
func TestProgressAndCancel(t *testing.T) {
	e := newEnv(t, []map[string]any{backend(t, "srv")}, nil)
	e.open(t)
	progress := make(chan *mcpsdk.ProgressNotificationParams, 16)
	cs := e.connect(t, &mcpsdk.ClientOptions{ProgressNotificationHandler: func(_ context.Context, req *mcpsdk.ProgressNotificationClientRequest) {
		progress <- req.Params
	}})
	params := &mcpsdk.CallToolParams{Name: "mcp__srv__progress", Arguments: map[string]any{"n": 3}}
	params.SetProgressToken("tok-1")
	res, err := cs.CallTool(t.Context(), params)
	if err != nil || res.IsError || resultText(res) != "done" {
		t.Fatalf("progress: %+v, %v", res, err)
	}
	// The server sent each notification before its result, and the
	// orchestrator relays them as they come.
	var got []string
	for range 3 {
		p := waitFor(t, progress, "progress")
		if p.ProgressToken != "tok-1" || p.Total != 3 {
			t.Errorf("progress %+v: want token tok-1, total 3", p)
		}
		got = append(got, p.Message)
	}
	if diff := cmp.Diff([]string{"step 1", "step 2", "step 3"}, got); diff != "" {
		t.Errorf("progress messages (-want +got):\n%s", diff)
	}

	// The server's tool tells a listener here when its own call's context
	// ends: the cancellation reached it.
	var lc net.ListenConfig
	ln, err := lc.Listen(t.Context(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	ctx, cancel := context.WithCancel(t.Context())
	called := make(chan error, 1)
	block := &mcpsdk.CallToolParams{Name: "mcp__srv__block", Arguments: map[string]any{"text": ln.Addr().String()}}
	block.SetProgressToken("tok-2")
	go func() {
		_, err := cs.CallTool(ctx, block)
		called <- err
	}()
	if p := waitFor(t, progress, "block's progress"); p.Message != "blocking" {
		t.Fatalf("progress %+v, want blocking", p)
	}
	cancel()
	if err := waitFor(t, called, "the cancelled call's return"); err == nil {
		t.Errorf("the cancelled call returned no error")
	}
	ln.(*net.TCPListener).SetDeadline(time.Now().Add(hangGuard))
	conn, err := ln.Accept()
	if err != nil {
		t.Fatalf("the server's call was not cancelled: %v", err)
	}
	defer conn.Close()
	said, _ := io.ReadAll(conn)
	if string(said) != "cancelled" {
		t.Errorf("the server's tool says %q", said)
	}
}

// Results are capped as the orchestrator caps them; a structured result
// the cap dropped is an error for a tool whose outputSchema promised it.
func TestResultCap(t *testing.T) {
	e := newEnv(t, []map[string]any{backend(t, "srv")}, map[string]any{"maxResultChars": 40})
	e.open(t)
	cs := e.connect(t, nil)
	long := strings.Repeat("x", 100)

	r := callTool(t, cs, "mcp__srv__echo", `{"text":"`+long+`"}`)
	trunc, _ := r.Meta["freecode/truncated"].(map[string]any)
	if r.IsError || trunc["totalChars"] != float64(100) || !strings.Contains(resultText(r), "[result truncated: showing 40 of 100 characters") {
		t.Errorf("a long echo: isError %v, meta %v, %q", r.IsError, r.Meta, resultText(r))
	}

	r = callTool(t, cs, "mcp__srv__structured", `{"text":"short"}`)
	if r.IsError || r.StructuredContent == nil {
		t.Errorf("a short structured result: isError %v, structured %v", r.IsError, r.StructuredContent)
	}
	// The TypeScript SDK's client throws on a success without the
	// structured content the outputSchema promises.
	r = callTool(t, cs, "mcp__srv__structured", `{"text":"`+long+`"}`)
	if !r.IsError || r.StructuredContent != nil || !strings.Contains(resultText(r), "[structuredContent omitted") {
		t.Errorf("a long structured result: isError %v, structured %v, %q", r.IsError, r.StructuredContent, resultText(r))
	}
}
