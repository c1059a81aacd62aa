package orchestrator

import (
	"fmt"
	"sync"
	"testing"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/freecode/freecode/config"
)

// recordingAuditor keeps what it is told.
type recordingAuditor struct {
	mu      sync.Mutex
	recs    []CallRecord
	batches int
}

func (a *recordingAuditor) AuditCalls(rs []CallRecord) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.recs = append(a.recs, rs...)
	a.batches++
}

// Every call of a batch is audited once, in the batch's order, with the
// rule that decided it, the answer given when someone was asked, the
// arguments as validated and the result; a call of no tool too.
func TestAuditEveryCallOnce(t *testing.T) {
	e := newGateEnv(t, `{"permissions":{"allow":["mcp__demo__read_file"]}}`)
	e.reg.SetServerTools("demo", []*mcpsdk.Tool{tool("read_file", true, ""), tool("delete_file", false, ""), tool("write_file", false, "")}, e.fc)
	aud := &recordingAuditor{}
	o := New(e.reg, &Options{Permissions: e.loadManaged(t, []config.ManagedRule{managedRule("deny", "mcp__demo__delete_*")}, false, ""),
		UserDir: e.userDir, ProjectDir: e.projectDir, Auditor: aud})
	ap := &recordingApprover{answer: Answer{Decision: AllowOnce}}
	calls := []ToolCall{
		{CallID: "1", Tool: "mcp__demo__read_file", Arguments: []byte(`{"b": 2, "a": 1}`)},
		{CallID: "2", Tool: "mcp__demo__delete_file"},
		{CallID: "3", Tool: "mcp__demo__write_file"},
		{CallID: "4", Tool: "mcp__nope__x"},
	}
	rs := o.Execute(t.Context(), calls, &ExecOptions{Approver: ap, Frontend: "test-frontend"})
	if len(aud.recs) != len(calls) || aud.batches != 1 {
		t.Fatalf("%d records for %d calls, in %d batches", len(aud.recs), len(calls), aud.batches)
	}
	for i, r := range aud.recs {
		if r.CallID != calls[i].CallID || r.Frontend != "test-frontend" || r.Result == nil || r.Result.Decision != rs[i].Decision {
			t.Errorf("record %d: %+v, want call %s of test-frontend with its result", i, r, calls[i].CallID)
		}
	}
	if r := aud.recs[0]; r.Rule == nil || r.Rule.Pattern != "mcp__demo__read_file" || r.Answer != "" || string(r.Args) != `{"b": 2, "a": 1}` || r.Server != "demo" {
		t.Errorf("allowed by a rule: %+v (rule %+v, args %s)", r, r.Rule, r.Args)
	}
	if r := aud.recs[1]; r.Decision != DecisionDenied || r.Rule == nil || r.Rule.File != managedFile || r.Answer != "" {
		t.Errorf("denied by the organization: %+v (rule %+v)", r, r.Rule)
	}
	if r := aud.recs[2]; r.Decision != DecisionAsked || r.Rule != nil || r.Answer != AllowOnce {
		t.Errorf("asked: %+v", r)
	}
	if r := aud.recs[3]; r.Decision != DecisionInvalid || r.Tool != "mcp__nope__x" || r.Server != "" {
		t.Errorf("no such tool: %+v", r)
	}
}

// A call whose question goes to the user in another round (an
// input_required result) is not audited: nothing was decided, and the
// call made again with the answer is the one recorded, once.
func TestAuditAskedLater(t *testing.T) {
	e := newGateEnv(t, `{"permissions":{"allow":["mcp__demo__read_file"]}}`)
	e.reg.SetServerTools("demo", []*mcpsdk.Tool{tool("read_file", true, ""), tool("write_file", false, "")}, e.fc)
	aud := &recordingAuditor{}
	o := New(e.reg, &Options{Permissions: e.load(t), UserDir: e.userDir, ProjectDir: e.projectDir, Auditor: aud})
	calls := []ToolCall{{CallID: "1", Tool: "mcp__demo__read_file"}, {CallID: "2", Tool: "mcp__demo__write_file"}}
	later := &recordingApprover{err: fmt.Errorf("%w (an input_required result)", ErrAskedLater)}
	o.Execute(t.Context(), calls, &ExecOptions{Approver: later})
	o.Execute(t.Context(), calls[1:], &ExecOptions{Approver: later})
	if len(aud.recs) != 1 || aud.recs[0].CallID != "1" || aud.batches != 1 {
		t.Fatalf("records %+v in %d batches; want only call 1's, the other asked in another round", aud.recs, aud.batches)
	}
	o.Execute(t.Context(), calls[1:], &ExecOptions{Approver: &recordingApprover{answer: Answer{Decision: AllowOnce}}})
	if len(aud.recs) != 2 || aud.recs[1].CallID != "2" || aud.recs[1].Decision != DecisionAsked || aud.recs[1].Answer != AllowOnce {
		t.Errorf("after the answer, records %+v; want call 2 asked and allowed once", aud.recs)
	}
}
