package mcptest

import (
	"context"
	"fmt"
	"os"
	"strings"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// TracedServerEnv, set in a server entry's env to an OTLP/HTTP base URL (a
// collector's, what OTEL_EXPORTER_OTLP_ENDPOINT would be), makes the test
// binary (whose TestMain calls RunTracedServerIfAsked) the stdio MCP
// server of NewTracedServer: a server that joins its client's trace, as
// the trace context FreeCode sends in params._meta lets one.
const TracedServerEnv = "FREECODE_MCPTEST_TRACED"

// TracedCallLogEnv, in the same entry's env, names the call log of its
// crash_lookup tool (as the crash server's, CrashServerEnv).
const TracedCallLogEnv = "FREECODE_MCPTEST_TRACED_LOG"

// TracedServiceName is the service.name of the traced server's spans.
const TracedServiceName = "mcptest-traced-server"

// NewTracedServer returns an MCP server that exports a span of each
// tools/call it serves to the OTLP/HTTP endpoint otlpURL (its base URL),
// and shutdown, which stops the exporter. Its tools take any object:
//
//	lookup        read-only: returns "found"
//	write         destructive: returns "wrote"
//	crash_lookup  read-only: in the first call of it that the call log
//	              callLog holds, exits the process (status 3) before it
//	              answers, as a crashing server does; after that returns
//	              "crash_lookup call <n>"
//
// A call's span is the server's side of the MCP conventions: named
// "tools/call <tool>", of kind server, the child of the trace context the
// request's params._meta carries (traceparent, tracestate; a root
// without), with mcp.method.name, gen_ai.tool.name,
// gen_ai.operation.name, network.transport (transport: "pipe" for stdio,
// "tcp" for HTTP) and mcp.session.id when the session has one. Each span
// is exported as it ends, before the call answers (and before a crash).
func NewTracedServer(otlpURL, callLog, transport string) (*mcpsdk.Server, func(context.Context) error, error) {
	ctx := context.Background()
	exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(strings.TrimRight(otlpURL, "/")+"/v1/traces"))
	if err != nil {
		return nil, nil, err
	}
	res := resource.NewSchemaless(attribute.String("service.name", TracedServiceName))
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp), sdktrace.WithResource(res))
	tracer := tp.Tracer("github.com/freecode/freecode/internal/mcptest")
	server := mcpsdk.NewServer(&mcpsdk.Implementation{Name: "traced", Version: "1.0.0"}, nil)
	yes := true
	obj := map[string]any{"type": "object"}
	for _, tool := range []*mcpsdk.Tool{
		{Name: "lookup", Annotations: &mcpsdk.ToolAnnotations{ReadOnlyHint: true}},
		{Name: "write", Annotations: &mcpsdk.ToolAnnotations{DestructiveHint: &yes}},
		{Name: "crash_lookup", Annotations: &mcpsdk.ToolAnnotations{ReadOnlyHint: true}},
	} {
		tool.InputSchema = obj
		server.AddTool(tool, func(_ context.Context, req *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
			span := startServerSpan(tracer, req, transport)
			defer span.End()
			switch tool.Name {
			case "lookup":
				return TextResult("found"), nil
			case "write":
				return TextResult("wrote"), nil
			}
			n, err := logCall(callLog, tool.Name)
			if err != nil {
				return nil, err
			}
			if n == 1 {
				span.End() // exported now: the process ends before the defer
				fmt.Fprintf(os.Stderr, "crashing in the first call of %s\n", tool.Name)
				os.Exit(3)
			}
			return TextResult(fmt.Sprintf("%s call %d", tool.Name, n)), nil
		})
	}
	return server, tp.Shutdown, nil
}

// startServerSpan starts the server's span of the tools/call req, the
// child of the trace context in its _meta.
func startServerSpan(tracer trace.Tracer, req *mcpsdk.CallToolRequest, transport string) trace.Span {
	carrier := propagation.MapCarrier{}
	for _, k := range []string{"traceparent", "tracestate"} {
		if v, ok := req.Params.GetMeta()[k].(string); ok {
			carrier[k] = v
		}
	}
	parent := propagation.TraceContext{}.Extract(context.Background(), carrier)
	attrs := []attribute.KeyValue{
		attribute.String("mcp.method.name", "tools/call"),
		attribute.String("gen_ai.tool.name", req.Params.Name),
		attribute.String("gen_ai.operation.name", "execute_tool"),
		attribute.String("network.transport", transport),
	}
	if id := req.Session.ID(); id != "" {
		attrs = append(attrs, attribute.String("mcp.session.id", id))
	}
	_, span := tracer.Start(parent, "tools/call "+req.Params.Name, trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(attrs...))
	return span
}

// RunTracedServerIfAsked serves NewTracedServer on stdio when
// TracedServerEnv is set, exporting to the URL it holds, and exits when
// its client leaves. It returns only when not asked.
func RunTracedServerIfAsked() {
	url := os.Getenv(TracedServerEnv)
	if url == "" {
		return
	}
	server, shutdown, err := NewTracedServer(url, os.Getenv(TracedCallLogEnv), "pipe")
	if err != nil {
		fmt.Fprintln(os.Stderr, "traced server:", err)
		os.Exit(1)
	}
	err = server.Run(context.Background(), &mcpsdk.StdioTransport{})
	shutdown(context.Background())
	if err != nil {
		fmt.Fprintln(os.Stderr, "traced server:", err)
		os.Exit(1)
	}
	os.Exit(0)
}
