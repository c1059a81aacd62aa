// Package telemetry sets up FreeCode's OpenTelemetry export: the trace
// and meter providers whose spans and metrics the orchestrator, the
// workspace and the MCP client record through the OpenTelemetry API, and
// the logger provider of the freecode.tool_decision events (events.go),
// sent over OTLP, http/protobuf or gRPC (exporters.go), to what the
// organization's managed settings, the user's config file (mcp.telemetry)
// or the user's environment name, and nowhere else.
//
// It is off by default. ResolveUser (resolve.go) decides: the managed
// settings' "telemetry" block turns it on or off whatever the rest says,
// and may name the endpoint, protocol and headers; then the user's
// mcp.telemetry block; then the standard variables of the process that
// runs FreeCode (OTEL_EXPORTER_OTLP_ENDPOINT, or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, _METRICS_ENDPOINT and
// _LOGS_ENDPOINT, OTEL_EXPORTER_OTLP_PROTOCOL and its per-signal forms,
// with OTEL_TRACES_EXPORTER / OTEL_METRICS_EXPORTER / OTEL_LOGS_EXPORTER
// not "none"). No server entry's environment and no project file has a
// say. The SDK's own variables still apply to what they cover
// (OTEL_EXPORTER_OTLP_HEADERS, _TIMEOUT, _COMPRESSION, _CERTIFICATE,
// OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES,
// OTEL_METRIC_EXPORT_INTERVAL, OTEL_BSP_*, OTEL_BLRP_*,
// OTEL_TRACES_SAMPLER). Spans are recorded on the calls' path as plain
// values and handed to the exporter beside them (deferred.go).
package telemetry

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	otellog "go.opentelemetry.io/otel/log"
	lognoop "go.opentelemetry.io/otel/log/noop"
	"go.opentelemetry.io/otel/metric"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/freecode/freecode/internal/audit"
	"github.com/freecode/freecode/internal/urlpolicy"
)

// ServiceName is the service.name of FreeCode's telemetry unless
// OTEL_SERVICE_NAME (or service.name in OTEL_RESOURCE_ATTRIBUTES) says
// otherwise.
const ServiceName = "freecode"

// Settings are what Resolve decided: where each signal goes and how, or
// why nothing is sent.
type Settings struct {
	// TracesURL, MetricsURL and LogsURL are where each signal is sent;
	// "" leaves that signal off. Logs are the events. Over http/protobuf
	// the full URL the exporter posts to
	// ("https://otel.example.com:4318/v1/traces"); over gRPC the
	// collector's endpoint as given ("http://127.0.0.1:4317": http is
	// without TLS).
	TracesURL, MetricsURL, LogsURL string
	// TracesProtocol, MetricsProtocol and LogsProtocol are each signal's
	// protocol, ProtocolHTTP or ProtocolGRPC; "" is ProtocolHTTP.
	TracesProtocol, MetricsProtocol, LogsProtocol string
	// Headers are a block's headers, sent in place of
	// OTEL_EXPORTER_OTLP_HEADERS; nil leaves the headers to that
	// variable. Never shown or logged.
	Headers map[string]string
	// Arguments exports a call's arguments and result on its execute_tool
	// span, redacted as the audit trail's are (Providers.Arguments);
	// ArgumentsFrom is the source that asked for it.
	Arguments     bool
	ArgumentsFrom string
	// Source says who turned it on or off: SourceEnvironment,
	// SourceManaged, or the user's config file ("your config file
	// /home/me/.freecode/config.json").
	Source string
	// Off says why nothing is sent, when no URL is set.
	Off string
}

// Enabled reports whether any signal is exported.
func (s Settings) Enabled() bool { return s.TracesURL != "" || s.MetricsURL != "" || s.LogsURL != "" }

// Protocols says the protocols in use: "http/protobuf", "grpc", or
// "grpc (traces), http/protobuf (metrics, logs)" when they differ.
func (s Settings) Protocols() string {
	by := map[string][]string{}
	var order []string
	for _, sig := range s.signals() {
		if *sig.url == "" {
			continue
		}
		p := cmpOr(*sig.protocol, ProtocolHTTP)
		if by[p] == nil {
			order = append(order, p)
		}
		by[p] = append(by[p], sig.name)
	}
	if len(order) <= 1 {
		return strings.Join(order, "")
	}
	var parts []string
	for _, p := range order {
		parts = append(parts, p+" ("+strings.Join(by[p], ", ")+")")
	}
	return strings.Join(parts, ", ")
}

// Protocol is the default protocol FreeCode exports with (ProtocolHTTP);
// Settings.Protocols says the ones in use.
const Protocol = ProtocolHTTP

// Options configures Start. A nil *Options means defaults.
type Options struct {
	// Logger is told of export failures (never of headers). Nil: none.
	Logger *slog.Logger
	// Version is FreeCode's, the service.version; "" leaves it out.
	Version string
	// ConfigPath is the user's config file whose mcp.telemetry
	// StartProcess reads ("": config.DefaultPath()).
	ConfigPath string
	// Secrets resolves the ${secret:NAME} of the headers, for
	// StartProcess; nil: the user's secret store.
	Secrets func(name string) (string, bool)
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
	// Arguments is Settings.Arguments of a tracer that exports:
	// workspace.Options.TelemetryArguments.
	Arguments bool

	// tracing and metering say which of Tracer and Meter export.
	tracing, metering bool

	shutdown []func(context.Context) error
}

// Recording returns the tracer and meter providers of the signals that
// are exported, nil for those that are off: what workspace.Options and
// orchestrator.Options take, which given nil skip the work of recording
// (the no-op providers would have it built and thrown away).
func (p *Providers) Recording() (trace.TracerProvider, metric.MeterProvider) {
	var tp trace.TracerProvider
	var mp metric.MeterProvider
	if p.tracing {
		tp = p.Tracer
	}
	if p.metering {
		mp = p.Meter
	}
	return tp, mp
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
		exp, err := traceExporter(ctx, s, once{})
		if err != nil {
			return nil, fmt.Errorf("telemetry: traces exporter: %w", err)
		}
		// Spans are recorded on the calls' path and handed over beside
		// them (deferred.go), then batched for export (spanbatch.go).
		// A variable that does not read is reported by the SDK's provider,
		// which reads it too.
		sampler, _ := samplerFromEnv(osGetenv)
		batcher := newSpanBatcher(exp, osGetenv)
		tp := newDeferredProvider(sampler, batcher.spans.max, batcher, res, osGetenv)
		p.Tracer, p.Arguments, p.tracing = tp, s.Arguments, true
		p.shutdown = append(p.shutdown, tp.Shutdown)
	}
	if s.MetricsURL != "" {
		exp, err := metricExporter(ctx, s, once{})
		if err != nil {
			return nil, errors.Join(fmt.Errorf("telemetry: metrics exporter: %w", err), p.Shutdown(ctx))
		}
		mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewPeriodicReader(exp)), sdkmetric.WithResource(res))
		p.Meter, p.metering = mp, true
		p.shutdown = append(p.shutdown, mp.Shutdown)
	}
	if s.LogsURL != "" {
		exp, err := logExporter(ctx, s, once{})
		if err != nil {
			return nil, errors.Join(fmt.Errorf("telemetry: logs exporter: %w", err), p.Shutdown(ctx))
		}
		lp := sdklog.NewLoggerProvider(sdklog.WithProcessor(sdklog.NewBatchProcessor(exp)), sdklog.WithResource(res))
		p.Logger = lp
		p.CallEvents = NewDecisions(lp).Emit
		p.shutdown = append(p.shutdown, lp.Shutdown)
	}
	log.Info("telemetry on", "source", s.Source, "traces", ShowURL(s.TracesURL), "metrics", ShowURL(s.MetricsURL), "logs", ShowURL(s.LogsURL),
		"protocol", s.Protocols(), "arguments", s.Arguments)
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

// StartProcess starts what FromConfig decides of opts.ConfigPath,
// logging what it refused (telemetry that cannot start is off; FreeCode
// runs on). stop flushes the providers, within 5 seconds: call it as the
// process ends.
func StartProcess(ctx context.Context, getenv func(string) string, opts *Options) (p *Providers, stop func()) {
	log := slog.New(slog.DiscardHandler)
	var path string
	var secrets func(string) (string, bool)
	if opts != nil {
		if opts.Logger != nil {
			log = opts.Logger
		}
		path, secrets = opts.ConfigPath, opts.Secrets
	}
	s, err := FromConfig(path, getenv, secrets)
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

// ShowURL is an export URL fit for a log or a terminal: its user info and
// query values as "***" (the exporter sends neither, but an environment's
// endpoint may hold a token there).
func ShowURL(u string) string { return urlpolicy.RedactURL(u) }
