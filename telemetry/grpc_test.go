package telemetry

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/metric"
	"google.golang.org/protobuf/proto"

	"github.com/freecode/freecode/internal/audit"
	"github.com/freecode/freecode/telemetry/telemetrytest"
)

// Over gRPC, to a real grpc.Server on loopback serving the collector's
// services: a user's config file turns it on with a ${secret:} header,
// which reaches the receiver as metadata and is in no exported byte; a
// span, a metric point and an event arrive; freecode telemetry test's
// exports succeed, and fail with the receiver's status when it refuses.
func TestGRPCExport(t *testing.T) {
	rcv := telemetrytest.NewGRPCReceiver(t)
	path := filepath.Join(t.TempDir(), "config.json")
	if err := os.WriteFile(path, []byte(`{"mcp": {"telemetry": {"enabled": true, "endpoint": "`+rcv.URL+`", "protocol": "grpc",
  "headers": {"x-ingest-key": "${secret:INGEST}"}}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	const secret = "s3cret-grpc-value"
	s, err := FromConfig(path, func(string) string { return "" }, func(name string) (string, bool) { return secret, name == "INGEST" })
	if err != nil {
		t.Fatal(err)
	}
	if s.Source != "your config file "+path || s.Protocols() != "grpc" || s.TracesURL != rcv.URL || s.LogsURL != rcv.URL {
		t.Fatalf("settings %+v", s)
	}
	p, err := Start(t.Context(), s, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, span := p.Tracer.Tracer("test").Start(t.Context(), "a span")
	span.End()
	c, err := p.Meter.Meter("test").Int64Counter("a.counter", metric.WithUnit("{x}"))
	if err != nil {
		t.Fatal(err)
	}
	c.Add(t.Context(), 2)
	p.CallEvents(t.Context(), audit.Event{Kind: audit.KindCall, Tool: "mcp__s__t", Decision: "allowed", Outcome: "ok"}, time.Now())
	if err := p.Shutdown(t.Context()); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if sp := rcv.Spans(); len(sp) != 1 || sp[0].Name != "a span" {
		t.Errorf("spans %v", sp)
	}
	if ms := rcv.Metrics(); len(ms) != 1 || ms[0].Name != "a.counter" || ms[0].GetSum().GetDataPoints()[0].GetAsInt() != 2 {
		t.Errorf("metrics %v", ms)
	}
	if ls := rcv.Logs(); len(ls) != 1 || ls[0].EventName != EventToolDecision {
		t.Errorf("events %v", ls)
	}
	hs := rcv.Headers()
	if len(hs) != 3 {
		t.Errorf("%d requests, want one per signal", len(hs))
	}
	for _, h := range hs {
		if h.Get("x-ingest-key") != secret || !strings.HasPrefix(h.Get("content-type"), "application/grpc") {
			t.Errorf("request metadata %v", h)
		}
	}
	for _, m := range exported(rcv) {
		b, _ := proto.Marshal(m)
		if strings.Contains(string(b), secret) {
			t.Errorf("the header's secret is in an exported message: %v", m)
		}
	}

	r, err := Test(t.Context(), s, time.Minute)
	if err != nil || r.Traces != nil || r.Metrics != nil || r.Logs != nil {
		t.Errorf("Test = %+v, %v", r, err)
	}
	rcv.Fail(http.StatusServiceUnavailable)
	r, err = Test(t.Context(), s, time.Minute)
	for _, e := range []error{r.Traces, r.Metrics, r.Logs} {
		if err != nil || e == nil || !strings.Contains(e.Error(), "refused by the test") {
			t.Errorf("Test against a refusing receiver: %v, %v", e, err)
		}
	}
}

// exported is every span, metric and log record the receiver holds.
func exported(rcv *telemetrytest.Receiver) []proto.Message {
	var out []proto.Message
	for _, m := range rcv.Spans() {
		out = append(out, m)
	}
	for _, m := range rcv.Metrics() {
		out = append(out, m)
	}
	for _, m := range rcv.Logs() {
		out = append(out, m)
	}
	return out
}
