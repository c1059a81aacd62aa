package workspace

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/freecode/freecode/orchestrator"
)

// everything returns the config entry of server-everything over stdio from
// $FREECODE_NPM, skipping the test without it (failing under CI=true).
func everything(t *testing.T) map[string]any {
	t.Helper()
	dir := os.Getenv("FREECODE_NPM")
	if dir == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("FREECODE_NPM is not set")
		}
		t.Skip("FREECODE_NPM is not set (the Makefile sets it)")
	}
	script := filepath.Join(dir, "@modelcontextprotocol/server-everything/dist/index.js")
	return map[string]any{"name": "everything", "type": "local", "command": []string{"node", script, "stdio"}, "timeout": 30000}
}

func resultText(r orchestrator.ToolResult) string {
	var b strings.Builder
	for _, c := range r.Content {
		if tc, ok := c.(*mcpsdk.TextContent); ok {
			b.WriteString(tc.Text)
			b.WriteString("\n")
		}
	}
	return b.String()
}

var allowAll = orchestrator.ApproverFunc(func(context.Context, orchestrator.Request) (orchestrator.Answer, error) {
	return orchestrator.Answer{Decision: orchestrator.AllowOnce}, nil
})

// server-everything (TypeScript SDK) through a workspace: its resources
// and prompts listed, read and got; its elicitation answered by the
// batch's Asker with the form's defaults filled in, declined without one;
// its sampling answered by the Asker, refused without one.
func TestInteropEverythingCapabilities(t *testing.T) {
	e := newEnv(t)
	writeJSON(t, e.cfgPath, mcpSection([]map[string]any{everything(t)}, nil))
	w := e.openWith(t, &Options{Elicitation: true, Sampling: true})
	sub := w.Subscribe(nil)
	defer sub.Close()
	if err := w.WaitSettled(t.Context()); err != nil {
		t.Fatal(err)
	}
	await(t, sub, "resources listed", func(ev *ResourcesChangedEvent) bool {
		return ev.Server == "everything" && ev.Reason == "connected"
	})

	res, err := w.Resources(t.Context(), "everything")
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(res, func(r ResourceInfo) bool { return r.Name == "architecture.md" })
	if len(res) < 7 || i < 0 || res[i].Server != "everything" || res[i].MIMEType != "text/markdown" || res[i].Description == "" {
		t.Fatalf("resources: %+v", res)
	}
	all, err := w.Resources(t.Context(), "")
	if err != nil || len(all) != len(res) {
		t.Errorf("Resources(\"\") = %d, %v; want the server's %d", len(all), err, len(res))
	}
	rr, err := w.ReadResource(t.Context(), "everything", res[i].URI, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(rr.Contents) != 1 || rr.Contents[0].Text == "" {
		t.Errorf("read %s: %+v", res[i].URI, rr.Contents)
	}

	prompts, err := w.Prompts(t.Context(), "")
	if err != nil {
		t.Fatal(err)
	}
	j := slices.IndexFunc(prompts, func(p PromptInfo) bool { return p.Name == "args-prompt" })
	if j < 0 || len(prompts[j].Arguments) != 2 || !prompts[j].Arguments[0].Required {
		t.Fatalf("prompts: %+v", prompts)
	}
	gp, err := w.GetPrompt(t.Context(), "everything", "args-prompt", map[string]string{"city": "Paris"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := json.Marshal(gp.Messages); !strings.Contains(string(b), "Paris") {
		t.Errorf("prompt: %s", b)
	}

	// The JSON a frontend gets, the protocol's field names, is
	// server/wire's (TestResourceInfoJSON there).

	// A session resource: resources/list_changed, a real change.
	r := w.Execute(t.Context(), []orchestrator.ToolCall{{CallID: "gz", Tool: "mcp__everything__gzip-file-as-resource",
		Arguments: json.RawMessage(`{"name":"hello.gz","data":"data:text/plain;base64,aGVsbG8="}`)}},
		&orchestrator.ExecOptions{Approver: allowAll})[0]
	if r.IsError {
		t.Fatalf("gzip: %s", resultText(r))
	}
	await(t, sub, "resources changed", func(ev *ResourcesChangedEvent) bool {
		return ev.Server == "everything" && ev.Reason == "listChanged"
	})
	if res2, _ := w.Resources(t.Context(), "everything"); !slices.ContainsFunc(res2, func(r ResourceInfo) bool { return r.Name == "hello.gz" }) {
		t.Errorf("after list_changed the resources lack hello.gz: %+v", res2)
	}

	asker := &elicitLog{
		content: map[string]any{"name": "Ada Lovelace", "check": true},
		sample:  &mcpsdk.CreateMessageResult{Model: "test-model", Role: "assistant", Content: &mcpsdk.TextContent{Text: "forty-two"}},
	}
	run := func(tool string, args string, a orchestrator.Asker) orchestrator.ToolResult {
		t.Helper()
		rs := w.Execute(t.Context(), []orchestrator.ToolCall{{CallID: "c-" + tool, Tool: "mcp__everything__" + tool, Arguments: json.RawMessage(args)}},
			&orchestrator.ExecOptions{Approver: allowAll, Asker: a})
		return rs[0]
	}

	r = run("trigger-elicitation-request", `{}`, asker)
	got := resultText(r)
	// 42 is the schema's default of a field the answer left out.
	if r.IsError || !strings.Contains(got, "User provided the requested information") || !strings.Contains(got, "Name: Ada Lovelace") || !strings.Contains(got, "Favorite Integer: 42") {
		t.Errorf("elicitation answered: %s", got)
	}
	if asked := asker.got(); len(asked) != 1 || asked[0].Server != "everything" || asked[0].CallID != "c-trigger-elicitation-request" || asked[0].Params.RequestedSchema == nil {
		t.Errorf("the Asker was asked %+v", asked)
	}
	if got := resultText(run("trigger-elicitation-request", `{}`, nil)); !strings.Contains(got, "declined") {
		t.Errorf("elicitation without an Asker: %s", got)
	}

	r = run("trigger-sampling-request", `{"prompt":"the answer?"}`, asker)
	if got := resultText(r); r.IsError || !strings.Contains(got, "test-model") || !strings.Contains(got, "forty-two") {
		t.Errorf("sampling answered: %s", got)
	}
	r = run("trigger-sampling-request", `{"prompt":"the answer?"}`, nil)
	if got := resultText(r); !r.IsError || !strings.Contains(got, "sampling refused") {
		t.Errorf("sampling without an Asker: %s", got)
	}
}

// Without Elicitation and Sampling the servers are told of neither, so
// server-everything offers neither tool.
func TestInteropEverythingNoCapabilities(t *testing.T) {
	e := newEnv(t)
	writeJSON(t, e.cfgPath, mcpSection([]map[string]any{everything(t)}, nil))
	w := e.open(t)
	if err := w.WaitSettled(t.Context()); err != nil {
		t.Fatal(err)
	}
	for _, ti := range w.Tools("everything") {
		if strings.Contains(ti.Name, "elicitation") || strings.Contains(ti.Name, "sampling") {
			t.Errorf("tool %s offered to a client that declared no such capability", ti.Name)
		}
	}
}
