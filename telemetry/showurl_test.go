package telemetry

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
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
