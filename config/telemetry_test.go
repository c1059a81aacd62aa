package config

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The user's mcp.telemetry block is read, with every key; a bad value is
// a problem at its key that never shows a header's value.
func TestUserTelemetry(t *testing.T) {
	on, off := true, false
	cfg, err := Parse("/home/u/.freecode/config.json", []byte(`{"mcp": {"telemetry": {"enabled": true,
  "endpoint": "http://127.0.0.1:4317", "protocol": "grpc", "headers": {"x-api-key": "${secret:OTEL_KEY}"}, "arguments": false}}}`))
	if err != nil {
		t.Fatal(err)
	}
	want := &Telemetry{Enabled: &on, Endpoint: "http://127.0.0.1:4317", Protocol: "grpc",
		Headers: map[string]string{"x-api-key": "${secret:OTEL_KEY}"}, Arguments: &off}
	if diff := cmp.Diff(want, cfg.MCP.Telemetry); diff != "" {
		t.Errorf("mcp.telemetry (-want +got):\n%s", diff)
	}
	if len(cfg.Warnings) != 0 {
		t.Errorf("warnings: %v", cfg.Warnings)
	}

	_, err = Parse("/c.json", []byte(`{"mcp": {"telemetry": {"enabled": 1, "endpoint": "https://u:p@otel.example.com",
  "protocol": "http/json", "headers": {"k": "s3cret\r"}}}}`))
	var ve *ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("Parse = %v, want a *ValidationError", err)
	}
	var got []string
	for _, p := range ve.Problems {
		got = append(got, p.Key)
		if strings.Contains(p.Msg, "s3cret") {
			t.Errorf("a problem shows a header's value: %q", p.Msg)
		}
	}
	if diff := cmp.Diff([]string{"mcp.telemetry.enabled", "mcp.telemetry.endpoint", "mcp.telemetry.headers", "mcp.telemetry.protocol"}, got); diff != "" {
		t.Errorf("problems' keys (-want +got):\n%s", diff)
	}
}

// A project's settings file that sets telemetry keys, in its mcp section
// or at its top, is refused with a warning at each key's name: the file
// loads, its servers with it, and nothing of the block is kept.
func TestProjectTelemetryRefused(t *testing.T) {
	dir := t.TempDir()
	p := ProjectSettingsPath(dir)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	data := `{
  "mcp": {
    "servers": [{"name": "a", "command": ["x"]}],
    "telemetry": {"enabled": true, "endpoint": "http://127.0.0.1:4318"}
  },
  "telemetry": {"enabled": true}
}`
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	servers, warnings, err := LoadProjectWarnings(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(servers) != 1 {
		t.Errorf("servers: %v", servers)
	}
	var got []string
	for _, w := range warnings {
		if !w.Warning || !strings.HasPrefix(w.Msg, "a project cannot configure telemetry") {
			t.Errorf("warning %+v", w)
		}
		got = append(got, w.Key+" "+strconv.Itoa(w.Line)+":"+strconv.Itoa(w.Col))
	}
	if diff := cmp.Diff([]string{"mcp.telemetry 4:5", "telemetry 6:3"}, got); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
	cfg, err := parse(p, []byte(data), ScopeProject, dir)
	if err != nil || cfg.MCP.Telemetry != nil {
		t.Errorf("a project's block was kept: %+v, %v", cfg.MCP.Telemetry, err)
	}
}

// LoadTelemetry reads the user's mcp.telemetry whatever else the file
// holds: a server entry that does not validate (which makes Load fail)
// does not hide an "enabled": false. A block that does not read, or a
// file that is not JSON, is an error.
func TestLoadTelemetryDespiteOtherProblems(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	broken := write("broken.json", `{"mcp": {"telemetry": {"enabled": false}, "servers": [{"name": "x", "type": "local"}]}}`)
	if _, err := Load(broken); err == nil {
		t.Fatal("Load of a server entry with no command succeeded: the test needs a file Load refuses")
	}
	tel, err := LoadTelemetry(broken)
	if err != nil || tel == nil || tel.Enabled == nil || *tel.Enabled {
		t.Errorf("LoadTelemetry = %+v, %v: want enabled false", tel, err)
	}
	if tel, err := LoadTelemetry(write("none.json", `{"mcp": {"servers": []}}`)); tel != nil || err != nil {
		t.Errorf("no block: %+v, %v", tel, err)
	}
	if tel, err := LoadTelemetry(filepath.Join(dir, "missing.json")); tel != nil || err != nil {
		t.Errorf("no file: %+v, %v", tel, err)
	}
	if _, err := LoadTelemetry(write("notjson.json", `{"mcp": {"telemetry": {"enabled": false}`)); err == nil {
		t.Error("a file that is not JSON: no error")
	}
	if _, err := LoadTelemetry(write("badblock.json", `{"mcp": {"telemetry": {"enabled": "no"}}}`)); err == nil {
		t.Error("a block that does not read: no error")
	}
}
