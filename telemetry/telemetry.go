// Package telemetry sets up FreeCode's OpenTelemetry export: the trace
// and meter providers whose spans and metrics the orchestrator and the
// MCP client record through the OpenTelemetry API, and the logger
// provider of the freecode.tool_decision events (events.go), sent over OTLP/HTTP
// (protobuf) to what the user's environment or the organization's
// managed settings name, and nowhere else.
//
// It is off by default. The user turns it on with the standard variables
// of the process that runs FreeCode (OTEL_EXPORTER_OTLP_ENDPOINT, or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, _METRICS_ENDPOINT and
// _LOGS_ENDPOINT, with OTEL_TRACES_EXPORTER / OTEL_METRICS_EXPORTER /
// OTEL_LOGS_EXPORTER not "none"); the managed
// settings' "telemetry" block turns it on or off whatever those say, and
// may name the endpoint and its headers. No server entry's environment
// and no project file has a say: there is no such key. The SDK's own
// variables still apply to what they cover (OTEL_EXPORTER_OTLP_HEADERS,
// _TIMEOUT, _COMPRESSION, _CERTIFICATE, OTEL_SERVICE_NAME,
// OTEL_RESOURCE_ATTRIBUTES, OTEL_METRIC_EXPORT_INTERVAL, OTEL_BSP_*,
// OTEL_BLRP_*).
//
// Only gRPC is left out (OTEL_EXPORTER_OTLP_PROTOCOL=grpc is refused):
// its exporters would bring grpc-go into every binary.
package telemetry

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploghttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	otellog "go.opentelemetry.io/otel/log"
	lognoop "go.opentelemetry.io/otel/log/noop"
	"go.opentelemetry.io/otel/metric"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/freecode/freecode/config"
	"github.com/freecode/freecode/internal/audit"
)

// ServiceName is the service.name of FreeCode's telemetry unless
// OTEL_SERVICE_NAME (or service.name in OTEL_RESOURCE_ATTRIBUTES) says
// otherwise.
const ServiceName = "freecode"

// Settings are what Resolve decided: where each signal goes, or why
// nothing is sent.
type Settings struct {
	// TracesURL, MetricsURL and LogsURL are the full OTLP/HTTP URLs the
	// exporters post to ("https://otel.example.com:4318/v1/traces"); ""
	// leaves that signal off. Logs are the events.
	TracesURL, MetricsURL, LogsURL string
	// Headers are the managed settings' headers, sent in place of
	// OTEL_EXPORTER_OTLP_HEADERS; nil leaves the headers to that
	// variable. Never shown or logged.
	Headers map[string]string
	// Source says who turned it on or off: "environment" or "managed
	// settings".
	Source string
	// Off says why nothing is sent, when neither URL is set.
	Off string
}

// Enabled reports whether any signal is exported.
func (s Settings) Enabled() bool { return s.TracesURL != "" || s.MetricsURL != "" || s.LogsURL != "" }

// Protocol is the one protocol FreeCode exports with.
const Protocol = config.TelemetryProtocol

// Resolve decides the export from the managed policy m (nil: none) and
// the process's environment (getenv, os.Getenv in the commands). A
// managed "enabled" wins over the environment either way; its endpoint
// and headers over the variables'. The error says what was refused (a
// gRPC protocol, an endpoint that is no URL); the settings are then off.
func Resolve(m *config.Managed, getenv func(string) string) (Settings, error) {
	env := func(k string) string { return strings.TrimSpace(getenv(k)) }
	if m != nil && m.Telemetry.Enabled != nil {
		mt := m.Telemetry
		if !*mt.Enabled {
			return Settings{Source: "managed settings", Off: "turned off by the managed settings"}, nil
		}
		s := Settings{Source: "managed settings", Headers: mt.Headers}
		if mt.Endpoint != "" {
			s.TracesURL = signalURL(mt.Endpoint, "traces")
			s.MetricsURL = signalURL(mt.Endpoint, "metrics")
			s.LogsURL = signalURL(mt.Endpoint, "logs")
			return s, nil
		}
		// On, with the endpoint the user's environment names.
		var err error
		if s.TracesURL, err = envURL(env, "TRACES", "traces"); err != nil {
			return Settings{Off: err.Error()}, err
		}
		if s.MetricsURL, err = envURL(env, "METRICS", "metrics"); err != nil {
			return Settings{Off: err.Error()}, err
		}
		if s.LogsURL, err = envURL(env, "LOGS", "logs"); err != nil {
			return Settings{Off: err.Error()}, err
		}
		if !s.Enabled() {
			s.Off = "turned on by the managed settings, which name no endpoint, and OTEL_EXPORTER_OTLP_ENDPOINT is not set"
			return s, errors.New(s.Off)
		}
		return s, nil
	}
	if strings.EqualFold(env("OTEL_SDK_DISABLED"), "true") {
		return Settings{Source: "environment", Off: "OTEL_SDK_DISABLED is true"}, nil
	}
	s := Settings{Source: "environment"}
	for _, sig := range []struct {
		upper, path string
		url         *string
	}{{"TRACES", "traces", &s.TracesURL}, {"METRICS", "metrics", &s.MetricsURL}, {"LOGS", "logs", &s.LogsURL}} {
		if !exporterOTLP(env("OTEL_" + sig.upper + "_EXPORTER")) {
			continue
		}
		for _, k := range []string{"OTEL_EXPORTER_OTLP_" + sig.upper + "_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"} {
			if p := env(k); p != "" {
				if p != Protocol {
					err := fmt.Errorf("%s=%s: FreeCode exports OTLP over %s only (gRPC is not built in)", k, p, Protocol)
					return Settings{Off: err.Error()}, err
				}
				break
			}
		}
		u, err := envURL(env, sig.upper, sig.path)
		if err != nil {
			return Settings{Off: err.Error()}, err
		}
		*sig.url = u
	}
	if !s.Enabled() {
		s.Off = "no OTEL_EXPORTER_OTLP_ENDPOINT in the environment, and no managed setting turns it on"
	}
	return s, nil
}

// exporterOTLP reports whether OTEL_{TRACES,METRICS,LOGS}_EXPORTER, v, asks
// for OTLP: unset (the default), or a list that names otlp.
func exporterOTLP(v string) bool {
	if v == "" {
		return true
	}
	for e := range strings.SplitSeq(v, ",") {
		if strings.TrimSpace(e) == "otlp" {
			return true
		}
	}
	return false
}

// envURL is a signal's URL as the OTLP exporter specification reads the
// variables: the signal's own endpoint as it is, else the common one
// with v1/<signal> added; "" when neither is set.
func envURL(env func(string) string, upper, path string) (string, error) {
	k := "OTEL_EXPORTER_OTLP_" + upper + "_ENDPOINT"
	u := env(k)
	if u == "" {
		k = "OTEL_EXPORTER_OTLP_ENDPOINT"
		if u = env(k); u == "" {
			return "", nil
		}
		u = signalURL(u, path)
	}
	p, err := url.Parse(u)
	if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
		return "", fmt.Errorf("%s is not an http or https URL", k)
	}
	return u, nil
}

// signalURL adds v1/<signal> to a base endpoint.
func signalURL(base, signal string) string {
	return strings.TrimRight(base, "/") + "/v1/" + signal
}

// Options configures Start. A nil *Options means defaults.
type Options struct {
	// Logger is told of export failures (never of headers). Nil: none.
	Logger *slog.Logger
	// Version is FreeCode's, the service.version; "" leaves it out.
	Version string
}

// Providers are what the rest of FreeCode records with: no-op ones when
// telemetry is off, so that nothing is recorded and nothing dialled.
type Providers struct {
	Tracer trace.TracerProvider
	Meter  metric.MeterProvider
	// Logger receives the events.
	Logger otellog.LoggerProvider
	// CallEvents emits a call's audit line as its freecode.tool_decision
	// event (Decisions.Emit): workspace.Options.OnCallEvent. Nil when
	// events are off, so that nothing is made of the lines.
	CallEvents func(context.Context, audit.Event, time.Time)

	shutdown []func(context.Context) error
}

// Off returns providers that record nothing.
func Off() *Providers {
	return &Providers{Tracer: tracenoop.NewTracerProvider(), Meter: metricnoop.NewMeterProvider(), Logger: lognoop.NewLoggerProvider()}
}

// Start builds the providers s describes: off ones when it is off.
// Shutdown flushes them; call it when FreeCode exits.
func Start(ctx context.Context, s Settings, opts *Options) (*Providers, error) {
	if !s.Enabled() {
		return Off(), nil
	}
	if opts == nil {
		opts = &Options{}
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	// The SDK reports a failed export here (its own logger otherwise
	// writes to stderr unasked): the error names the URL and status, no
	// header.
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
		log.Warn("telemetry export failed", "error", err)
	}))
	res, err := newResource(ctx, opts.Version)
	if err != nil {
		return nil, err
	}
	p := Off()
	if s.TracesURL != "" {
		exp, err := otlptracehttp.New(ctx, traceOptions(s)...)
		if err != nil {
			return nil, fmt.Errorf("telemetry: traces exporter: %w", err)
		}
		tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
		p.Tracer = tp
		p.shutdown = append(p.shutdown, tp.Shutdown)
	}
	if s.MetricsURL != "" {
		exp, err := otlpmetrichttp.New(ctx, metricOptions(s)...)
		if err != nil {
			return nil, errors.Join(fmt.Errorf("telemetry: metrics exporter: %w", err), p.Shutdown(ctx))
		}
		mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewPeriodicReader(exp)), sdkmetric.WithResource(res))
		p.Meter = mp
		p.shutdown = append(p.shutdown, mp.Shutdown)
	}
	if s.LogsURL != "" {
		exp, err := otlploghttp.New(ctx, logOptions(s)...)
		if err != nil {
			return nil, errors.Join(fmt.Errorf("telemetry: logs exporter: %w", err), p.Shutdown(ctx))
		}
		lp := sdklog.NewLoggerProvider(sdklog.WithProcessor(sdklog.NewBatchProcessor(exp)), sdklog.WithResource(res))
		p.Logger = lp
		p.CallEvents = NewDecisions(lp).Emit
		p.shutdown = append(p.shutdown, lp.Shutdown)
	}
	log.Info("telemetry on", "source", s.Source, "traces", s.TracesURL, "metrics", s.MetricsURL, "logs", s.LogsURL, "protocol", Protocol)
	return p, nil
}

// Shutdown exports what is buffered and stops the exporters, within ctx.
func (p *Providers) Shutdown(ctx context.Context) error {
	var errs []error
	for _, f := range p.shutdown {
		errs = append(errs, f(ctx))
	}
	p.shutdown = nil
	return errors.Join(errs...)
}

func newResource(ctx context.Context, version string) (*resource.Resource, error) {
	attrs := []attribute.KeyValue{attribute.String("service.name", ServiceName)}
	if version != "" {
		attrs = append(attrs, attribute.String("service.version", version))
	}
	// Later options win: OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES
	// over the default name.
	res, err := resource.New(ctx, resource.WithAttributes(attrs...), resource.WithTelemetrySDK(), resource.WithFromEnv())
	if err != nil && res == nil {
		return nil, fmt.Errorf("telemetry: resource: %w", err)
	}
	return res, nil // a partial resource (a bad OTEL_RESOURCE_ATTRIBUTES entry) still names the service
}

func traceOptions(s Settings, extra ...otlptracehttp.Option) []otlptracehttp.Option {
	o := []otlptracehttp.Option{otlptracehttp.WithEndpointURL(s.TracesURL)}
	if s.Headers != nil {
		o = append(o, otlptracehttp.WithHeaders(s.Headers))
	}
	return append(o, extra...)
}

func metricOptions(s Settings, extra ...otlpmetrichttp.Option) []otlpmetrichttp.Option {
	o := []otlpmetrichttp.Option{otlpmetrichttp.WithEndpointURL(s.MetricsURL)}
	if s.Headers != nil {
		o = append(o, otlpmetrichttp.WithHeaders(s.Headers))
	}
	return append(o, extra...)
}

func logOptions(s Settings, extra ...otlploghttp.Option) []otlploghttp.Option {
	o := []otlploghttp.Option{otlploghttp.WithEndpointURL(s.LogsURL)}
	if s.Headers != nil {
		o = append(o, otlploghttp.WithHeaders(s.Headers))
	}
	return append(o, extra...)
}

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
	exp, err := otlptracehttp.New(ctx, traceOptions(s, otlptracehttp.WithRetry(otlptracehttp.RetryConfig{Enabled: false}), otlptracehttp.WithTimeout(timeout))...)
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
	exp, err := otlpmetrichttp.New(ctx, metricOptions(s, otlpmetrichttp.WithRetry(otlpmetrichttp.RetryConfig{Enabled: false}), otlpmetrichttp.WithTimeout(timeout))...)
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
	exp, err := otlploghttp.New(ctx, logOptions(s, otlploghttp.WithRetry(otlploghttp.RetryConfig{Enabled: false}), otlploghttp.WithTimeout(timeout))...)
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

// FromProcess resolves the settings of this process: the machine's
// managed settings (config.LoadManaged) over its own environment. A
// managed policy that cannot be read leaves telemetry off, since it may
// be what turns it off.
func FromProcess(getenv func(string) string) (Settings, error) {
	m, err := config.LoadManaged()
	if err != nil {
		err = fmt.Errorf("telemetry is off: the managed settings could not be read: %w", err)
		return Settings{Off: err.Error()}, err
	}
	return Resolve(m, getenv)
}

// StartProcess starts what FromProcess decides, logging what it refused
// (telemetry that cannot start is off; FreeCode runs on). stop flushes
// the providers, within 5 seconds: call it as the process ends.
func StartProcess(ctx context.Context, getenv func(string) string, opts *Options) (p *Providers, stop func()) {
	log := slog.New(slog.DiscardHandler)
	if opts != nil && opts.Logger != nil {
		log = opts.Logger
	}
	s, err := FromProcess(getenv)
	if err != nil {
		log.Warn(err.Error())
	}
	p, err = Start(ctx, s, opts)
	if err != nil {
		log.Warn("telemetry is off", "error", err)
		p = Off()
	}
	return p, func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if err := p.Shutdown(ctx); err != nil {
			log.Warn("telemetry: the last export failed", "error", err)
		}
	}
}
