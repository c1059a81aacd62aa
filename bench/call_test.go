package bench

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/freecode/freecode/config"
	"github.com/freecode/freecode/internal/mcptest"
	"github.com/freecode/freecode/internal/protocol"
	"github.com/freecode/freecode/mcp"
)

// npmDir returns $FREECODE_NPM, skipping the benchmark without it
// (failing it under CI=true).
func npmDir(b *testing.B) string {
	dir := os.Getenv("FREECODE_NPM")
	if dir == "" {
		if os.Getenv("CI") == "true" {
			b.Fatal("FREECODE_NPM is not set")
		}
		b.Skip("FREECODE_NPM is not set (make bench sets it)")
	}
	return dir
}

// callWarmUp and callN are the untimed and timed calls of each client in
// a round; callRounds rounds alternate the clients, so that a burst of load
// elsewhere on the shared machine hits all of them alike.
const callWarmUp, callN, callRounds = 2000, 2000, 5

// peerRevision is the MCP revision the TypeScript SDK's client negotiates
// (its LATEST_PROTOCOL_VERSION in interop's lockfile): a comparison with it
// runs FreeCode at the same revision, so that the figures differ only in
// the path.
const peerRevision = "2025-11-25"

// BenchmarkSidecarExecute measures one freecode/tools/execute of one echo
// call, frontend → freecode-serve (over stdio) → MCP server (over stdio) →
// back, against the same call made straight to the same server by the
// TypeScript SDK's client (the peer) and by FreeCode's own MCP
// client in the benchmark's process (what the sidecar uses inside: the
// difference is the hop itself). Servers: the repo's demo server (a go-sdk
// server) and server-everything (TypeScript). The timed loop is the
// sidecar's; the metrics are each path's p50 and p99 over every round, and
// what the sidecar adds at p50 in percent of each peer's p50; and, to
// tell the protocol's round trip from the rest, the p50 and p99 of
// freecode/servers, which the sidecar answers from memory.
//
// The floor of any process in the middle is measured too: the TypeScript
// client through a relay (mcptest.RunRelayIfAsked), which only forwards
// lines (ts-relay), or decodes and encodes each message on the way
// (ts-relay-decode); floor-added-vs-ts-p50-% is what the second adds, and
// added/floor-added-p50 the ratio: what the sidecar adds over what
// that relay adds (goal ≤ 1.25).
//
// Every path speaks the TypeScript client's revision (peerRevision);
// sidecar-2026 is the sidecar's echo at the newest one, which FreeCode
// negotiates unpinned.
func BenchmarkSidecarExecute(b *testing.B) {
	npm := npmDir(b)
	_, demoBin := binaries(b)
	for _, srv := range []struct {
		name    string
		command []string
	}{
		{"demo", []string{demoBin}},
		{"everything", []string{"node", filepath.Join(npm, "@modelcontextprotocol/server-everything/dist/index.js"), "stdio"}},
	} {
		b.Run(srv.name, func(b *testing.B) {
			args := map[string]any{"message": "hello"}
			rawArgs, _ := json.Marshal(args)
			// The sidecar and the direct client speak the peers'
			// revision: a go-sdk server answers 2026-07-28's
			// self-contained requests at a cost of its own (50–170 µs
			// more per echo on this machine), which is the
			// server's, not the hop's; sidecar-2026 is the same call at
			// the newest revision, for that figure.
			cfg := writeConfig(b, []entry{
				{Name: "s", Type: "local", Command: srv.command, InheritEnv: true, Timeout: 30000, ProtocolVersion: peerRevision},
				{Name: "n", Type: "local", Command: srv.command, InheritEnv: true, Timeout: 30000},
			})
			sc := startSidecar(b, cfg)
			defer sc.stop(b)
			sc.awaitConnected(b, []string{"s", "n"})
			executeTool := func(tool string) time.Duration {
				start := time.Now()
				res, err := sc.Execute(b.Context(), protocol.ToolCall{CallID: "c", Tool: tool, Arguments: rawArgs})
				d := time.Since(start)
				if err != nil || len(res) != 1 || res[0].IsError {
					b.Fatalf("execute: %v %+v", err, res)
				}
				return d
			}
			execute := func() time.Duration { return executeTool("mcp__s__echo") }
			executeNewest := func() time.Duration { return executeTool("mcp__n__echo") }
			direct := mcp.NewConn(config.Server{Name: "s", Type: config.TypeLocal, Enabled: true, Command: srv.command, InheritEnv: true, Timeout: 30 * time.Second, ProtocolVersion: peerRevision}, nil)
			defer direct.Close()
			if err := direct.Start(b.Context()); err != nil {
				b.Fatal(err)
			}
			call := func() time.Duration {
				start := time.Now()
				res, err := direct.CallTool(b.Context(), "echo", args, nil)
				d := time.Since(start)
				if err != nil || res.IsError {
					b.Fatalf("echo: %v %+v", err, res)
				}
				return d
			}
			// The protocol's round trip alone: a request the sidecar
			// answers from memory.
			servers := func() time.Duration {
				start := time.Now()
				if _, err := sc.Servers(b.Context()); err != nil {
					b.Fatal(err)
				}
				return time.Since(start)
			}
			for range callWarmUp {
				execute()
				executeNewest()
				call()
				servers()
			}

			b.ResetTimer()
			for b.Loop() {
				execute()
			}
			b.StopTimer()

			exe, err := os.Executable()
			if err != nil {
				b.Fatal(err)
			}
			relayed := []string{exe}
			var viaSidecar, viaNewest, viaTS, viaConn, hop, viaRelay, viaRelayDecode []time.Duration
			for range callRounds {
				for range callN {
					viaSidecar = append(viaSidecar, execute())
				}
				for range callN {
					viaNewest = append(viaNewest, executeNewest())
				}
				for range callN {
					hop = append(hop, servers())
				}
				viaTS = append(viaTS, tsLatencies(b, npm, srv.command, nil, "echo", rawArgs, callWarmUp, callN)...)
				viaRelay = append(viaRelay, tsLatencies(b, npm, relayed, mcptest.RelayEnv(srv.command, false), "echo", rawArgs, callWarmUp, callN)...)
				viaRelayDecode = append(viaRelayDecode, tsLatencies(b, npm, relayed, mcptest.RelayEnv(srv.command, true), "echo", rawArgs, callWarmUp, callN)...)
				for range callN {
					viaConn = append(viaConn, call())
				}
			}
			report(b, "µs", samples{"sidecar", viaSidecar}, samples{"sidecar-2026", viaNewest}, samples{"ts", viaTS}, samples{"conn", viaConn}, samples{"servers-request", hop},
				samples{"ts-relay", viaRelay}, samples{"ts-relay-decode", viaRelayDecode})
			p50, ts50 := us(percentile(viaSidecar, 50)), us(percentile(viaTS, 50))
			b.ReportMetric(100*(p50/ts50-1), "added-vs-ts-p50-%")
			b.ReportMetric(100*(p50/us(percentile(viaConn, 50))-1), "added-vs-conn-p50-%")
			floor50 := us(percentile(viaRelayDecode, 50))
			b.ReportMetric(100*(floor50/ts50-1), "floor-added-vs-ts-p50-%")
			// The goal: what the sidecar adds ≤ 1.25× what the
			// decoding relay adds.
			b.ReportMetric((p50-ts50)/(floor50-ts50), "added/floor-added-p50")
		})
	}
}

// tsLatencies runs bench/ts-stdio-latency.mjs: n timed calls of tool
// with the TypeScript SDK's client, on a server process of its own
// (command, with env added to this process's environment), after warm
// untimed ones.
func tsLatencies(b *testing.B, npm string, command, env []string, tool string, args []byte, warm, n int) []time.Duration {
	script := "ts-stdio-latency.mjs" // the test runs in bench/
	cmd := exec.Command("node", append([]string{script, strconv.Itoa(warm), strconv.Itoa(n), tool, string(args)}, command...)...)
	cmd.Env = append(append(os.Environ(), "FREECODE_NPM="+npm), env...)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		b.Fatalf("ts client: %v", err)
	}
	var r struct{ LatenciesUs []float64 }
	if err := json.Unmarshal(bytes.TrimSpace(out), &r); err != nil || len(r.LatenciesUs) != n {
		b.Fatalf("ts client output %q: %v", out, err)
	}
	ds := make([]time.Duration, len(r.LatenciesUs))
	for i, v := range r.LatenciesUs {
		ds[i] = time.Duration(v * 1e3)
	}
	return ds
}

// BenchmarkSidecarExecuteSlow is BenchmarkSidecarExecute's comparison for
// tools that take a while, as most real tools do: one freecode/tools/execute
// of a call that answers after 5 or 50 ms (the sleep tool of this test
// binary as a go-sdk server), against the same call straight from the
// TypeScript SDK's client, alternating in rounds. The hop costs the same
// as for an echo; the metric is what it adds at p50 in percent of the
// direct call's p50.
func BenchmarkSidecarExecuteSlow(b *testing.B) {
	npm := npmDir(b)
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	srv := selfServer(b, "s", "echo")
	srv.Timeout = 30000
	sc := startSidecar(b, writeConfig(b, []entry{srv}))
	defer sc.stop(b)
	sc.awaitConnected(b, []string{"s"})
	for _, ms := range []int{5, 50} {
		b.Run(strconv.Itoa(ms)+"ms", func(b *testing.B) {
			rawArgs, _ := json.Marshal(map[string]any{"ms": ms})
			execute := func() time.Duration {
				start := time.Now()
				res, err := sc.Execute(b.Context(), protocol.ToolCall{CallID: "c", Tool: "mcp__s__sleep", Arguments: rawArgs})
				d := time.Since(start)
				if err != nil || len(res) != 1 || res[0].IsError {
					b.Fatalf("execute: %v %+v", err, res)
				}
				return d
			}
			// Rounds of about a second each.
			n := max(1000/ms, 20)
			for range n {
				execute()
			}
			b.ResetTimer()
			for b.Loop() {
				execute()
			}
			b.StopTimer()
			var viaSidecar, viaTS []time.Duration
			for range 3 {
				for range n {
					viaSidecar = append(viaSidecar, execute())
				}
				viaTS = append(viaTS, tsLatencies(b, npm, []string{exe}, []string{mcpServerEnv + "=echo"}, "sleep", rawArgs, n/4, n)...)
			}
			report(b, "µs", samples{"sidecar", viaSidecar}, samples{"ts", viaTS})
			b.ReportMetric(100*(us(percentile(viaSidecar, 50))/us(percentile(viaTS, 50))-1), "added-vs-ts-p50-%")
		})
	}
}
