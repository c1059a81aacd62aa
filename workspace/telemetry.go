package workspace

import (
	"context"
	"encoding/json"
	"strings"
	"unicode/utf8"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/freecode/freecode/mcp"
	"github.com/freecode/freecode/orchestrator"
)

// What the workspace adds to the telemetry the orchestrator and the MCP
// client record (package telemetry starts the providers): the servers by
// state, a gauge read from the live statuses; and, when the user or the
// organization opted in (Options.TelemetryArguments), a call's arguments
// and result on its execute_tool span, redacted as the audit trail's
// argument values are (redactArgs) and as the server's Conn hides its
// secrets in its logs (mcp.Conn.Redact), and cut to maxSpanContent.

const instrumentationScope = "github.com/freecode/freecode/workspace"

// maxSpanContent bounds gen_ai.tool.call.arguments and .result, in bytes.
const maxSpanContent = 4096

// minMasked is the shortest value of a member redactArgs masked that is
// masked in the result's text as well: shorter ones ("1", "on") would
// mask the text's every word.
const minMasked = 4

// observeServers registers freecode.servers, the servers by state, on
// mp's meter: every state is reported each time, 0 for those no server
// is in, so that a state emptied reads 0 rather than its last count.
func (w *Workspace) observeServers(mp metric.MeterProvider) (metric.Registration, error) {
	m := mp.Meter(instrumentationScope)
	g, err := m.Int64ObservableGauge("freecode.servers", metric.WithUnit("{server}"),
		metric.WithDescription("The MCP servers configured, by state (connected, failed, needsAuth, blocked, …)."))
	if err != nil {
		return nil, err
	}
	return m.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		counts := map[mcp.State]int64{}
		for _, st := range w.Statuses() {
			counts[st.State]++
		}
		for st := mcp.State(0); st.String() != "unknown"; st++ {
			o.ObserveInt64(g, counts[st], metric.WithAttributes(attribute.String("freecode.server.state", st.String())))
		}
		return nil
	}, g)
}

// spanContent is orchestrator.Options.SpanContent: a call's arguments
// and, for a call that ran, its result, redacted and cut.
func (w *Workspace) spanContent(rec orchestrator.CallRecord) (args, result string) {
	redact := func(s string) string { return s }
	if rec.Server != "" {
		c, ok := w.mgr.Conn(rec.Server)
		if !ok || c == nil {
			// The server is gone (removed during the call): what its
			// session resolved cannot be masked, so nothing is sent.
			return "", ""
		}
		redact = c.Redact
	}
	// The values redactArgs masked, in the arguments or a JSON result,
	// are masked wherever else they are in either: a token passed by
	// name and quoted in another member, echoed back, or one the result
	// names and repeats.
	var masked []string
	var a json.RawMessage
	if len(rec.Args) > 0 {
		a = redactArgs(rec.Args, &masked)
	}
	ran := rec.Decision == orchestrator.DecisionAllowed || rec.Decision == orchestrator.DecisionAsked
	if r := rec.Result; r != nil && ran && r.Task == nil {
		result = spanResult(r, &masked)
		result = clip(redact(maskAll(result, masked)))
	}
	if a != nil {
		args = clip(redact(maskAll(string(a), masked)))
	}
	return args, result
}

// maskAll shows each of values in s as "***", as it is and as JSON
// escapes it.
func maskAll(s string, values []string) string {
	for _, v := range values {
		s = strings.ReplaceAll(s, v, "***")
		if q, err := json.Marshal(v); err == nil && string(q[1:len(q)-1]) != v {
			s = strings.ReplaceAll(s, string(q[1:len(q)-1]), "***")
		}
	}
	return s
}

// spanResult is a result as the span says it: its structured content's
// JSON, else its text; JSON either way redacted as arguments are, the
// values masked added to masked.
func spanResult(r *orchestrator.ToolResult, masked *[]string) string {
	var raw []byte
	if r.StructuredContent != nil {
		raw, _ = json.Marshal(r.StructuredContent)
	} else if text := r.Text(); json.Valid([]byte(text)) {
		raw = []byte(text)
	} else {
		return text
	}
	if red := redactArgs(raw, masked); red != nil {
		return string(red)
	}
	return ""
}

// clip cuts s to maxSpanContent bytes, on a character's boundary, with
// "…" after what was cut.
func clip(s string) string {
	if len(s) <= maxSpanContent {
		return s
	}
	n := maxSpanContent
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
