package main

import (
	"net/http"
	"os"
	"os/exec"
	"testing"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/freecode/freecode/internal/mcptest"
)

// benchRounds and benchCalls shape the alternating rounds of a benchmark
// that compares paths: the machine is shared, so each path runs the same
// number of rounds in turn and keeps its best, and a burst of load
// elsewhere hits all alike.
const benchRounds, benchCalls = 6, 1000

// BenchmarkServeCall measures sequential echo calls of the demo server with
// the go-sdk's client three ways in one run: straight to the server over
// stdio (the peer), through `freecode mcp serve` over stdio, and through
// `freecode mcp serve --http`. The timed loop is the stdio gateway's; the
// metrics are each path's best round of calls/s and the time the gateway
// adds to a call, in percent of the direct call's. The floor of any
// process in the middle is measured too: the same client through a relay
// that decodes and encodes each message and does nothing else
// (mcptest.RunRelayIfAsked); floor-added-% is what it adds.
//
// It runs once per revision, every client offering that one: 2025-11-25
// (a session of initialize, the HTTP path's Mcp-Session-Id) and 2026-07-28
// (server/discover, then per-request _meta, HTTP without sessions).
func BenchmarkServeCall(b *testing.B) {
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		b.Run(version, func(b *testing.B) { benchServeCall(b, version) })
	}
}

func benchServeCall(b *testing.B, version string) {
	cfgPath, project := serveConfig(b)
	direct := benchSession(b, &mcpsdk.CommandTransport{Command: exec.Command(demoServer)}, version)
	defer direct.Close()
	gw := exec.Command(freecodeBin, "--config", cfgPath, "mcp", "serve", "--project", project)
	viaStdio := benchSession(b, &mcpsdk.CommandTransport{Command: gw}, version)
	defer viaStdio.Close()
	hs := startHTTPServe(b, cfgPath, project)
	viaHTTP := benchSession(b, &mcpsdk.StreamableClientTransport{Endpoint: hs.url,
		HTTPClient: &http.Client{Transport: bearerRoundTripper{hs.token}}}, version)
	defer viaHTTP.Close()
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	rc := exec.Command(exe)
	rc.Env = append(os.Environ(), mcptest.RelayEnv([]string{demoServer}, true)...)
	viaRelay := benchSession(b, &mcpsdk.CommandTransport{Command: rc}, version)
	defer viaRelay.Close()

	// Warm every path up first: the first calls pay for connections,
	// schema compilation and the like.
	echoCalls(b, direct, "echo", 200)
	echoCalls(b, viaStdio, "mcp__demo__echo", 200)
	echoCalls(b, viaHTTP, "mcp__demo__echo", 200)
	echoCalls(b, viaRelay, "echo", 200)

	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		echoCalls(b, viaStdio, "mcp__demo__echo", 1)
	}
	b.StopTimer()

	var d, s, h, r float64
	for range benchRounds {
		d = max(d, echoCalls(b, direct, "echo", benchCalls))
		s = max(s, echoCalls(b, viaStdio, "mcp__demo__echo", benchCalls))
		h = max(h, echoCalls(b, viaHTTP, "mcp__demo__echo", benchCalls))
		r = max(r, echoCalls(b, viaRelay, "echo", benchCalls))
	}
	b.ReportMetric(d, "direct-calls/s")
	b.ReportMetric(s, "stdio-gateway-calls/s")
	b.ReportMetric(h, "http-gateway-calls/s")
	b.ReportMetric(r, "relay-calls/s")
	b.ReportMetric(100*(d/r-1), "floor-added-%")
	// Per call: 1/s - 1/d is what the gateway adds.
	b.ReportMetric(100*(d/s-1), "stdio-added-%")
	b.ReportMetric(100*(d/h-1), "http-added-%")
}

// bearerRoundTripper adds a bearer token to every request.
type bearerRoundTripper struct{ token string }

func (t bearerRoundTripper) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+t.token)
	return http.DefaultTransport.RoundTrip(r)
}

// benchSession connects the go-sdk's client over t, offering the revision
// version, which it checks the server agreed to.
func benchSession(b *testing.B, t mcpsdk.Transport, version string) *mcpsdk.ClientSession {
	b.Helper()
	cs, err := mcpsdk.NewClient(&mcpsdk.Implementation{Name: "bench", Version: "1"}, nil).Connect(b.Context(), t,
		&mcpsdk.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		b.Fatal(err)
	}
	if got := cs.InitializeResult().ProtocolVersion; got != version {
		b.Fatalf("the session speaks %s, not %s", got, version)
	}
	return cs
}

// echoCalls makes n sequential echo calls of tool on cs and returns the
// calls per second.
func echoCalls(b *testing.B, cs *mcpsdk.ClientSession, tool string, n int) float64 {
	b.Helper()
	params := &mcpsdk.CallToolParams{Name: tool, Arguments: map[string]any{"message": "hello"}}
	start := time.Now()
	for range n {
		res, err := cs.CallTool(b.Context(), params)
		if err != nil || res.IsError {
			b.Fatalf("%s: %v %+v", tool, err, res)
		}
	}
	return float64(n) / time.Since(start).Seconds()
}
