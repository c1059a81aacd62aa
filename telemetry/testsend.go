package telemetry

import (
	"context"
	"errors"
	"time"

	"go.opentelemetry.io/otel/attribute"
	otellog "go.opentelemetry.io/otel/log"
	"go.opentelemetry.io/otel/metric"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// TestResult is what Test found of each signal: nil for an export the
// endpoint accepted.
type TestResult struct {
	Traces, Metrics, Logs error
}

// Test sends one span, one metric point and one event to the endpoints s names, each
// export at once and without retries, and returns what became of each
// (`freecode telemetry test`). A signal that is off is not tried.
func Test(ctx context.Context, s Settings, timeout time.Duration) (TestResult, error) {
	var r TestResult
	if !s.Enabled() {
		return r, errors.New("telemetry is off: " + s.Off)
	}
	res, err := newResource(ctx, "")
	if err != nil {
		return r, err
	}
	if s.TracesURL != "" {
		r.Traces = testTraces(ctx, s, res, timeout)
	}
	if s.MetricsURL != "" {
		r.Metrics = testMetrics(ctx, s, res, timeout)
	}
	if s.LogsURL != "" {
		r.Logs = testLogs(ctx, s, res, timeout)
	}
	return r, nil
}

func testTraces(ctx context.Context, s Settings, res *resource.Resource, timeout time.Duration) error {
	exp, err := traceExporter(ctx, s, once{timeout})
	if err != nil {
		return err
	}
	defer exp.Shutdown(context.WithoutCancel(ctx))
	// The span is recorded, then exported by hand, so that the export's
	// own error comes back rather than going to the error handler.
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec), sdktrace.WithResource(res))
	_, span := tp.Tracer(scope).Start(ctx, "freecode telemetry test")
	span.SetAttributes(attribute.String("freecode.test", "true"))
	span.End()
	if err := tp.Shutdown(ctx); err != nil {
		return err
	}
	return exp.ExportSpans(ctx, rec.Ended())
}

func testMetrics(ctx context.Context, s Settings, res *resource.Resource, timeout time.Duration) error {
	exp, err := metricExporter(ctx, s, once{timeout})
	if err != nil {
		return err
	}
	defer exp.Shutdown(context.WithoutCancel(ctx))
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader), sdkmetric.WithResource(res))
	defer mp.Shutdown(context.WithoutCancel(ctx))
	c, err := mp.Meter(scope).Int64Counter("freecode.telemetry.test", metric.WithDescription("One point sent by freecode telemetry test."))
	if err != nil {
		return err
	}
	c.Add(ctx, 1)
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(ctx, &rm); err != nil {
		return err
	}
	return exp.Export(ctx, &rm)
}

func testLogs(ctx context.Context, s Settings, res *resource.Resource, timeout time.Duration) error {
	exp, err := logExporter(ctx, s, once{timeout})
	if err != nil {
		return err
	}
	defer exp.Shutdown(context.WithoutCancel(ctx))
	// As with the span: kept, then exported by hand for the error.
	var rec recordKeeper
	lp := sdklog.NewLoggerProvider(sdklog.WithProcessor(&rec), sdklog.WithResource(res))
	var r otellog.Record
	r.SetEventName("freecode.telemetry.test")
	r.SetTimestamp(time.Now())
	r.SetSeverity(otellog.SeverityInfo)
	r.AddAttributes(attribute.String("freecode.test", "true"))
	lp.Logger(scope).Emit(ctx, r)
	if err := lp.Shutdown(ctx); err != nil {
		return err
	}
	return exp.Export(ctx, rec.records)
}

// recordKeeper is a log processor that keeps what is emitted (one
// goroutine emits, in Test).
type recordKeeper struct{ records []sdklog.Record }

func (k *recordKeeper) OnEmit(_ context.Context, r *sdklog.Record) error {
	k.records = append(k.records, r.Clone())
	return nil
}
func (*recordKeeper) Enabled(context.Context, sdklog.EnabledParameters) bool { return true }
func (*recordKeeper) Shutdown(context.Context) error                         { return nil }
func (*recordKeeper) ForceFlush(context.Context) error                       { return nil }

// scope is the instrumentation scope of the test's span, metric and event.
const scope = "github.com/freecode/freecode/telemetry"
