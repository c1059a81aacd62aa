// Package telemetrytest has OTLP receivers on loopback for tests: an
// OTLP/HTTP one (NewReceiver) that takes what FreeCode's exporters post
// to /v1/traces, /v1/metrics and /v1/logs and decodes the protobuf bodies
// with the exporters' own wire types (go.opentelemetry.io/proto/otlp),
// and an OTLP/gRPC one (NewGRPCReceiver, grpc.go), a grpc.Server serving
// the collector's three services; both keep the spans, metrics and log
// records (the events) and the requests' headers.
package telemetrytest

import (
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"sync"
	"testing"

	collogspb "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	colmetricpb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	logspb "go.opentelemetry.io/proto/otlp/logs/v1"
	metricpb "go.opentelemetry.io/proto/otlp/metrics/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// Receiver is an OTLP receiver, over HTTP or gRPC. Its methods are safe
// for concurrent use.
type Receiver struct {
	// URL is its base URL, what OTEL_EXPORTER_OTLP_ENDPOINT would be
	// ("http://127.0.0.1:port", over either protocol).
	URL string
	srv *httptest.Server

	// mu guards the fields below.
	mu       sync.Mutex
	requests int
	headers  []http.Header
	spans    []*tracepb.Span
	res      []*commonpb.KeyValue // the last resource's attributes
	metrics  []*metricpb.Metric
	logs     []*logspb.LogRecord
	fail     int // the status to answer with; 0: 200
}

// NewReceiver starts a receiver, closed when the test ends.
func NewReceiver(t testing.TB) *Receiver {
	r := &Receiver{}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	// No connection kept open between exports: the exporters' idle
	// connections would outlive the test.
	r.srv.Config.SetKeepAlivesEnabled(false)
	r.URL = r.srv.URL
	t.Cleanup(r.srv.Close)
	return r
}

// Fail makes every later export answer status (0: 200 again); over
// gRPC, any status is UNAVAILABLE.
func (r *Receiver) Fail(status int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.fail = status
}

func (r *Receiver) serve(w http.ResponseWriter, req *http.Request) {
	r.mu.Lock()
	r.requests++
	r.headers = append(r.headers, req.Header.Clone())
	fail := r.fail
	r.mu.Unlock()
	if fail != 0 {
		http.Error(w, "refused by the test", fail)
		return
	}
	var body io.Reader = req.Body
	if req.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(req.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		body = zr
	}
	data, err := io.ReadAll(body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var resp proto.Message
	switch req.URL.Path {
	case "/v1/traces":
		var m coltracepb.ExportTraceServiceRequest
		if err := proto.Unmarshal(data, &m); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.addTraces(&m)
		resp = &coltracepb.ExportTraceServiceResponse{}
	case "/v1/metrics":
		var m colmetricpb.ExportMetricsServiceRequest
		if err := proto.Unmarshal(data, &m); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.addMetrics(&m)
		resp = &colmetricpb.ExportMetricsServiceResponse{}
	case "/v1/logs":
		var m collogspb.ExportLogsServiceRequest
		if err := proto.Unmarshal(data, &m); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.addLogs(&m)
		resp = &collogspb.ExportLogsServiceResponse{}
	default:
		http.NotFound(w, req)
		return
	}
	out, _ := proto.Marshal(resp)
	w.Header().Set("Content-Type", "application/x-protobuf")
	w.Write(out)
}

// addTraces keeps the spans of an export.
func (r *Receiver) addTraces(m *coltracepb.ExportTraceServiceRequest) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rs := range m.ResourceSpans {
		r.res = rs.GetResource().GetAttributes()
		for _, ss := range rs.ScopeSpans {
			r.spans = append(r.spans, ss.Spans...)
		}
	}
}

// addMetrics keeps the metrics of an export.
func (r *Receiver) addMetrics(m *colmetricpb.ExportMetricsServiceRequest) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rm := range m.ResourceMetrics {
		r.res = rm.GetResource().GetAttributes()
		for _, sm := range rm.ScopeMetrics {
			r.metrics = append(r.metrics, sm.Metrics...)
		}
	}
}

// addLogs keeps the log records of an export.
func (r *Receiver) addLogs(m *collogspb.ExportLogsServiceRequest) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rl := range m.ResourceLogs {
		r.res = rl.GetResource().GetAttributes()
		for _, sl := range rl.ScopeLogs {
			r.logs = append(r.logs, sl.LogRecords...)
		}
	}
}

// Requests returns how many requests reached the receiver.
func (r *Receiver) Requests() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.requests
}

// Headers returns the headers of each request, in order.
func (r *Receiver) Headers() []http.Header {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.headers)
}

// Spans returns the spans received.
func (r *Receiver) Spans() []*tracepb.Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.spans)
}

// Metrics returns the metrics received, each export's in turn.
func (r *Receiver) Metrics() []*metricpb.Metric {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.metrics)
}

// Logs returns the log records received: the events.
func (r *Receiver) Logs() []*logspb.LogRecord {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.logs)
}

// Resource returns the attributes of the last resource received.
func (r *Receiver) Resource() map[string]string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return Attrs(r.res)
}

// Attrs returns attributes as strings: a string as it is, any other
// value as its text.
func Attrs(kvs []*commonpb.KeyValue) map[string]string {
	m := map[string]string{}
	for _, kv := range kvs {
		v := kv.GetValue()
		switch x := v.GetValue().(type) {
		case *commonpb.AnyValue_StringValue:
			m[kv.Key] = x.StringValue
		case *commonpb.AnyValue_IntValue:
			m[kv.Key] = strconv.FormatInt(x.IntValue, 10)
		case *commonpb.AnyValue_BoolValue:
			m[kv.Key] = map[bool]string{true: "true", false: "false"}[x.BoolValue]
		default:
			m[kv.Key] = v.String()
		}
	}
	return m
}
