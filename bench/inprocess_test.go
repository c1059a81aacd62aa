package bench

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"runtime/metrics"
	"testing"

	"github.com/freecode/freecode/internal/protocol"
	"github.com/freecode/freecode/server"
	"github.com/freecode/freecode/telemetry"
	"github.com/freecode/freecode/workspace"
)

// BenchmarkSidecarInProcess measures the sidecar's own cost, without the
// process boundary of BenchmarkSidecarExecute: a server.Server in this
// process serves a Go frontend over a pair of OS pipes (what stdio is),
// and the MCP server behind it is the demo server, a subprocess as always.
// servers is freecode/servers, answered from memory: the frontend
// protocol's round trip alone; execute is freecode/tools/execute of one
// echo call; execute-telemetry the same through a sidecar that exports
// all three signals (a profile of it alone, -bench
// 'InProcess/execute-telemetry', is telemetry's work). Besides ns/op and the allocations (of both ends: they share
// the process), goroutines/op counts the goroutines started per request,
// by both ends too, cpu-µs/op the process's CPU time per request and
// ctxsw/op its threads' context switches per request (each wait for a
// message is one): figures a loaded machine disturbs far less than the
// time. Profile it with -cpuprofile, -memprofile, -mutexprofile.
func BenchmarkSidecarInProcess(b *testing.B) {
	_, demoBin := binaries(b)
	cfg := writeConfig(b, []entry{{Name: "s", Type: "local", Command: []string{demoBin}, Timeout: 30000, ProtocolVersion: peerRevision}})
	// The sidecar's user config is under HOME: the benchmark's own, never
	// the user's.
	b.Setenv("HOME", filepath.Dir(cfg))
	fc := startInProcess(b, cfg, workspace.Options{})
	// A second sidecar exports traces, metrics and events over OTLP/HTTP
	// to a sink on loopback, as OTEL_EXPORTER_OTLP_ENDPOINT has it do: a
	// profile of execute-telemetry shows what telemetry costs, on the
	// call's path and beside it.
	sink := newOTLPSink(b)
	tel, stopTelemetry := telemetry.StartProcess(context.Background(), func(k string) string {
		if k == "OTEL_EXPORTER_OTLP_ENDPOINT" {
			return sink.URL
		}
		return ""
	}, nil)
	b.Cleanup(stopTelemetry)
	var telOpts workspace.Options
	telOpts.TracerProvider, telOpts.MeterProvider = tel.Recording()
	telOpts.OnCallEvent, telOpts.TelemetryArguments = tel.CallEvents, tel.Arguments
	fcTel := startInProcess(b, cfg, telOpts)
	rawArgs, _ := json.Marshal(map[string]any{"message": "hello"})
	execute := func(fc *sidecar) func() error {
		return func() error {
			res, err := fc.Execute(b.Context(), protocol.ToolCall{CallID: "c", Tool: "mcp__s__echo", Arguments: rawArgs})
			if err == nil && (len(res) != 1 || res[0].IsError) {
				b.Fatalf("execute: %+v", res)
			}
			return err
		}
	}
	for _, tc := range []struct {
		name string
		do   func() error
	}{
		{"servers", func() error {
			_, err := fc.Servers(b.Context())
			return err
		}},
		{"execute", execute(fc)},
		{"execute-telemetry", execute(fcTel)},
	} {
		b.Run(tc.name, func(b *testing.B) {
			for range 500 {
				if err := tc.do(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportAllocs()
			created := goroutinesCreated()
			cpu, switches := rusage()
			b.ResetTimer()
			for b.Loop() {
				if err := tc.do(); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			cpu2, switches2 := rusage()
			n := float64(b.N)
			b.ReportMetric(float64(goroutinesCreated()-created)/n, "goroutines/op")
			b.ReportMetric((cpu2-cpu)/n, "cpu-µs/op")
			b.ReportMetric(float64(switches2-switches)/n, "ctxsw/op")
		})
	}
}

// startInProcess serves a frontend with a server.Server in this process,
// over OS pipes, opened on cfg, and waits until its server "s" is
// connected, with ws as its workspace's options (its ResultsDir is the
// benchmark's). The benchmark's cleanup shuts it down.
func startInProcess(b *testing.B, cfg string, ws workspace.Options) *sidecar {
	b.Helper()
	toServer, fromClient, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	toClient, fromServer, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	ws.ResultsDir = b.TempDir()
	srv := server.New(&server.Options{Version: "bench", Workspace: ws})
	served := make(chan struct{})
	go func() {
		defer close(served)
		srv.ServeConn(context.Background(), pipeConn{toServer, fromServer})
	}()
	s := newSidecar(b, pipeConn{toClient, fromClient}, cfg)
	b.Cleanup(func() {
		if err := s.Shutdown(context.Background()); err != nil {
			b.Errorf("shutdown: %v", err)
		}
		s.Exit(context.Background())
		<-served
		srv.Close()
		s.Close()
	})
	s.awaitConnected(b, []string{"s"})
	return s
}

// pipeConn is the two ends of OS pipes as one connection.
type pipeConn struct {
	r *os.File
	w *os.File
}

func (p pipeConn) Read(b []byte) (int, error)  { return p.r.Read(b) }
func (p pipeConn) Write(b []byte) (int, error) { return p.w.Write(b) }
func (p pipeConn) Close() error {
	p.w.Close()
	return p.r.Close()
}

var _ io.ReadWriteCloser = pipeConn{}

// goroutinesCreated is how many goroutines this process has started.
func goroutinesCreated() uint64 {
	s := []metrics.Sample{{Name: "/sched/goroutines-created:goroutines"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}
