package orchestrator

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/freecode/freecode/internal/toolid"
	"github.com/freecode/freecode/permissions"
)

// The rule's source is exported by its name: the Source is a number, and
// string() of it would be that byte ("\x02" for a user rule).
func TestRuleAttrsNameTheSource(t *testing.T) {
	for _, src := range []permissions.Source{permissions.SourceManaged, permissions.SourceUser, permissions.SourceProject, permissions.SourceSession} {
		d := &decided{decision: DecisionDenied, rule: &permissions.Rule{Pattern: "mcp__gh__*", Effect: permissions.Deny, Source: src}}
		got := attribute.NewSet(d.attrs(nil)...)
		v, _ := got.Value(attrRuleSource)
		if diff := cmp.Diff(src.String(), v.AsString()); diff != "" || len(v.AsString()) < 2 {
			t.Errorf("%s=%q, want the source's name %q", attrRuleSource, v.AsString(), src.String())
		}
	}
}

// With telemetry off (no providers) nothing is traced, but a frontend's
// trace context still goes on: to the server as the call's parent (what
// its traceparent in _meta is made of) and onto the call's audit record
// (what its event is linked to), as it did with a no-op tracer.
func TestTraceParentGoesOnWithTracingOff(t *testing.T) {
	const parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	for _, tc := range []struct {
		name string
		eo   ExecOptions
		want bool
	}{{"traceparent", ExecOptions{TraceParent: parent}, true}, {"none", ExecOptions{}, false}} {
		fr := newFakeRunner()
		reg := NewRegistry(nil)
		reg.SetServerTools("s", []*mcpsdk.Tool{tool("t", true, "")}, fr)
		aud := &recordingAuditor{}
		o := New(reg, &Options{Auditor: aud})
		rs := o.Execute(t.Context(), []ToolCall{{CallID: "1", Tool: "mcp__s__t"}}, &tc.eo)
		if len(rs) != 1 || rs[0].IsError || len(fr.calls) != 1 || len(aud.recs) != 1 {
			t.Fatalf("%s: results %+v, %d calls, %d records", tc.name, rs, len(fr.calls), len(aud.recs))
		}
		got, rec := fr.calls[0].Trace, aud.recs[0].Span
		if !tc.want {
			if got.IsValid() || rec.IsValid() {
				t.Errorf("%s: the call's trace %v, its record's %v; want none", tc.name, got, rec)
			}
			continue
		}
		if got.TraceID().String() != "4bf92f3577b34da6a3ce929d0e0e4736" || got.SpanID().String() != "00f067aa0ba902b7" || !got.IsSampled() || !got.IsRemote() {
			t.Errorf("%s: the call's trace %v %v sampled %v remote %v; want the frontend's", tc.name, got.TraceID(), got.SpanID(), got.IsSampled(), got.IsRemote())
		}
		if !rec.Equal(got) {
			t.Errorf("%s: the record's span %v; want the frontend's %v", tc.name, rec, got)
		}
	}
}

// A call's span is named by the tool's id, whether the call named it so
// or by its provider alias (a long id's short name).
func TestExecuteToolSpanNamedByID(t *testing.T) {
	long := strings.Repeat("very_long_tool_name_", 4) + "0123456789"
	id := "mcp__demo__" + long
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	defer tp.Shutdown(t.Context())
	reg := NewRegistry(nil)
	reg.SetServerTools("demo", []*mcpsdk.Tool{tool(long, true, ""), tool("read", true, "")}, newFakeRunner())
	o := New(reg, &Options{TracerProvider: tp})
	rs := o.Execute(t.Context(), []ToolCall{{CallID: "1", Tool: toolid.Alias(id)}, {CallID: "2", Tool: "mcp__demo__read"}}, nil)
	if len(rs) != 2 || rs[0].IsError || rs[1].IsError {
		t.Fatalf("results %+v", rs)
	}
	var names []string
	for _, s := range exp.GetSpans() {
		if strings.HasPrefix(s.Name, "execute_tool ") {
			names = append(names, s.Name)
		}
	}
	slices.Sort(names)
	if diff := cmp.Diff([]string{"execute_tool mcp__demo__read", "execute_tool " + id}, names); diff != "" {
		t.Errorf("execute_tool spans (-want +got):\n%s", diff)
	}
}
