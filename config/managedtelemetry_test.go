package config

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The telemetry block: each field a later file sets replaces an earlier
// file's; a bad value is an error at its key and changes nothing, and a
// problem never shows a header's value.
func TestLoadManagedTelemetry(t *testing.T) {
	d := ManagedDropInsName + "/"
	on, off := true, false
	for _, tc := range []struct {
		name     string
		files    map[string]string
		want     ManagedTelemetry
		problems []string
	}{
		{
			name:  "none",
			files: map[string]string{ManagedSettingsName: `{}`},
		},
		{
			name: "on",
			files: map[string]string{ManagedSettingsName: `{"telemetry": {"enabled": true, "endpoint": "https://otel.example.com:4318",
  "protocol": "http/protobuf", "headers": {"x-api-key": "s3cret"}}}`},
			want: ManagedTelemetry{Enabled: &on, Endpoint: "https://otel.example.com:4318", Protocol: "http/protobuf", Headers: map[string]string{"x-api-key": "s3cret"},
				From: map[string]string{"enabled": ManagedSettingsName, "endpoint": ManagedSettingsName, "protocol": ManagedSettingsName, "headers": ManagedSettingsName}},
		},
		{
			name: "a later file turns it off and keeps the endpoint",
			files: map[string]string{
				ManagedSettingsName: `{"telemetry": {"enabled": true, "endpoint": "http://127.0.0.1:4318"}}`,
				d + "10-off.json":   `{"telemetry": {"enabled": false}}`,
			},
			want: ManagedTelemetry{Enabled: &off, Endpoint: "http://127.0.0.1:4318",
				From: map[string]string{"enabled": d + "10-off.json", "endpoint": ManagedSettingsName}},
		},
		{
			name: "grpc, and the arguments",
			files: map[string]string{
				ManagedSettingsName: `{"telemetry": {"enabled": true, "endpoint": "http://127.0.0.1:4317", "protocol": "grpc"}}`,
				d + "20-args.json":  `{"telemetry": {"arguments": false}}`,
			},
			want: ManagedTelemetry{Enabled: &on, Endpoint: "http://127.0.0.1:4317", Protocol: "grpc", Arguments: &off,
				From: map[string]string{"enabled": ManagedSettingsName, "endpoint": ManagedSettingsName, "protocol": ManagedSettingsName, "arguments": d + "20-args.json"}},
		},
		{
			name: "bad values",
			files: map[string]string{ManagedSettingsName: `{"telemetry": {"enabled": "yes", "endpoint": "otel.example.com:4318",
  "protocol": "json", "headers": {"x-api-key": "s3cret\nX", "bad name": "v"}, "logs": true}}`},
			problems: []string{
				`managed-settings.json:1:27: telemetry.enabled: want true or false`,
				`managed-settings.json:1:46: telemetry.endpoint: want the http or https URL of an OTLP endpoint, with neither user info nor query: "https://otel.example.com:4318" (http/protobuf) or "https://otel.example.com:4317" (grpc)`,
				`managed-settings.json:2:15: telemetry.protocol: want "http/protobuf" or "grpc"`,
				`managed-settings.json:2:34: telemetry.headers: "bad name" is not a valid HTTP header name`,
				`managed-settings.json:2:34: telemetry.headers: the value of header "x-api-key" holds a line break or NUL`,
				`managed-settings.json:2:79: telemetry.logs: unknown key "logs" is ignored (warning)`,
			},
		},
		{
			name:     "not an object",
			files:    map[string]string{ManagedSettingsName: `{"telemetry": true}`},
			problems: []string{`managed-settings.json:1:15: telemetry: want an object`},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := writeManaged(t, tc.files)
			m := mustLoadManaged(t, dir)
			for k, path := range m.Telemetry.From { // relative, as the table says them
				if rel, err := filepath.Rel(dir, path); err == nil {
					m.Telemetry.From[k] = filepath.ToSlash(rel)
				}
			}
			if diff := cmp.Diff(tc.want, m.Telemetry); diff != "" {
				t.Errorf("telemetry (-want +got):\n%s", diff)
			}
			got := problems(dir, m)
			if diff := cmp.Diff(tc.problems, got); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
			if strings.Contains(strings.Join(got, "\n"), "s3cret") {
				t.Errorf("a problem shows a header's value: %q", got)
			}
		})
	}
}
