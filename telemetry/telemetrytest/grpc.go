package telemetrytest

import (
	"context"
	"net"
	"net/http"
	"testing"

	collogspb "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	colmetricpb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// NewGRPCReceiver starts an OTLP/gRPC receiver on 127.0.0.1: a
// grpc.Server, without TLS, serving the collector's TraceService,
// MetricsService and LogsService as their proto definitions
// (go.opentelemetry.io/proto/otlp) declare them. Its URL,
// "http://127.0.0.1:port", is what OTEL_EXPORTER_OTLP_ENDPOINT would be
// with OTEL_EXPORTER_OTLP_PROTOCOL=grpc. It is stopped when the test ends.
func NewGRPCReceiver(t testing.TB) *Receiver {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &Receiver{URL: "http://" + ln.Addr().String()}
	srv := grpc.NewServer()
	coltracepb.RegisterTraceServiceServer(srv, grpcTraces{r: r})
	colmetricpb.RegisterMetricsServiceServer(srv, grpcMetrics{r: r})
	collogspb.RegisterLogsServiceServer(srv, grpcLogs{r: r})
	done := make(chan struct{})
	go func() {
		defer close(done)
		srv.Serve(ln)
	}()
	t.Cleanup(func() {
		srv.Stop() // closes the listener and every connection
		<-done
	})
	return r
}

// grpcRequest counts a request and keeps its metadata as headers; the
// error is the one Fail asks for.
func (r *Receiver) grpcRequest(ctx context.Context) error {
	md, _ := metadata.FromIncomingContext(ctx)
	h := http.Header{}
	for k, vs := range md {
		for _, v := range vs {
			h.Add(k, v)
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.requests++
	r.headers = append(r.headers, h)
	if r.fail != 0 {
		return status.Error(codes.Unavailable, "refused by the test")
	}
	return nil
}

type grpcTraces struct {
	r *Receiver
	coltracepb.UnimplementedTraceServiceServer
}

func (g grpcTraces) Export(ctx context.Context, m *coltracepb.ExportTraceServiceRequest) (*coltracepb.ExportTraceServiceResponse, error) {
	if err := g.r.grpcRequest(ctx); err != nil {
		return nil, err
	}
	g.r.addTraces(m)
	return &coltracepb.ExportTraceServiceResponse{}, nil
}

type grpcMetrics struct {
	r *Receiver
	colmetricpb.UnimplementedMetricsServiceServer
}

func (g grpcMetrics) Export(ctx context.Context, m *colmetricpb.ExportMetricsServiceRequest) (*colmetricpb.ExportMetricsServiceResponse, error) {
	if err := g.r.grpcRequest(ctx); err != nil {
		return nil, err
	}
	g.r.addMetrics(m)
	return &colmetricpb.ExportMetricsServiceResponse{}, nil
}

type grpcLogs struct {
	r *Receiver
	collogspb.UnimplementedLogsServiceServer
}

func (g grpcLogs) Export(ctx context.Context, m *collogspb.ExportLogsServiceRequest) (*collogspb.ExportLogsServiceResponse, error) {
	if err := g.r.grpcRequest(ctx); err != nil {
		return nil, err
	}
	g.r.addLogs(m)
	return &collogspb.ExportLogsServiceResponse{}, nil
}
