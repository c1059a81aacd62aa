package mcp

import (
	"context"
	"errors"
	"maps"
	"slices"
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
	"github.com/freecode/freecode/internal/otelset"
)

// Telemetry records the MCP client's side of each tools/call as the
// OpenTelemetry MCP semantic conventions describe it: a client span named
// "tools/call {tool}" and the mcp.client.operation.duration histogram;
// and of each session (ConnOptions.Telemetry): a span per connect,
// "freecode.connect", and the mcp.client.session.duration histogram;
// and the MCP Tasks followed to their end, freecode.tasks.running.
// It holds the OpenTelemetry API's tracer and instruments, never the
// SDK's: the commands choose the providers (package telemetry). A
// tools/call's span and duration are made after the call (otelset.Later),
// of values its path kept, with the span ID the server was sent. A nil
// *Telemetry records nothing; the trace context of CallOptions.Trace is
// sent on to the server all the same.
type Telemetry struct {
	tp       trace.TracerProvider // nil: no traces
	tracer   trace.Tracer
	duration metric.Float64Histogram
	session  metric.Float64Histogram
	tasks    metric.Int64UpDownCounter
	ops      otelset.Cache[opKey] // the attribute sets of duration
}

const instrumentationScope = "github.com/freecode/freecode/mcp"

// durationBuckets are the conventions' advice for
// mcp.client.operation.duration and mcp.client.session.duration, in
// seconds.
var durationBuckets = []float64{0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300}

// NewTelemetry returns the Telemetry of tp and mp; a nil one of either
// records none of its signal.
func NewTelemetry(tp trace.TracerProvider, mp metric.MeterProvider) *Telemetry {
	t := &Telemetry{}
	if tp != nil {
		t.tp, t.tracer = tp, tp.Tracer(instrumentationScope)
	}
	if mp != nil {
		// An instrument that cannot be made is a no-op one: telemetry never
		// fails a call.
		t.duration, _ = mp.Meter(instrumentationScope).Float64Histogram("mcp.client.operation.duration",
			metric.WithUnit("s"), metric.WithDescription("The duration of the MCP request or notification as observed on the sender from the time it was sent until the response or ack is received."),
			metric.WithExplicitBucketBoundaries(durationBuckets...))
		t.session, _ = mp.Meter(instrumentationScope).Float64Histogram("mcp.client.session.duration",
			metric.WithUnit("s"), metric.WithDescription("The duration of the MCP session as observed on the MCP client."),
			metric.WithExplicitBucketBoundaries(durationBuckets...))
		t.tasks, _ = mp.Meter(instrumentationScope).Int64UpDownCounter("freecode.tasks.running",
			metric.WithUnit("{task}"), metric.WithDescription("The MCP Tasks FreeCode follows to their end (a call awaiting its task, a task tracked for a frontend), by server."))
	}
	return t
}

// taskFollowed counts a task of server as running until the returned
// function is called, when FreeCode stops following it (it ended, or
// FreeCode gave up or stops).
func (t *Telemetry) taskFollowed(server string) func() {
	if t == nil || t.tasks == nil {
		return func() {}
	}
	attrs := metric.WithAttributes(attribute.String("freecode.server", server))
	t.tasks.Add(context.Background(), 1, attrs)
	return func() { t.tasks.Add(context.Background(), -1, attrs) }
}

// networkTransport is network.transport of a server: "pipe" for stdio,
// "tcp" for HTTP.
func networkTransport(srv config.Server) string {
	if srv.Type == config.TypeLocal {
		return "pipe"
	}
	return "tcp"
}

// connectSpan is one connect's span: nil without a tracer.
type connectSpan struct{ span trace.Span }

// startConnect starts the span of a connect to srv: the transport,
// initialize and the first tools/list. It is a root: a connect serves
// every call after it, not the one that may have caused it.
func (t *Telemetry) startConnect(srv config.Server) *connectSpan {
	if t == nil || t.tracer == nil {
		return nil
	}
	_, span := t.tracer.Start(context.Background(), "freecode.connect", trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(attribute.String("freecode.server", srv.Name), attribute.String("network.transport", networkTransport(srv))))
	return &connectSpan{span: span}
}

// end ends the span with the session made (its protocol version) or err,
// whose class alone is said: a connect error may hold what the server
// wrote.
func (c *connectSpan) end(s *session, err error) {
	if c == nil {
		return
	}
	if err != nil {
		errType := "_OTHER"
		var ce *configError
		switch {
		case errors.As(err, &ce):
			errType = "config"
		case errors.Is(err, context.DeadlineExceeded):
			errType = "timeout"
		case errors.Is(err, context.Canceled):
			errType = "cancelled"
		}
		c.span.SetAttributes(attribute.String("error.type", errType))
		c.span.SetStatus(codes.Error, "the connect failed")
	} else if s != nil && s.cs != nil {
		c.span.SetAttributes(sessionAttrs(s)...)
	}
	c.span.End()
}

// sessionAttrs are a live session's mcp.session.id (Streamable HTTP) and
// mcp.protocol.version.
func sessionAttrs(s *session) []attribute.KeyValue {
	var attrs []attribute.KeyValue
	if id := s.cs.ID(); id != "" {
		attrs = append(attrs, attribute.String("mcp.session.id", id))
	}
	if ir := s.cs.InitializeResult(); ir != nil && ir.ProtocolVersion != "" {
		attrs = append(attrs, attribute.String("mcp.protocol.version", ir.ProtocolVersion))
	}
	return attrs
}

// endSession records mcp.client.session.duration of s, a session that
// was made, as it ends; s.endedBy says why (nil: closed, or restarted as
// asked).
func (t *Telemetry) endSession(srv config.Server, s *session) {
	if t == nil || t.session == nil || s.began.IsZero() {
		return
	}
	attrs := []attribute.KeyValue{attribute.String("freecode.server", srv.Name), attribute.String("network.transport", networkTransport(srv))}
	if ir := s.cs.InitializeResult(); ir != nil && ir.ProtocolVersion != "" {
		attrs = append(attrs, attribute.String("mcp.protocol.version", ir.ProtocolVersion))
	}
	var pe *processExit
	switch err := s.endedBy; {
	case err == nil || errors.Is(err, errRestart):
	case errors.As(err, &pe):
		attrs = append(attrs, attribute.String("error.type", "process_exited"))
	default:
		attrs = append(attrs, attribute.String("error.type", "connection_lost"))
	}
	t.session.Record(context.Background(), time.Since(s.began).Seconds(), metric.WithAttributes(attrs...))
}

// callSpan is one tools/call's span and clock, kept as values on the
// call's path: the span and the measurement are made of them afterwards
// (otelset.Later), with the span ID drawn here, which the server was
// sent in _meta.
type callSpan struct {
	t         *Telemetry
	parent    trace.SpanContext
	sc        trace.SpanContext // drawn on the path; invalid: no span
	root      trace.Span        // a span with no parent to draw IDs under, started on the path
	start     time.Time
	op        opKey
	sessionID string
}

// opKey is what the attributes of a tools/call's
// mcp.client.operation.duration are made of (the conventions' required
// and recommended attributes of the metric), the key of their set in
// Telemetry.ops. The span carries them too, and mcp.session.id, too many
// values for a metric.
type opKey struct {
	tool, transport, version, errType string
}

func (k opKey) attrs() []attribute.KeyValue {
	attrs := make([]attribute.KeyValue, 0, 7) // room for the span's mcp.session.id
	attrs = append(attrs,
		attribute.String("mcp.method.name", "tools/call"),
		attribute.String("gen_ai.tool.name", k.tool),
		attribute.String("gen_ai.operation.name", "execute_tool"),
		attribute.String("network.transport", k.transport),
	)
	if k.version != "" {
		attrs = append(attrs, attribute.String("mcp.protocol.version", k.version))
	}
	if k.errType != "" {
		attrs = append(attrs, attribute.String("error.type", k.errType))
	}
	return attrs
}

// startCall starts the client span of a tools/call of tool on s, a child
// of parent, and puts the trace context into params._meta (traceparent,
// tracestate; SEP-414), so that the server's spans join the trace: the
// client span's context, else parent's as it came.
func (t *Telemetry) startCall(parent trace.SpanContext, tool string, s *session, srv config.Server, params *mcpsdk.CallToolParams) *callSpan {
	c := &callSpan{t: t, parent: parent, start: time.Now()}
	sc := parent
	if t != nil {
		c.op = opKey{tool: tool, transport: networkTransport(srv)}
		if s.cs != nil {
			if ir := s.cs.InitializeResult(); ir != nil {
				c.op.version = ir.ProtocolVersion
			}
		}
		if t.tracer != nil && s.cs != nil {
			c.sessionID = s.cs.ID()
		}
		switch {
		case t.tracer == nil:
		case parent.IsValid():
			c.sc = otelset.Child(parent)
			sc = c.sc
		default:
			// A root: its trace and whether it is sampled are the
			// tracer's to decide, now.
			_, c.root = t.tracer.Start(context.Background(), "tools/call "+tool,
				trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(c.attrs()...), trace.WithTimestamp(c.start))
			c.sc = c.root.SpanContext()
			if c.sc.IsValid() {
				sc = c.sc
			}
		}
	}
	if sc.IsValid() {
		meta := params.GetMeta()
		if meta == nil {
			meta = map[string]any{}
		}
		propagation.TraceContext{}.Inject(trace.ContextWithSpanContext(context.Background(), sc), metaCarrier(meta))
		params.SetMeta(meta)
	}
	return c
}

// metaCarrier is a request's _meta as a propagator's carrier: the fields
// are written into it directly.
type metaCarrier map[string]any

func (m metaCarrier) Get(k string) string {
	v, _ := m[k].(string)
	return v
}

func (m metaCarrier) Set(k, v string) { m[k] = v }

func (m metaCarrier) Keys() []string { return slices.Collect(maps.Keys(m)) }

// end ends the span with what became of the call: err (nil for an
// answer) or res's isError, as error.type. The span and the duration are
// made beside the calls.
func (c *callSpan) end(res *mcpsdk.CallToolResult, err error) {
	if c.t == nil {
		return
	}
	end := time.Now()
	errType, msg := "", ""
	var werr *jsonrpc.Error
	switch {
	case err != nil && errors.As(err, &werr) && werr.Code != codeRejected:
		// The code alone: the message is the server's text.
		errType = strconv.FormatInt(werr.Code, 10)
		msg = "the server answered error " + errType
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
	if c.t.duration == nil && !c.sc.IsValid() {
		return
	}
	otelset.Later(c.t.tp, func() { c.make(end, errType, msg) })
}

// attrs are the span's attributes: the measurement's, and the session.
func (c *callSpan) attrs() []attribute.KeyValue {
	attrs := c.op.attrs()
	if c.sessionID != "" {
		attrs = append(attrs, attribute.String("mcp.session.id", c.sessionID))
	}
	return attrs
}

// make records the call's duration and makes its span, which ended at
// end with errType ("": no error) and msg.
func (c *callSpan) make(end time.Time, errType, msg string) {
	if c.t.duration != nil {
		k := c.op
		k.errType = errType
		c.t.duration.Record(context.Background(), end.Sub(c.start).Seconds(), c.t.ops.Get(k, k.attrs))
	}
	if !c.sc.IsValid() {
		return
	}
	span := c.root
	if span == nil {
		// Started on a context of its own that holds its parent alone,
		// with the ID the server was sent.
		ctx := otelset.ContextWithDrawn(trace.ContextWithSpanContext(context.Background(), c.parent), c.sc)
		_, span = c.t.tracer.Start(ctx, "tools/call "+c.op.tool,
			trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(c.attrs()...), trace.WithTimestamp(c.start))
	}
	if errType != "" {
		// The status says the class only: an error's text may hold what
		// the server or the arguments wrote.
		span.SetAttributes(attribute.String("error.type", errType))
		span.SetStatus(codes.Error, msg)
	}
	span.End(trace.WithTimestamp(end))
}
