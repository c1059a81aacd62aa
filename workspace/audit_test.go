package workspace

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"testing"

	"github.com/freecode/freecode/config"
	"github.com/freecode/freecode/internal/audit"
	"github.com/freecode/freecode/orchestrator"
)

// trailOf reads the audit trail beside e's config, checking it verifies.
func trailOf(t *testing.T, e *env) []audit.Entry {
	t.Helper()
	e.w.trail.flush()
	dir := filepath.Join(e.dir, config.AuditDirName)
	rep, err := audit.Verify(context.Background(), dir)
	if err != nil || !rep.OK() {
		t.Fatalf("the trail does not verify: %+v, %v", rep, err)
	}
	var out []audit.Entry
	if err := audit.Read(context.Background(), dir, audit.Filter{}, func(en audit.Entry) error {
		out = append(out, en)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// Every call of a batch is one line of the trail, with who asked, the
// server's identity and the definition's hash, the rule or answer that
// decided it, the arguments' hash (never their values unless the policy
// asks), the outcome; an approval is a line of its own.
func TestAuditTrail(t *testing.T) {
	e := newEnv(t)
	writeJSON(t, e.cfgPath, mcpSection([]map[string]any{server(t, "s")}, nil))
	writeJSON(t, e.userRules(), map[string]any{"permissions": map[string]any{"allow": []string{"mcp__s__echo"}}})
	w := e.open(t)
	settle(t, w)
	rs := w.Execute(t.Context(), []orchestrator.ToolCall{
		{CallID: "1", Tool: "mcp__s__echo", Arguments: json.RawMessage(`{"text":"hello, token=abc"}`)},
		{CallID: "2", Tool: "mcp__s__write", Arguments: json.RawMessage(`{"text":"x"}`)},
	}, &orchestrator.ExecOptions{Frontend: "test#1", Approver: &answering{answer: orchestrator.Answer{Decision: orchestrator.Deny}}})
	if rs[0].IsError || rs[1].Decision != orchestrator.DecisionDenied {
		t.Fatalf("results: %+v", rs)
	}
	var calls []audit.Entry
	for _, en := range trailOf(t, e) {
		if en.Kind == audit.KindCall {
			calls = append(calls, en)
		}
	}
	if len(calls) != 2 {
		t.Fatalf("%d call lines, want 2: %+v", len(calls), calls)
	}
	srv, _ := w.cfg.Server("s")
	echo, write := calls[0], calls[1]
	if echo.Frontend != "test#1" || echo.Tool != "mcp__s__echo" || echo.Server != "s" || echo.Decision != audit.DecisionAllowed ||
		echo.Rule != "mcp__s__echo" || echo.RuleFile != e.userRules() || echo.Outcome != audit.OutcomeOK ||
		echo.ServerIdentity != config.EntryHash(srv) || len(echo.DefinitionHash) != 64 ||
		echo.ArgsSHA256 != audit.ArgsHash(json.RawMessage(`{"text":"hello, token=abc"}`)) || echo.Args != nil {
		t.Errorf("the allowed call's line: %+v; want identity %s, args hash %s, args %q", echo.Event, config.EntryHash(srv), audit.ArgsHash(json.RawMessage(`{"text":"hello, token=abc"}`)), echo.Args)
	}
	if write.Decision != audit.DecisionDenied || write.Answer != audit.AnswerDeny || write.Rule != "" || write.Outcome != audit.OutcomeDenied || write.Detail == "" {
		t.Errorf("the denied call's line: %+v", write)
	}
}

// With the policy's audit.arguments, the values are kept, those of
// members named like credentials masked.
func TestRedactArgs(t *testing.T) {
	var masked []string
	got := redactArgs(json.RawMessage(`{"path":"/a","apiKey":"s3cret","nested":{"password":"p","list":[{"Authorization":"Bearer x","n":1}]}}`), &masked)
	want := `{"apiKey":"***","nested":{"list":[{"Authorization":"***","n":1}],"password":"***"},"path":"/a"}`
	if string(got) != want {
		t.Errorf("redactArgs = %s, want %s", got, want)
	}
	// The values masked, for telemetry's result (those of 4 bytes or more).
	slices.Sort(masked)
	if want := []string{"Bearer x", "s3cret"}; !slices.Equal(masked, want) {
		t.Errorf("masked %q, want %q", masked, want)
	}
}
