package mcp

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"testing"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/freecode/freecode/config"
)

// BenchmarkRemoteEcho measures sequential echo round trips to
// server-everything over Streamable HTTP and legacy SSE through FreeCode's
// remote client (dialRemote, protocol 2025-11-25 as the Conn pins it by
// default), the go-sdk client with its defaults (http.DefaultClient), and
// the TypeScript SDK client (bench/ts-remote-client.mjs), all against the
// same server in the same run. Each client makes FREECODE_BENCH_CALLS
// calls (default 1000) per round, in rotating order over 3 rounds (the
// server slows as its event store grows); the medians are reported, with
// the ratios to TypeScript.
//
// Over Streamable HTTP it also measures dialRemote with protocolVersion
// pinned to 2025-06-18: server-everything (TypeScript SDK server) answers
// clients of 2025-11-25 and later with a stored priming event per POST
// stream, which costs about a millisecond per call.
//
//	make npm && FREECODE_NPM=$PWD/interop/node_modules \
//	  go test -run '^$' -bench RemoteEcho ./mcp/
func BenchmarkRemoteEcho(b *testing.B) {
	calls := 1000
	if n, err := strconv.Atoi(os.Getenv("FREECODE_BENCH_CALLS")); err == nil && n > 0 {
		calls = n
	}
	const rounds = 3
	for _, tc := range []struct{ transport, mode, path string }{
		{config.TransportHTTP, "streamableHttp", "/mcp"},
		{config.TransportSSE, "sse", "/sse"},
	} {
		b.Run(tc.transport, func(b *testing.B) {
			url := startEverything(b, tc.mode) + tc.path
			type client struct {
				name  string
				rate  func() float64
				rates []float64
			}
			ours := dialBench(b, url, tc.transport, config.DefaultProtocolVersion)
			sdk := dialPlainSDK(b, url, tc.transport)
			clients := []*client{
				{name: "freecode", rate: func() float64 { return echoRate(b, ours, calls) }},
				{name: "go-sdk-defaults", rate: func() float64 { return echoRate(b, sdk, calls) }},
				{name: "typescript", rate: func() float64 { return tsEchoRate(b, url, tc.transport, calls) }},
			}
			if tc.transport == config.TransportHTTP {
				pinned := dialBench(b, url, tc.transport, "2025-06-18")
				clients = append(clients, &client{name: "freecode-2025-06-18", rate: func() float64 { return echoRate(b, pinned, calls) }})
			}
			for round := range rounds {
				for i := range clients {
					c := clients[(i+round)%len(clients)]
					c.rates = append(c.rates, c.rate())
				}
			}
			median := func(c *client) float64 {
				r := slices.Clone(c.rates)
				slices.Sort(r)
				return r[len(r)/2]
			}
			ts := median(clients[2])
			for _, c := range clients {
				m := median(c)
				b.ReportMetric(m, c.name+"-calls/s")
				if c != clients[2] {
					b.ReportMetric(m/ts, c.name+"-x-ts")
				}
				b.Logf("%s %-20s median %6.0f calls/s (rounds %.0f) = %.2fx TypeScript", tc.transport, c.name, m, c.rates, m/ts)
			}
		})
	}
}

// dialBench connects through dialRemote with the protocol version pinned
// the way the Conn does.
func dialBench(b *testing.B, url, transport, version string) *mcpsdk.ClientSession {
	srv := remoteServer(url, transport)
	cs, _, err := dialRemote(context.Background(), newTestClient(), srv, &mcpsdk.ClientSessionOptions{ProtocolVersion: version}, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cs.Close() })
	return cs
}

// dialPlainSDK connects with the go-sdk's own transports and defaults.
func dialPlainSDK(b *testing.B, url, transport string) *mcpsdk.ClientSession {
	var t mcpsdk.Transport = &mcpsdk.StreamableClientTransport{Endpoint: url}
	if transport == config.TransportSSE {
		t = &mcpsdk.SSEClientTransport{Endpoint: url}
	}
	cs, err := newTestClient().Connect(context.Background(), t, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cs.Close() })
	return cs
}

// echoRate makes n sequential echo calls after a warm-up and returns
// calls per second.
func echoRate(b *testing.B, cs *mcpsdk.ClientSession, n int) float64 {
	ctx := context.Background()
	call := func(i int) {
		msg := "m" + strconv.Itoa(i)
		res, err := cs.CallTool(ctx, &mcpsdk.CallToolParams{Name: "echo", Arguments: map[string]any{"message": msg}})
		if err != nil {
			b.Fatal(err)
		}
		if got := res.Content[0].(*mcpsdk.TextContent).Text; got != "Echo: "+msg {
			b.Fatalf("echo = %q", got)
		}
	}
	for i := range 50 {
		call(i)
	}
	start := time.Now()
	for i := range n {
		call(i)
	}
	return float64(n) / time.Since(start).Seconds()
}

// tsEchoRate runs the TypeScript SDK client for n calls (it times only its
// call loop, not node's start).
func tsEchoRate(b *testing.B, url, transport string, n int) float64 {
	_, file, _, _ := runtime.Caller(0)
	script := filepath.Join(filepath.Dir(file), "..", "bench", "ts-remote-client.mjs")
	cmd := exec.Command("node", script, url, transport, strconv.Itoa(n))
	cmd.Env = append(os.Environ(), "FREECODE_NPM="+npmModules(b))
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		b.Fatalf("ts-remote-client: %v", err)
	}
	var res struct{ CallsPerSec float64 }
	if err := json.Unmarshal(out, &res); err != nil || res.CallsPerSec <= 0 {
		b.Fatalf("ts-remote-client printed %q: %v", out, err)
	}
	return res.CallsPerSec
}
