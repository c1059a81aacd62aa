package telemetry

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	lognoop "go.opentelemetry.io/otel/log/noop"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/freecode/freecode/config"
)

const nothing = "no OTEL_EXPORTER_OTLP_ENDPOINT in the environment, and neither your config file's mcp.telemetry nor the managed settings turn it on"

// Off by default; on by the standard variables, over http/protobuf or
// gRPC; the managed settings win over them either way.
func TestResolve(t *testing.T) {
	on, off := true, false
	for _, tc := range []struct {
		name    string
		managed *config.Managed
		env     map[string]string
		want    Settings
		err     bool
	}{
		{name: "nothing", want: Settings{Source: "environment", Off: nothing}},
		{name: "endpoint", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318/"},
			want: Settings{Source: "environment", TracesURL: "http://127.0.0.1:4318/v1/traces", MetricsURL: "http://127.0.0.1:4318/v1/metrics",
				LogsURL: "http://127.0.0.1:4318/v1/logs", TracesProtocol: "http/protobuf", MetricsProtocol: "http/protobuf", LogsProtocol: "http/protobuf"}},
		{name: "signal endpoints as they are", env: map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "https://t.example/x",
			"OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": "https://m.example/y"},
			want: Settings{Source: "environment", TracesURL: "https://t.example/x", MetricsURL: "https://m.example/y",
				TracesProtocol: "http/protobuf", MetricsProtocol: "http/protobuf"}},
		{name: "metrics none", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_METRICS_EXPORTER": "none"},
			want: Settings{Source: "environment", TracesURL: "http://c:4318/v1/traces", LogsURL: "http://c:4318/v1/logs",
				TracesProtocol: "http/protobuf", LogsProtocol: "http/protobuf"}},
		{name: "logs none", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_LOGS_EXPORTER": "none"},
			want: Settings{Source: "environment", TracesURL: "http://c:4318/v1/traces", MetricsURL: "http://c:4318/v1/metrics",
				TracesProtocol: "http/protobuf", MetricsProtocol: "http/protobuf"}},
		{name: "logs alone", env: map[string]string{"OTEL_EXPORTER_OTLP_LOGS_ENDPOINT": "https://l.example/z"},
			want: Settings{Source: "environment", LogsURL: "https://l.example/z", LogsProtocol: "http/protobuf"}},
		{name: "sdk disabled", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_SDK_DISABLED": "true"},
			want: Settings{Source: "environment", Off: "OTEL_SDK_DISABLED is true"}},
		{name: "grpc: the endpoint as it is", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4317", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"},
			want: Settings{Source: "environment", TracesURL: "http://c:4317", MetricsURL: "http://c:4317", LogsURL: "http://c:4317",
				TracesProtocol: "grpc", MetricsProtocol: "grpc", LogsProtocol: "grpc"}},
		{name: "grpc for traces alone", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "grpc",
			"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "https://t:4317"},
			want: Settings{Source: "environment", TracesURL: "https://t:4317", MetricsURL: "http://c:4318/v1/metrics", LogsURL: "http://c:4318/v1/logs",
				TracesProtocol: "grpc", MetricsProtocol: "http/protobuf", LogsProtocol: "http/protobuf"}},
		{name: "http/json refused", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"},
			want: Settings{Off: "OTEL_EXPORTER_OTLP_PROTOCOL=http/json: FreeCode exports OTLP over http/protobuf or grpc (set one of them)"}, err: true},
		{name: "not a url", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "c:4318"},
			want: Settings{Off: "OTEL_EXPORTER_OTLP_ENDPOINT is not an http or https URL"}, err: true},
		{name: "managed off wins", managed: &config.Managed{Telemetry: config.ManagedTelemetry{Enabled: &off}},
			env:  map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"},
			want: Settings{Source: "managed settings", Off: "turned off by the managed settings"}},
		{name: "managed endpoint wins", managed: &config.Managed{Telemetry: config.ManagedTelemetry{Enabled: &on, Endpoint: "https://otel.corp:4318",
			Headers: map[string]string{"k": "v"}}},
			env: map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://elsewhere:4318/v1/traces", "OTEL_TRACES_EXPORTER": "none"},
			want: Settings{Source: "managed settings", TracesURL: "https://otel.corp:4318/v1/traces", MetricsURL: "https://otel.corp:4318/v1/metrics",
				LogsURL: "https://otel.corp:4318/v1/logs", Headers: map[string]string{"k": "v"}, TracesProtocol: "http/protobuf", MetricsProtocol: "http/protobuf", LogsProtocol: "http/protobuf"}},
		{name: "managed on, the user's endpoint", managed: &config.Managed{Telemetry: config.ManagedTelemetry{Enabled: &on}},
			env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"},
			want: Settings{Source: "managed settings", TracesURL: "http://c:4318/v1/traces", MetricsURL: "http://c:4318/v1/metrics",
				LogsURL: "http://c:4318/v1/logs", TracesProtocol: "http/protobuf", MetricsProtocol: "http/protobuf", LogsProtocol: "http/protobuf"}},
		{name: "managed on, no endpoint", managed: &config.Managed{Telemetry: config.ManagedTelemetry{Enabled: &on}},
			want: Settings{Source: "managed settings", Off: "turned on by the managed settings, but no endpoint is named there and OTEL_EXPORTER_OTLP_ENDPOINT is not set"}, err: true},
		{name: "managed unset: the environment", managed: &config.Managed{Telemetry: config.ManagedTelemetry{Endpoint: "https://ignored"}},
			want: Settings{Source: "environment", Off: nothing}},
		{name: "managed grpc", managed: &config.Managed{Telemetry: config.ManagedTelemetry{Enabled: &on, Endpoint: "https://otel.corp:4317", Protocol: "grpc"}},
			env: map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"},
			want: Settings{Source: "managed settings", TracesURL: "https://otel.corp:4317", MetricsURL: "https://otel.corp:4317", LogsURL: "https://otel.corp:4317",
				TracesProtocol: "grpc", MetricsProtocol: "grpc", LogsProtocol: "grpc", Headers: map[string]string{}}},
		// The user's variables neither change the managed endpoint's
		// protocol nor turn it off with one FreeCode does not speak.
		{name: "managed endpoint, no protocol", managed: &config.Managed{Telemetry: config.ManagedTelemetry{Enabled: &on, Endpoint: "https://otel.corp:4318"}},
			env: map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "http/json", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "grpc"},
			want: Settings{Source: "managed settings", TracesURL: "https://otel.corp:4318/v1/traces", MetricsURL: "https://otel.corp:4318/v1/metrics",
				LogsURL: "https://otel.corp:4318/v1/logs", TracesProtocol: "http/protobuf", MetricsProtocol: "http/protobuf", LogsProtocol: "http/protobuf",
				Headers: map[string]string{}}},
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

// The user's mcp.telemetry block: under the managed block, over the
// environment, key by key; a block without "enabled" says nothing but
// "arguments".
func TestResolveUser(t *testing.T) {
	on, off := true, false
	const path = "/home/u/.freecode/config.json"
	const user = "your config file " + path
	grpc := func(u string) Settings {
		return Settings{TracesURL: u, MetricsURL: u, LogsURL: u, TracesProtocol: "grpc", MetricsProtocol: "grpc", LogsProtocol: "grpc"}
	}
	with := func(s Settings, f func(*Settings)) Settings { f(&s); return s }
	for _, tc := range []struct {
		name    string
		managed *config.Managed
		user    *config.Telemetry
		env     map[string]string
		want    Settings
	}{
		{name: "the user's grpc endpoint over the environment's", user: &config.Telemetry{Enabled: &on, Endpoint: "http://127.0.0.1:4317", Protocol: "grpc",
			Headers: map[string]string{"k": "${secret:K}"}},
			env:  map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://elsewhere:4318"},
			want: with(grpc("http://127.0.0.1:4317"), func(s *Settings) { s.Source, s.Headers = user, map[string]string{"k": "${secret:K}"} })},
		{name: "the user's off over the environment", user: &config.Telemetry{Enabled: &off},
			env:  map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"},
			want: Settings{Source: user, Off: "turned off by " + user}},
		{name: "the managed off over the user's on", managed: &config.Managed{Telemetry: config.ManagedTelemetry{Enabled: &off}},
			user: &config.Telemetry{Enabled: &on, Endpoint: "http://127.0.0.1:4318"},
			want: Settings{Source: "managed settings", Off: "turned off by the managed settings"}},
		// Headers go with the endpoint of their block: the user's
		// collector gets the user's, not the organization's key.
		{name: "managed on, the user's endpoint", managed: &config.Managed{Telemetry: config.ManagedTelemetry{Enabled: &on, Headers: map[string]string{"m": "1"}}},
			user: &config.Telemetry{Enabled: &on, Endpoint: "http://127.0.0.1:4317", Protocol: "grpc", Headers: map[string]string{"u": "2"}},
			want: with(grpc("http://127.0.0.1:4317"), func(s *Settings) { s.Source, s.Headers = "managed settings", map[string]string{"u": "2"} })},
		// The organization's collector never gets the user's credentials:
		// not the user's block's headers, not OTEL_EXPORTER_OTLP_HEADERS
		// (an empty set, in its place).
		{name: "the managed endpoint without headers", managed: &config.Managed{Telemetry: config.ManagedTelemetry{Enabled: &on, Endpoint: "https://otel.corp:4318"}},
			user: &config.Telemetry{Enabled: &on, Endpoint: "https://api.vendor.example", Headers: map[string]string{"x-vendor-key": "${secret:VENDOR}"}},
			env:  map[string]string{"OTEL_EXPORTER_OTLP_HEADERS": "x-vendor-key=s3cret"},
			want: Settings{Source: "managed settings", TracesURL: "https://otel.corp:4318/v1/traces", MetricsURL: "https://otel.corp:4318/v1/metrics",
				LogsURL: "https://otel.corp:4318/v1/logs", TracesProtocol: "http/protobuf", MetricsProtocol: "http/protobuf", LogsProtocol: "http/protobuf",
				Headers: map[string]string{}}},
		{name: "the managed endpoint, the user's headers without one", managed: &config.Managed{Telemetry: config.ManagedTelemetry{Enabled: &on, Endpoint: "https://otel.corp:4318"}},
			user: &config.Telemetry{Enabled: &on, Headers: map[string]string{"x-vendor-key": "${secret:VENDOR}"}},
			env:  map[string]string{"OTEL_METRICS_EXPORTER": "none"},
			want: Settings{Source: "managed settings", TracesURL: "https://otel.corp:4318/v1/traces", MetricsURL: "https://otel.corp:4318/v1/metrics",
				LogsURL: "https://otel.corp:4318/v1/logs", TracesProtocol: "http/protobuf", MetricsProtocol: "http/protobuf", LogsProtocol: "http/protobuf",
				Headers: map[string]string{}}},
		// The user's "arguments": true is not the organization's: its
		// collector gets arguments only if its own block asks.
		{name: "the managed endpoint, the user's arguments", managed: &config.Managed{Telemetry: config.ManagedTelemetry{Enabled: &on, Endpoint: "https://otel.corp:4318"}},
			user: &config.Telemetry{Arguments: &on},
			want: Settings{Source: "managed settings", TracesURL: "https://otel.corp:4318/v1/traces", MetricsURL: "https://otel.corp:4318/v1/metrics",
				LogsURL: "https://otel.corp:4318/v1/logs", TracesProtocol: "http/protobuf", MetricsProtocol: "http/protobuf", LogsProtocol: "http/protobuf",
				Headers: map[string]string{}}},
		{name: "the managed endpoint and arguments", managed: &config.Managed{Telemetry: config.ManagedTelemetry{Enabled: &on, Endpoint: "https://otel.corp:4318", Arguments: &on}},
			user: &config.Telemetry{Arguments: &off},
			want: Settings{Source: "managed settings", TracesURL: "https://otel.corp:4318/v1/traces", MetricsURL: "https://otel.corp:4318/v1/metrics",
				LogsURL: "https://otel.corp:4318/v1/logs", TracesProtocol: "http/protobuf", MetricsProtocol: "http/protobuf", LogsProtocol: "http/protobuf",
				Headers: map[string]string{}, Arguments: true, ArgumentsFrom: "managed settings"}},
		{name: "managed on, the user's endpoint and arguments", managed: &config.Managed{Telemetry: config.ManagedTelemetry{Enabled: &on}},
			user: &config.Telemetry{Enabled: &on, Endpoint: "http://127.0.0.1:4317", Protocol: "grpc", Arguments: &on},
			want: with(grpc("http://127.0.0.1:4317"), func(s *Settings) { s.Source, s.Arguments, s.ArgumentsFrom = "managed settings", true, user })},
		// A block that names no endpoint sends its headers to the
		// environment's.
		{name: "the managed headers, the environment's endpoint", managed: &config.Managed{Telemetry: config.ManagedTelemetry{Enabled: &on, Headers: map[string]string{"m": "1"}}},
			env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_METRICS_EXPORTER": "none", "OTEL_LOGS_EXPORTER": "none"},
			want: Settings{Source: "managed settings", TracesURL: "http://c:4318/v1/traces", MetricsURL: "http://c:4318/v1/metrics", LogsURL: "http://c:4318/v1/logs",
				TracesProtocol: "http/protobuf", MetricsProtocol: "http/protobuf", LogsProtocol: "http/protobuf", Headers: map[string]string{"m": "1"}}},
		// The user's endpoint without a protocol: the variable's, as
		// config.Telemetry.Protocol says.
		{name: "the user's endpoint, the environment's protocol", user: &config.Telemetry{Enabled: &on, Endpoint: "http://127.0.0.1:4317"},
			env: map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc", "OTEL_EXPORTER_OTLP_LOGS_PROTOCOL": "http/protobuf"},
			want: Settings{Source: user, TracesURL: "http://127.0.0.1:4317", MetricsURL: "http://127.0.0.1:4317", LogsURL: "http://127.0.0.1:4317/v1/logs",
				TracesProtocol: "grpc", MetricsProtocol: "grpc", LogsProtocol: "http/protobuf"}},
		{name: "the user's protocol with the environment's endpoint", user: &config.Telemetry{Enabled: &on, Protocol: "grpc"},
			env:  map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4317", "OTEL_METRICS_EXPORTER": "none"},
			want: with(grpc("http://c:4317"), func(s *Settings) { s.Source = user })},
		{name: "a block without enabled: the environment decides", user: &config.Telemetry{Endpoint: "http://127.0.0.1:4317", Arguments: &on},
			env:  map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_METRICS_EXPORTER": "none", "OTEL_LOGS_EXPORTER": "none"},
			want: Settings{Source: "environment", TracesURL: "http://c:4318/v1/traces", TracesProtocol: "http/protobuf", Arguments: true, ArgumentsFrom: user}},
		{name: "the managed arguments over the user's", managed: &config.Managed{Telemetry: config.ManagedTelemetry{Arguments: &off}},
			user: &config.Telemetry{Enabled: &on, Endpoint: "http://127.0.0.1:4317", Protocol: "grpc", Arguments: &on},
			want: with(grpc("http://127.0.0.1:4317"), func(s *Settings) { s.Source = user })},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ResolveUser(tc.managed, tc.user, path, func(k string) string { return tc.env[k] })
			if err != nil {
				t.Errorf("error %v", err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// A header's references are resolved; what is missing is named, never a
// value.
func TestExpandHeaders(t *testing.T) {
	s := Settings{Headers: map[string]string{"a": "Bearer ${secret:TOK}", "b": "${env:ORG}", "c": "$${env:LIT}"}}
	got, err := s.ExpandHeaders(func(k string) (string, bool) {
		v, ok := map[string]string{"secret:TOK": "s3cret", "ORG": "acme"}[k]
		return v, ok
	})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{"a": "Bearer s3cret", "b": "acme", "c": "${env:LIT}"}, got.Headers); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	_, err = Settings{Headers: map[string]string{"a": "${secret:GONE}"}}.ExpandHeaders(func(string) (string, bool) { return "", false })
	if err == nil || err.Error() != "telemetry header a: secret GONE is not set (`freecode secret set GONE`)" {
		t.Errorf("error %v", err)
	}
}

// A config file that does not load (a server entry that does not
// validate) still has its mcp.telemetry applied: its "enabled": false
// holds over the environment's endpoint. A file whose block cannot be
// read at all (not JSON) may be what turns telemetry off, so the
// environment alone does not turn it on; the error says why it is off.
func TestFromConfigBrokenFile(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	dir := t.TempDir()
	env := map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}
	getenv := func(k string) string { return env[k] }

	path := filepath.Join(dir, "config.json")
	if err := os.WriteFile(path, []byte(`{"mcp": {"telemetry": {"enabled": false}, "servers": [{"name": "x", "type": "local"}]}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := FromConfig(path, getenv, nil)
	if s.Enabled() || !strings.Contains(s.Off, "turned off by your config file") || err != nil {
		t.Errorf("a server entry's problem: settings %+v, %v: want off by the config file's block", s, err)
	}

	// The same file with its server fixed and the block on: on, by it.
	if err := os.WriteFile(path, []byte(`{"mcp": {"telemetry": {"enabled": true}, "servers": [{"name": "x", "type": "local"}]}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if s, err := FromConfig(path, getenv, nil); !s.Enabled() || s.Source != sourceUser(path) || err != nil {
		t.Errorf("block on, a server entry's problem: settings %+v, %v", s, err)
	}

	notJSON := filepath.Join(dir, "notjson.json")
	if err := os.WriteFile(notJSON, []byte(`{"mcp": {"telemetry": {"enabled": false}`), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err = FromConfig(notJSON, getenv, nil)
	if s.Enabled() {
		t.Errorf("a file that is not JSON: settings %+v: want off (its block may turn it off)", s)
	}
	if err == nil || !strings.Contains(err.Error(), "mcp.telemetry") || !strings.Contains(s.Off, "mcp.telemetry") {
		t.Errorf("a file that is not JSON: %v, off %q: want both to say the block could not be read", err, s.Off)
	}
}

// The managed settings' "enabled" decides over a user's block that cannot
// be read: on, with the error told.
func TestResolveConfigManagedOverUnreadableBlock(t *testing.T) {
	notJSON := filepath.Join(t.TempDir(), "config.json")
	if err := os.WriteFile(notJSON, []byte(`{"mcp": {`), 0o600); err != nil {
		t.Fatal(err)
	}
	on := true
	m := &config.Managed{Telemetry: config.ManagedTelemetry{Enabled: &on, Endpoint: "https://otel.example.com:4318"}}
	s, err := ResolveConfig(m, notJSON, func(string) string { return "" })
	if !s.Enabled() || s.Source != SourceManaged || s.TracesURL != "https://otel.example.com:4318/v1/traces" {
		t.Errorf("settings %+v: want the managed settings' export", s)
	}
	if err == nil {
		t.Error("no error: want the block's")
	}
}

// Over http/protobuf the signal's path goes on the base URL's path, before
// any query it has.
func TestSignalURL(t *testing.T) {
	for base, want := range map[string]string{
		"http://c:4318":                 "http://c:4318/v1/traces",
		"http://c:4318/":                "http://c:4318/v1/traces",
		"https://c/otlp/":               "https://c/otlp/v1/traces",
		"https://c/otlp?tenant=a&k=v":   "https://c/otlp/v1/traces?tenant=a&k=v",
		"https://c/otlp/?tenant=a#frag": "https://c/otlp/v1/traces?tenant=a#frag",
	} {
		if got := signalURL(base, "traces"); got != want {
			t.Errorf("signalURL(%q) = %q, want %q", base, got, want)
		}
	}
}
