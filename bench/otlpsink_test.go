package bench

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"
)

// otlpSink is the OTLP/HTTP endpoint of the telemetry benchmarks: it
// takes each export, counts its requests and bytes by signal and answers
// 200 with an empty response, which the exporters accept, keeping the
// connection open as a collector does. It decodes nothing while calls
// are measured: decoding is the collector's work, on a machine of its own
// as a rule, and in this process it would compete with the benchmark's
// calls for this machine's two cores (telemetrytest.Receiver, which
// decodes and keeps every span, added about 30 µs of CPU a call here).
// The last traces bodies are kept (keptTraces), decoded when asked
// (ExecuteSpans), so that a run shows what it exported: the last alone
// may hold none of a call's execute_tool spans (a batch of the exporter
// cut between a call's spans).
type otlpSink struct {
	URL string

	mu       sync.Mutex
	requests map[string]int
	bytes    map[string]int64
	traces   [][]byte
}

// keptTraces is how many of the last traces bodies a sink keeps.
const keptTraces = 8

func newOTLPSink(b *testing.B) *otlpSink {
	s := &otlpSink{requests: map[string]int{}, bytes: map[string]int64{}}
	srv := httptest.NewServer(http.HandlerFunc(s.serve))
	b.Cleanup(srv.Close)
	s.URL = srv.URL
	return s
}

func (s *otlpSink) serve(w http.ResponseWriter, req *http.Request) {
	data, err := io.ReadAll(req.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	s.requests[req.URL.Path]++
	s.bytes[req.URL.Path] += int64(len(data))
	if req.URL.Path == "/v1/traces" {
		if len(s.traces) == keptTraces {
			s.traces = s.traces[1:]
		}
		s.traces = append(s.traces, data)
	}
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/x-protobuf")
	w.WriteHeader(http.StatusOK)
}

// Bytes is the bytes received of all signals, and the requests.
func (s *otlpSink) Bytes() (bytes int64, requests int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for p, n := range s.bytes {
		bytes += n
		requests += s.requests[p]
	}
	return bytes, requests
}

// ExecuteSpans decodes the last traces exports and counts their spans,
// and those of them that are a call's execute_tool span.
func (s *otlpSink) ExecuteSpans() (spans, calls int, err error) {
	s.mu.Lock()
	traces := s.traces
	s.mu.Unlock()
	for _, data := range traces {
		var m coltracepb.ExportTraceServiceRequest
		if err := proto.Unmarshal(data, &m); err != nil {
			return spans, calls, err
		}
		for _, rs := range m.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				for _, sp := range ss.Spans {
					spans++
					if strings.HasPrefix(sp.Name, "execute_tool ") {
						calls++
					}
				}
			}
		}
	}
	return spans, calls, nil
}
