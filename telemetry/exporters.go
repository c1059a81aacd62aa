package telemetry

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploggrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploghttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetricgrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// The exporters of each signal, over the signal's protocol: OTLP/HTTP
// with protobuf to a full URL, or OTLP/gRPC to an endpoint as it is
// (http: without TLS). The SDK's own variables still apply to what the
// settings leave (OTEL_EXPORTER_OTLP_TIMEOUT, _COMPRESSION, _CERTIFICATE,
// and _HEADERS when the settings have none).

// once configures an exporter for a single export: no retry, and timeout
// for it (freecode telemetry test). Zero: the SDK's defaults.
type once struct{ timeout time.Duration }

func (o once) set() bool { return o.timeout > 0 }

func traceExporter(ctx context.Context, s Settings, o once) (sdktrace.SpanExporter, error) {
	if s.TracesProtocol == ProtocolGRPC {
		opts := []otlptracegrpc.Option{otlptracegrpc.WithEndpointURL(s.TracesURL)}
		if s.Headers != nil {
			opts = append(opts, otlptracegrpc.WithHeaders(s.Headers))
		}
		if o.set() {
			opts = append(opts, otlptracegrpc.WithRetry(otlptracegrpc.RetryConfig{Enabled: false}), otlptracegrpc.WithTimeout(o.timeout))
		}
		return otlptracegrpc.New(ctx, opts...)
	}
	opts := []otlptracehttp.Option{otlptracehttp.WithEndpointURL(s.TracesURL)}
	if s.Headers != nil {
		opts = append(opts, otlptracehttp.WithHeaders(s.Headers))
	}
	if o.set() {
		opts = append(opts, otlptracehttp.WithRetry(otlptracehttp.RetryConfig{Enabled: false}), otlptracehttp.WithTimeout(o.timeout))
	}
	return otlptracehttp.New(ctx, opts...)
}

func metricExporter(ctx context.Context, s Settings, o once) (sdkmetric.Exporter, error) {
	if s.MetricsProtocol == ProtocolGRPC {
		opts := []otlpmetricgrpc.Option{otlpmetricgrpc.WithEndpointURL(s.MetricsURL)}
		if s.Headers != nil {
			opts = append(opts, otlpmetricgrpc.WithHeaders(s.Headers))
		}
		if o.set() {
			opts = append(opts, otlpmetricgrpc.WithRetry(otlpmetricgrpc.RetryConfig{Enabled: false}), otlpmetricgrpc.WithTimeout(o.timeout))
		}
		return otlpmetricgrpc.New(ctx, opts...)
	}
	opts := []otlpmetrichttp.Option{otlpmetrichttp.WithEndpointURL(s.MetricsURL)}
	if s.Headers != nil {
		opts = append(opts, otlpmetrichttp.WithHeaders(s.Headers))
	}
	if o.set() {
		opts = append(opts, otlpmetrichttp.WithRetry(otlpmetrichttp.RetryConfig{Enabled: false}), otlpmetrichttp.WithTimeout(o.timeout))
	}
	return otlpmetrichttp.New(ctx, opts...)
}

func logExporter(ctx context.Context, s Settings, o once) (sdklog.Exporter, error) {
	if s.LogsProtocol == ProtocolGRPC {
		opts := []otlploggrpc.Option{otlploggrpc.WithEndpointURL(s.LogsURL)}
		if s.Headers != nil {
			opts = append(opts, otlploggrpc.WithHeaders(s.Headers))
		}
		if o.set() {
			opts = append(opts, otlploggrpc.WithRetry(otlploggrpc.RetryConfig{Enabled: false}), otlploggrpc.WithTimeout(o.timeout))
		}
		return otlploggrpc.New(ctx, opts...)
	}
	opts := []otlploghttp.Option{otlploghttp.WithEndpointURL(s.LogsURL)}
	if s.Headers != nil {
		opts = append(opts, otlploghttp.WithHeaders(s.Headers))
	}
	if o.set() {
		opts = append(opts, otlploghttp.WithRetry(otlploghttp.RetryConfig{Enabled: false}), otlploghttp.WithTimeout(o.timeout))
	}
	return otlploghttp.New(ctx, opts...)
}
