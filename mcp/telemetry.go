package mcp

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/freecode/freecode/config"
)

// Telemetry records the MCP client's side of each tools/call as the
// OpenTelemetry MCP semantic conventions describe it: a client span named
// "tools/call {tool}" and the mcp.client.operation.duration histogram.
// It holds the OpenTelemetry API's tracer and instruments, never the
// SDK's: the commands choose the providers (package telemetry). A nil
// *Telemetry records nothing; the trace context of CallOptions.Trace is
// sent on to the server all the same.
type Telemetry struct {
	tracer   trace.Tracer
	duration metric.Float64Histogram
}

const instrumentationScope = "github.com/freecode/freecode/mcp"

// durationBuckets are the conventions' advice for
// mcp.client.operation.duration, in seconds.
var durationBuckets = []float64{0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300}

// NewTelemetry returns the Telemetry of tp and mp; a nil one of either
// records none of its signal.
func NewTelemetry(tp trace.TracerProvider, mp metric.MeterProvider) *Telemetry {
	t := &Telemetry{}
	if tp != nil {
		t.tracer = tp.Tracer(instrumentationScope)
	}
	if mp != nil {
		// An instrument that cannot be made is a no-op one: telemetry never
		// fails a call.
		t.duration, _ = mp.Meter(instrumentationScope).Float64Histogram("mcp.client.operation.duration",
			metric.WithUnit("s"), metric.WithDescription("The duration of the MCP request or notification as observed on the sender from the time it was sent until the response or ack is received."),
			metric.WithExplicitBucketBoundaries(durationBuckets...))
	}
	return t
}

// callSpan is one tools/call's span and clock.
type callSpan struct {
	t     *Telemetry
	span  trace.Span // nil without a tracer
	start time.Time
	attrs []attribute.KeyValue
}

// startCall starts the client span of a tools/call of tool on s, a child
// of parent, and puts the trace context into params._meta (traceparent,
// tracestate; SEP-414), so that the server's spans join the trace: the
// client span's context, else parent's as it came.
func (t *Telemetry) startCall(parent trace.SpanContext, tool string, s *session, srv config.Server, params *mcpsdk.CallToolParams) *callSpan {
	c := &callSpan{t: t, start: time.Now()}
	sc := parent
	if t != nil {
		transport := "tcp"
		if srv.Type == config.TypeLocal {
			transport = "pipe" // stdio
		}
		c.attrs = []attribute.KeyValue{
			attribute.String("mcp.method.name", "tools/call"),
			attribute.String("gen_ai.tool.name", tool),
		}
		if t.tracer != nil {
			attrs := append(c.attrs[:len(c.attrs):len(c.attrs)],
				attribute.String("gen_ai.operation.name", "execute_tool"),
				attribute.String("network.transport", transport),
			)
			if s.cs != nil {
				if id := s.cs.ID(); id != "" {
					attrs = append(attrs, attribute.String("mcp.session.id", id))
				}
				if ir := s.cs.InitializeResult(); ir != nil && ir.ProtocolVersion != "" {
					attrs = append(attrs, attribute.String("mcp.protocol.version", ir.ProtocolVersion))
				}
			}
			// The span is started on a context of its own that holds its
			// parent alone: nothing of it rides the call's context.
			_, c.span = t.tracer.Start(trace.ContextWithSpanContext(context.Background(), parent), "tools/call "+tool,
				trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
			if c.span.SpanContext().IsValid() {
				sc = c.span.SpanContext()
			}
		}
	}
	if sc.IsValid() {
		carrier := propagation.MapCarrier{}
		propagation.TraceContext{}.Inject(trace.ContextWithSpanContext(context.Background(), sc), carrier)
		meta := params.GetMeta()
		if meta == nil {
			meta = map[string]any{}
		}
		for k, v := range carrier {
			meta[k] = v
		}
		params.SetMeta(meta)
	}
	return c
}

// end ends the span with what became of the call: err (nil for an
// answer) or res's isError, as error.type.
func (c *callSpan) end(res *mcpsdk.CallToolResult, err error) {
	if c.t == nil {
		return
	}
	attrs := c.attrs
	errType, msg := "", ""
	var werr *jsonrpc.Error
	switch {
	case err != nil && errors.As(err, &werr) && werr.Code != codeRejected:
		errType, msg = strconv.FormatInt(werr.Code, 10), werr.Message
	case errors.Is(err, ErrConnectionLost):
		errType, msg = "connection_lost", "the connection was lost during the call"
	case errors.Is(err, context.DeadlineExceeded):
		errType, msg = "timeout", "the call timed out"
	case errors.Is(err, context.Canceled):
		errType, msg = "cancelled", "the call was cancelled"
	case err != nil:
		errType, msg = "_OTHER", "the call failed"
	case res != nil && res.IsError:
		errType, msg = "tool_error", "the tool returned isError"
	}
	if errType != "" {
		attrs = append(attrs[:len(attrs):len(attrs)], attribute.String("error.type", errType))
	}
	if c.t.duration != nil {
		c.t.duration.Record(context.Background(), time.Since(c.start).Seconds(), metric.WithAttributes(attrs...))
	}
	if c.span == nil {
		return
	}
	if errType != "" {
		// The status says the class only: an error's text may hold what
		// the server or the arguments wrote.
		c.span.SetAttributes(attribute.String("error.type", errType))
		c.span.SetStatus(codes.Error, msg)
	}
	c.span.End()
}
