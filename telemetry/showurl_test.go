package telemetry

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/freecode/freecode/telemetry/telemetrytest"
)

// An endpoint from the environment may carry a token in its user info or
// query (the exporter sends neither): the log of the start shows the URL
// with them as ***, as every other URL FreeCode shows.
func TestStartLogHidesURLSecrets(t *testing.T) {
	env := map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://apikey:s3cret-pass@127.0.0.1:1/?token=s3cret-query"}
	s, err := Resolve(nil, func(k string) string { return env[k] })
	if err != nil || !s.Enabled() {
		t.Fatalf("Resolve: %+v, %v", s, err)
	}
	var buf bytes.Buffer
	p, err := Start(t.Context(), s, &Options{Logger: slog.New(slog.NewTextHandler(&buf, nil))})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Shutdown(t.Context()); err != nil {
		t.Log(err)
	}
	if out := buf.String(); strings.Contains(out, "s3cret") || !strings.Contains(out, "telemetry on") {
		t.Errorf("log:\n%s", out)
	}
	for _, u := range []string{s.TracesURL, s.MetricsURL, s.LogsURL} {
		if got := ShowURL(u); strings.Contains(got, "s3cret") || !strings.Contains(got, "127.0.0.1:1") {
			t.Errorf("ShowURL(%q) = %q", u, got)
		}
	}
}

// An empty set of headers (the organization's endpoint whose block names
// none) is sent in place of OTEL_EXPORTER_OTLP_HEADERS: the user's
// credentials for another collector do not reach it.
func TestEmptyHeadersReplaceTheVariable(t *testing.T) {
	rcv := telemetrytest.NewReceiver(t)
	t.Setenv("OTEL_EXPORTER_OTLP_HEADERS", "x-vendor-key=s3cret")
	for _, h := range []map[string]string{{}, nil} {
		s := Settings{TracesURL: rcv.URL + "/v1/traces", LogsURL: rcv.URL + "/v1/logs", Headers: h}
		r, err := Test(t.Context(), s, 0)
		if err != nil || r.Traces != nil || r.Logs != nil {
			t.Fatalf("Test: %+v, %v", r, err)
		}
	}
	hs := rcv.Headers()
	if len(hs) != 4 {
		t.Fatalf("%d requests", len(hs))
	}
	for i, h := range hs {
		if got, want := h.Get("X-Vendor-Key"), map[bool]string{true: "", false: "s3cret"}[i < 2]; got != want {
			t.Errorf("request %d: x-vendor-key %q, want %q", i, got, want)
		}
	}
}
