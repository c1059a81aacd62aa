package main

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/freecode/freecode/telemetry/telemetrytest"
)

// telemetryEnv clears the OTEL_* variables FreeCode reads, then sets env.
func telemetryEnv(t *testing.T, env map[string]string) {
	for _, k := range []string{"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
		"OTEL_EXPORTER_OTLP_LOGS_ENDPOINT", "OTEL_TRACES_EXPORTER", "OTEL_METRICS_EXPORTER", "OTEL_LOGS_EXPORTER", "OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
		"OTEL_EXPORTER_OTLP_METRICS_PROTOCOL", "OTEL_EXPORTER_OTLP_LOGS_PROTOCOL", "OTEL_EXPORTER_OTLP_HEADERS", "OTEL_SDK_DISABLED",
		"OTEL_SERVICE_NAME", "OTEL_RESOURCE_ATTRIBUTES"} {
		t.Setenv(k, env[k])
	}
}

// freecode telemetry test against a real OTLP/HTTP receiver: one span,
// one metric and one event arrive, with the headers of OTEL_EXPORTER_OTLP_HEADERS, which
// the output never shows; a refusing endpoint exits 1 and says why;
// nothing configured, nothing is sent.
func TestTelemetryTestCommand(t *testing.T) {
	rcv := telemetrytest.NewReceiver(t)
	telemetryEnv(t, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": rcv.URL, "OTEL_EXPORTER_OTLP_HEADERS": "x-ingest-key=s3cret",
		"OTEL_SERVICE_NAME": "freecode-test"})
	out := mustRun(t, "telemetry", "test")
	want := "telemetry is on (environment), protocol http/protobuf\n" +
		"traces   " + rcv.URL + "/v1/traces: OK\n" +
		"metrics  " + rcv.URL + "/v1/metrics: OK\n" +
		"logs     " + rcv.URL + "/v1/logs: OK\n" +
		"content  arguments and results not exported\n"
	if out != want {
		t.Errorf("output:\n%s\nwant:\n%s", out, want)
	}
	spans := rcv.Spans()
	if len(spans) != 1 || spans[0].Name != "freecode telemetry test" {
		t.Errorf("spans received: %v", spans)
	}
	ms := rcv.Metrics()
	if len(ms) != 1 || ms[0].Name != "freecode.telemetry.test" {
		t.Errorf("metrics received: %v", ms)
	}
	if ls := rcv.Logs(); len(ls) != 1 || ls[0].EventName != "freecode.telemetry.test" {
		t.Errorf("events received: %v", ls)
	}
	if got := rcv.Resource()["service.name"]; got != "freecode-test" {
		t.Errorf("service.name = %q, want OTEL_SERVICE_NAME's", got)
	}
	for _, h := range rcv.Headers() {
		if h.Get("X-Ingest-Key") != "s3cret" {
			t.Errorf("a request without the header of OTEL_EXPORTER_OTLP_HEADERS: %v", h)
		}
	}

	rcv.Fail(http.StatusServiceUnavailable)
	out, errOut, code := run(t, "telemetry", "test")
	if code != 1 || !strings.Contains(out, "traces   "+rcv.URL+"/v1/traces: FAILED: ") || !strings.Contains(out, "refused by the test") ||
		!strings.Contains(out, "metrics  "+rcv.URL+"/v1/metrics: FAILED: ") || !strings.Contains(out, "logs     "+rcv.URL+"/v1/logs: FAILED: ") {
		t.Errorf("against a refusing endpoint: exit %d\n%s%s", code, out, errOut)
	}
	if strings.Contains(out+errOut, "s3cret") {
		t.Errorf("the output shows a header's value:\n%s%s", out, errOut)
	}

	n := rcv.Requests()
	telemetryEnv(t, nil)
	out = mustRun(t, "telemetry", "test")
	if !strings.HasPrefix(out, "telemetry is off: ") {
		t.Errorf("with nothing configured: %q", out)
	}
	if rcv.Requests() != n {
		t.Errorf("with nothing configured, %d more requests reached the receiver", rcv.Requests()-n)
	}
}

// freecode telemetry test over gRPC, turned on by the user's config file
// (mcp.telemetry) against a real grpc.Server on loopback: it says which
// file turned it on, the endpoint as given (no /v1/<signal>), the
// header's ${env:} resolved and sent, never shown; a refusing receiver
// fails each signal with exit 1.
func TestTelemetryTestCommandGRPC(t *testing.T) {
	rcv := telemetrytest.NewGRPCReceiver(t)
	telemetryEnv(t, nil)
	t.Setenv("FC_TEST_INGEST", "s3cret-from-env")
	path := filepath.Join(t.TempDir(), "config.json")
	if err := os.WriteFile(path, []byte(`{"mcp": {"telemetry": {"enabled": true, "endpoint": "`+rcv.URL+`", "protocol": "grpc",
  "headers": {"x-ingest-key": "${env:FC_TEST_INGEST}"}, "arguments": true}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	out := mustRun(t, "--config", path, "telemetry", "test")
	want := "telemetry is on (your config file " + path + "), protocol grpc\n" +
		"traces   " + rcv.URL + ": OK\n" +
		"metrics  " + rcv.URL + ": OK\n" +
		"logs     " + rcv.URL + ": OK\n" +
		"content  arguments and results exported, redacted (arguments: true in your config file " + path + ")\n"
	if out != want {
		t.Errorf("output:\n%s\nwant:\n%s", out, want)
	}
	if len(rcv.Spans()) != 1 || len(rcv.Metrics()) != 1 || len(rcv.Logs()) != 1 {
		t.Errorf("received %d spans, %d metrics, %d events; want one each", len(rcv.Spans()), len(rcv.Metrics()), len(rcv.Logs()))
	}
	for _, h := range rcv.Headers() {
		if h.Get("x-ingest-key") != "s3cret-from-env" {
			t.Errorf("a request without the header: %v", h)
		}
	}
	rcv.Fail(http.StatusServiceUnavailable)
	out, errOut, code := run(t, "--config", path, "telemetry", "test")
	if code != 1 || strings.Count(out, ": FAILED: ") != 3 || !strings.Contains(out, "Unavailable") {
		t.Errorf("against a refusing receiver: exit %d\n%s%s", code, out, errOut)
	}
	if strings.Contains(out+errOut, "s3cret") {
		t.Errorf("the output shows a header's value:\n%s%s", out, errOut)
	}
}

// freecode policy says whether telemetry is exported and which source
// turned it on: here the user's config file, over the environment.
func TestPolicyTelemetryInForce(t *testing.T) {
	telemetryEnv(t, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1"})
	path := filepath.Join(t.TempDir(), "config.json")
	out := mustRun(t, "--config", path, "policy")
	if !strings.Contains(out, "\nTelemetry in force: on, turned on by your OTEL_* variables, over http/protobuf; arguments and results not exported.\n") {
		t.Errorf("policy with OTEL_EXPORTER_OTLP_ENDPOINT:\n%s", out)
	}
	if err := os.WriteFile(path, []byte(`{"mcp": {"telemetry": {"enabled": false}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	out = mustRun(t, "--config", path, "policy")
	if !strings.Contains(out, "\nTelemetry in force: off (turned off by your config file "+path+").\n") {
		t.Errorf("policy with mcp.telemetry off:\n%s", out)
	}
}

// A token in the environment's endpoint (user info, a query value) is
// *** in what freecode telemetry test prints; the export goes on (the
// exporter sends neither).
func TestTelemetryTestCommandHidesURLSecrets(t *testing.T) {
	rcv := telemetrytest.NewReceiver(t)
	withUser := strings.Replace(rcv.URL, "://", "://apikey:s3cret-pass@", 1)
	telemetryEnv(t, map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": withUser + "/v1/traces?token=s3cret-query",
		"OTEL_METRICS_EXPORTER": "none", "OTEL_LOGS_EXPORTER": "none"})
	out := mustRun(t, "telemetry", "test")
	if strings.Contains(out, "s3cret") || !strings.Contains(out, "/v1/traces?token=***: OK") {
		t.Errorf("output:\n%s", out)
	}
}
