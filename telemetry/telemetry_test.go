package telemetry

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	lognoop "go.opentelemetry.io/otel/log/noop"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/freecode/freecode/config"
)

// Off by default; on by the standard variables; the managed settings win
// over them either way; gRPC is refused.
func TestResolve(t *testing.T) {
	on, off := true, false
	for _, tc := range []struct {
		name    string
		managed *config.Managed
		env     map[string]string
		want    Settings
		err     bool
	}{
		{name: "nothing", want: Settings{Source: "environment", Off: "no OTEL_EXPORTER_OTLP_ENDPOINT in the environment, and no managed setting turns it on"}},
		{name: "endpoint", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318/"},
			want: Settings{Source: "environment", TracesURL: "http://127.0.0.1:4318/v1/traces", MetricsURL: "http://127.0.0.1:4318/v1/metrics",
				LogsURL: "http://127.0.0.1:4318/v1/logs"}},
		{name: "signal endpoints as they are", env: map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "https://t.example/x",
			"OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": "https://m.example/y"},
			want: Settings{Source: "environment", TracesURL: "https://t.example/x", MetricsURL: "https://m.example/y"}},
		{name: "metrics none", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_METRICS_EXPORTER": "none"},
			want: Settings{Source: "environment", TracesURL: "http://c:4318/v1/traces", LogsURL: "http://c:4318/v1/logs"}},
		{name: "logs none", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_LOGS_EXPORTER": "none"},
			want: Settings{Source: "environment", TracesURL: "http://c:4318/v1/traces", MetricsURL: "http://c:4318/v1/metrics"}},
		{name: "logs alone", env: map[string]string{"OTEL_EXPORTER_OTLP_LOGS_ENDPOINT": "https://l.example/z"},
			want: Settings{Source: "environment", LogsURL: "https://l.example/z"}},
		{name: "sdk disabled", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_SDK_DISABLED": "true"},
			want: Settings{Source: "environment", Off: "OTEL_SDK_DISABLED is true"}},
		{name: "grpc", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4317", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"},
			want: Settings{Off: "OTEL_EXPORTER_OTLP_PROTOCOL=grpc: FreeCode exports OTLP over http/protobuf only (gRPC is not built in)"}, err: true},
		{name: "not a url", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "c:4318"},
			want: Settings{Off: "OTEL_EXPORTER_OTLP_ENDPOINT is not an http or https URL"}, err: true},
		{name: "managed off wins", managed: &config.Managed{Telemetry: config.ManagedTelemetry{Enabled: &off}},
			env:  map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"},
			want: Settings{Source: "managed settings", Off: "turned off by the managed settings"}},
		{name: "managed endpoint wins", managed: &config.Managed{Telemetry: config.ManagedTelemetry{Enabled: &on, Endpoint: "https://otel.corp:4318",
			Headers: map[string]string{"k": "v"}}},
			env: map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://elsewhere:4318/v1/traces", "OTEL_TRACES_EXPORTER": "none"},
			want: Settings{Source: "managed settings", TracesURL: "https://otel.corp:4318/v1/traces", MetricsURL: "https://otel.corp:4318/v1/metrics",
				LogsURL: "https://otel.corp:4318/v1/logs", Headers: map[string]string{"k": "v"}}},
		{name: "managed on, the user's endpoint", managed: &config.Managed{Telemetry: config.ManagedTelemetry{Enabled: &on}},
			env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"},
			want: Settings{Source: "managed settings", TracesURL: "http://c:4318/v1/traces", MetricsURL: "http://c:4318/v1/metrics",
				LogsURL: "http://c:4318/v1/logs"}},
		{name: "managed on, no endpoint", managed: &config.Managed{Telemetry: config.ManagedTelemetry{Enabled: &on}},
			want: Settings{Source: "managed settings", Off: "turned on by the managed settings, which name no endpoint, and OTEL_EXPORTER_OTLP_ENDPOINT is not set"}, err: true},
		{name: "managed unset: the environment", managed: &config.Managed{Telemetry: config.ManagedTelemetry{Endpoint: "https://ignored"}},
			want: Settings{Source: "environment", Off: "no OTEL_EXPORTER_OTLP_ENDPOINT in the environment, and no managed setting turns it on"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Resolve(tc.managed, func(k string) string { return tc.env[k] })
			if (err != nil) != tc.err {
				t.Errorf("error = %v, want one: %v", err, tc.err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// Off, Start builds no exporter: the providers are the API's no-ops.
func TestStartOff(t *testing.T) {
	p, err := Start(t.Context(), Settings{Off: "off"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := p.Tracer.(tracenoop.TracerProvider); !ok {
		t.Errorf("tracer provider %T, want the no-op one", p.Tracer)
	}
	if _, ok := p.Logger.(lognoop.LoggerProvider); !ok {
		t.Errorf("logger provider %T, want the no-op one", p.Logger)
	}
	if err := p.Shutdown(t.Context()); err != nil {
		t.Error(err)
	}
}
