package otelcoltest_test

import (
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/otel/attribute"
	otellog "go.opentelemetry.io/otel/log"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/freecode/freecode/telemetry"
	"github.com/freecode/freecode/telemetry/otelcoltest"
)

// What FreeCode's exporters send comes back from the real collector's
// files as it was sent: a span and its child with their ids (hex) and
// typed attributes, a histogram and a counter, an event with its
// attributes, and the resource.
func TestCollectorRoundTrip(t *testing.T) {
	col := otelcoltest.Start(t)
	s, err := telemetry.Resolve(nil, func(k string) string {
		return map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": col.URL}[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	p, err := telemetry.Start(t.Context(), s, &telemetry.Options{Version: "1.2.3"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, parent := p.Tracer.Tracer("roundtrip").Start(t.Context(), "parent", trace.WithSpanKind(trace.SpanKindClient))
	_, child := p.Tracer.Tracer("roundtrip").Start(ctx, "child", trace.WithAttributes(
		attribute.String("s", "text"), attribute.Int("i", 42), attribute.Bool("b", true), attribute.Float64("f", 1.5),
		attribute.StringSlice("a", []string{"x", "y"})))
	child.End()
	parent.End()
	h, _ := p.Meter.Meter("roundtrip").Float64Histogram("h", metric.WithUnit("s"), metric.WithExplicitBucketBoundaries(1, 2))
	h.Record(t.Context(), 0.5, metric.WithAttributes(attribute.String("k", "v")))
	h.Record(t.Context(), 1.5, metric.WithAttributes(attribute.String("k", "v")))
	c, _ := p.Meter.Meter("roundtrip").Int64Counter("c")
	c.Add(t.Context(), 3)
	var r otellog.Record
	r.SetEventName("roundtrip.event")
	r.SetSeverity(otellog.SeverityInfo)
	r.AddAttributes(attribute.String("e", "v"), attribute.Int64("n", 7))
	p.Logger.Logger("roundtrip").Emit(ctx, r)
	if err := p.Shutdown(t.Context()); err != nil {
		t.Fatal(err)
	}

	got := col.Read(t)
	if len(got.Spans) != 2 {
		t.Fatalf("spans: %+v", got.Spans)
	}
	pc, cc := parent.SpanContext(), child.SpanContext()
	ch := got.SpansNamed("child")
	if len(ch) != 1 {
		t.Fatalf("spans named child: %+v", ch)
	}
	sp := ch[0]
	if sp.TraceID != pc.TraceID().String() || sp.SpanID != cc.SpanID().String() || sp.ParentSpanID != pc.SpanID().String() || sp.Kind != "internal" {
		t.Errorf("child: trace %s span %s parent %s kind %s; want %s %s %s internal", sp.TraceID, sp.SpanID, sp.ParentSpanID, sp.Kind,
			pc.TraceID(), cc.SpanID(), pc.SpanID())
	}
	if diff := cmp.Diff(otelcoltest.Attrs{"s": "text", "i": int64(42), "b": true, "f": 1.5, "a": []any{"x", "y"}}, sp.Attrs); diff != "" {
		t.Errorf("child's attributes (-want +got):\n%s", diff)
	}
	if par := got.Span(sp.ParentSpanID); par == nil || par.Name != "parent" || par.ParentSpanID != "" || par.Kind != "client" {
		t.Errorf("parent: %+v", par)
	}
	if sp.Resource.Text("service.name") != "freecode" || sp.Resource.Text("service.version") != "1.2.3" || sp.Scope != "roundtrip" {
		t.Errorf("resource %v, scope %q", sp.Resource, sp.Scope)
	}
	if !sp.End.After(sp.Start) && !sp.End.Equal(sp.Start) || sp.Start.IsZero() {
		t.Errorf("child's times: %v to %v", sp.Start, sp.End)
	}

	hm := got.Metric("h")
	if hm == nil || hm.Type != "histogram" || hm.Unit != "s" || hm.Temporality != "cumulative" || len(hm.Points) != 1 {
		t.Fatalf("histogram: %+v", hm)
	}
	if pt := hm.Points[0]; pt.Count != 2 || pt.Sum != 2 || !cmp.Equal(pt.Bounds, []float64{1, 2}) || !cmp.Equal(pt.BucketCounts, []uint64{1, 1, 0}) ||
		pt.Attrs.Text("k") != "v" {
		t.Errorf("histogram's point: %+v", pt)
	}
	cm := got.Metric("c")
	if cm == nil || cm.Type != "sum" || !cm.Monotonic || len(cm.Points) != 1 || cm.Points[0].Value != int64(3) {
		t.Errorf("counter: %+v", cm)
	}

	evs := got.Events("roundtrip.event")
	if len(evs) != 1 {
		t.Fatalf("events: %+v", got.Logs)
	}
	ev := evs[0]
	if diff := cmp.Diff(otelcoltest.Attrs{"e": "v", "n": int64(7)}, ev.Attrs); diff != "" {
		t.Errorf("event's attributes (-want +got):\n%s", diff)
	}
	if ev.SeverityNumber != int(otellog.SeverityInfo) || ev.Body != nil || ev.TraceID != pc.TraceID().String() || ev.SpanID != pc.SpanID().String() {
		t.Errorf("event: %+v", ev)
	}
}

// The product's commands build no package of the Collector: it is in
// interop/otelcol, a module of its own, and the product's go.mod names
// none of its modules.
func TestNoCollectorInTheProduct(t *testing.T) {
	collector := regexp.MustCompile(`^(go\.opentelemetry\.io/collector|github\.com/open-telemetry/opentelemetry-collector-contrib)(/|$)`)
	out, err := exec.Command("go", "list", "-deps", "github.com/freecode/freecode/cmd/...").Output()
	if err != nil {
		t.Fatalf("go list -deps ./cmd/...: %v", err)
	}
	pkgs := strings.Fields(string(out))
	if len(pkgs) < 100 {
		t.Fatalf("go list -deps ./cmd/... listed %d packages", len(pkgs))
	}
	for _, pkg := range pkgs {
		if collector.MatchString(pkg) {
			t.Errorf("the product builds the Collector's package %s", pkg)
		}
	}
	mods, err := exec.Command("go", "list", "-m", "-f", "{{.Path}}", "all").Output()
	if err != nil {
		t.Fatalf("go list -m all: %v", err)
	}
	for _, m := range strings.Fields(string(mods)) {
		if collector.MatchString(m) {
			t.Errorf("the product's module graph has the Collector's module %s", m)
		}
	}
}
