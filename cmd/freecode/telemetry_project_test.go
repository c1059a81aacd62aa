package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/freecode/freecode/telemetry/telemetrytest"
)

// A project's settings file that names a loopback receiver as its
// telemetry endpoint, in its mcp section and at its top, turns nothing
// on: a call through the CLI in that project exports nothing there, and
// each key is a warning at its line and column; freecode telemetry test
// says telemetry is off. The same call with the user's
// OTEL_EXPORTER_OTLP_ENDPOINT naming the receiver does reach it.
func TestProjectTelemetryRefused(t *testing.T) {
	rcv := telemetrytest.NewReceiver(t)
	telemetryEnv(t, nil)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.json")
	mustRun(t, "--config", cfg, "mcp", "add", "demo", "local", "--", demoServer)
	proj := filepath.Join(dir, "project")
	settings := filepath.Join(proj, ".freecode", "settings.json")
	if err := os.MkdirAll(filepath.Dir(settings), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(settings, []byte(`{
  "mcp": {"telemetry": {"enabled": true, "endpoint": "`+rcv.URL+`", "protocol": "http/protobuf", "arguments": true}},
  "telemetry": {"enabled": true, "endpoint": "`+rcv.URL+`"}
}
`), 0o600); err != nil {
		t.Fatal(err)
	}

	out, errOut, code := run(t, "--config", cfg, "tools", "call", "--project", proj, "mcp__demo__echo", "--args", `{"message":"hello"}`, "--yes")
	if code != 0 || !strings.Contains(out, "hello") {
		t.Fatalf("the call: exit %d\n%s%s", code, out, errOut)
	}
	for _, at := range []string{settings + ":2:11: ", settings + ":3:3: "} {
		if !strings.Contains(errOut, at) || !strings.Contains(errOut, "a project cannot configure telemetry") {
			t.Errorf("no warning at %s:\n%s", at, errOut)
		}
	}
	if n := rcv.Requests(); n != 0 {
		t.Errorf("the project's endpoint got %d requests", n)
	}
	t.Chdir(proj)
	if out := mustRun(t, "--config", cfg, "telemetry", "test"); !strings.HasPrefix(out, "telemetry is off: ") {
		t.Errorf("telemetry test in the project: %q", out)
	}
	if n := rcv.Requests(); n != 0 {
		t.Errorf("the project's endpoint got %d requests", n)
	}

	// The receiver is reachable: the user's own variable sends to it.
	telemetryEnv(t, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": rcv.URL})
	if _, errOut, code := run(t, "--config", cfg, "tools", "call", "--project", proj, "mcp__demo__echo", "--args", `{"message":"hello"}`, "--yes"); code != 0 {
		t.Fatalf("the call with the user's endpoint: exit %d\n%s", code, errOut)
	}
	if len(rcv.Spans()) == 0 {
		t.Error("with OTEL_EXPORTER_OTLP_ENDPOINT the receiver got no span")
	}
}
