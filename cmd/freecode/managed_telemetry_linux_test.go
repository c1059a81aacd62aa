package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/freecode/freecode/telemetry/telemetrytest"
)

// The managed telemetry block wins over the user's OTEL_* variables:
// freecode telemetry test sends to its endpoint with its headers, not to
// the user's; freecode policy prints the block with the file it comes
// from, the headers by name and never their values.
func TestManagedTelemetry(t *testing.T) {
	ns := newManagedNS(t)
	corp := telemetrytest.NewReceiver(t)
	users := telemetrytest.NewReceiver(t)
	telemetryEnv(t, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": users.URL, "OTEL_LOGS_EXPORTER": "none"})
	ns.writePolicy(t, `{"telemetry": {"enabled": true, "endpoint": "`+corp.URL+`", "headers": {"x-ingest-key": "s3cret"}}}`)

	out := ns.mustCLI(t, "telemetry", "test")
	want := "telemetry is on (managed settings), protocol http/protobuf\n" +
		"traces   " + corp.URL + "/v1/traces: OK\n" +
		"metrics  " + corp.URL + "/v1/metrics: OK\n" +
		"logs     " + corp.URL + "/v1/logs: OK\n" +
		"content  arguments and results not exported\n"
	if out != want {
		t.Errorf("telemetry test:\n%s\nwant:\n%s", out, want)
	}
	if n := users.Requests(); n != 0 {
		t.Errorf("the user's endpoint got %d requests; the managed one wins", n)
	}
	for _, h := range corp.Headers() {
		if h.Get("X-Ingest-Key") != "s3cret" {
			t.Errorf("a request without the managed header: %v", h)
		}
	}

	out = ns.mustCLI(t, "policy")
	for _, line := range []string{
		"\nTelemetry (OpenTelemetry export of tool calls: traces, metrics, tool_decision events):\n",
		"  on, whatever your OTEL_* variables say             " + managedFile + "\n",
		"  sent to " + corp.URL,
		"  with the headers x-ingest-key (values not shown)   " + managedFile + "\n",
		"\nTelemetry in force: on, turned on by the managed settings, over http/protobuf; arguments and results not exported.\n",
	} {
		if !strings.Contains(out, line) {
			t.Errorf("policy lacks %q:\n%s", line, out)
		}
	}
	js := ns.mustCLI(t, "policy", "--json")
	var pj struct {
		Telemetry        map[string]any
		TelemetryInForce map[string]any
	}
	if err := json.Unmarshal([]byte(js), &pj); err != nil {
		t.Fatal(err)
	}
	wantJSON := map[string]any{"enabled": true, "endpoint": corp.URL, "headers": []any{"x-ingest-key"},
		"from": map[string]any{"enabled": managedFile, "endpoint": managedFile, "headers": managedFile}}
	if diff := cmp.Diff(wantJSON, pj.Telemetry); diff != "" {
		t.Errorf("policy --json telemetry (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]any{"on": true, "source": "managed settings", "protocol": "http/protobuf", "arguments": false}, pj.TelemetryInForce); diff != "" {
		t.Errorf("policy --json telemetryInForce (-want +got):\n%s", diff)
	}
	if strings.Contains(out+js, "s3cret") {
		t.Errorf("policy shows a header's value:\n%s\n%s", out, js)
	}
}
