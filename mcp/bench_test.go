package mcp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/freecode/freecode/config"
)

// benchServer is one stdio MCP server the benchmark drives.
type benchServer struct {
	name    string
	command []string
	env     map[string]string // on top of this process's environment
	args    map[string]any    // the echo tool's arguments
}

// npmDir returns $FREECODE_NPM, skipping the benchmark when it is unset
// (failing under CI=true).
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

func benchServers(b *testing.B) []benchServer {
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	return []benchServer{
		{
			name:    "everything",
			command: []string{"node", filepath.Join(npmDir(b), "@modelcontextprotocol/server-everything/dist/index.js"), "stdio"},
			args:    map[string]any{"message": "hello"},
		},
		{
			name:    "gosdk",
			command: []string{exe},
			env:     map[string]string{testServerEnv: "1"},
			args:    map[string]any{"text": "hello"},
		},
	}
}

// BenchmarkStdioEcho measures sequential echo round trips over stdio with
// four clients against the same server in one run: our Conn, the
// TypeScript SDK client, the plain go-sdk client, and a minimal client that
// writes a request line and reads the response line (the floor). It
// reports each one's calls/s and the ratios of ours to the others.
//
// Every client speaks the TypeScript client's revision (peerRevision), so
// that the figures differ only in the client: a go-sdk server serves a
// 2026-07-28 call at a cost of its own. newest-calls/s is our Conn at the
// revision it negotiates unpinned (2026-07-28 with the go-sdk server; the
// same as the others with server-everything), newest/ts its ratio.
//
// cpu-µs/call is this process's CPU per call (the server is a child),
// ctxsw/call its threads' context switches per call (a thread that waits
// for a message is one; a goroutine hand-off that wakes a second thread
// is more): figures a loaded machine disturbs less than the time.
func BenchmarkStdioEcho(b *testing.B) {
	for _, srv := range benchServers(b) {
		b.Run(srv.name, func(b *testing.B) {
			c := NewConn(benchConfig(srv, peerRevision), nil)
			defer c.Close()
			if err := c.Start(b.Context()); err != nil {
				b.Fatal(err)
			}
			ctx := b.Context()
			for range warmUp {
				if _, err := c.CallTool(ctx, "echo", srv.args, nil); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				res, err := c.CallTool(ctx, "echo", srv.args, nil)
				if err != nil || res.IsError {
					b.Fatalf("echo: %v %+v", err, res)
				}
			}
			b.StopTimer()

			// The machine is shared: measure the three clients in
			// alternating rounds of the same size and keep each one's
			// best round, so a burst of load elsewhere hits all alike.
			const rounds, n = 6, 2000
			var ours, newest, ts, floor, plain rate
			for range rounds {
				ours = ours.best(connCalls(b, srv, peerRevision, n))
				floor = floor.best(floorCalls(b, srv, n))
				ts = ts.best(rate{perSec: tsCalls(b, srv, n)})
				plain = plain.best(sdkCalls(b, srv, n))
				newest = newest.best(connCalls(b, srv, "", n))
			}
			b.ReportMetric(ours.perSec, "calls/s")
			b.ReportMetric(ts.perSec, "ts-calls/s")
			b.ReportMetric(floor.perSec, "floor-calls/s")
			b.ReportMetric(plain.perSec, "gosdk-calls/s")
			b.ReportMetric(newest.perSec, "newest-calls/s")
			b.ReportMetric(ours.perSec/ts.perSec, "ours/ts")
			b.ReportMetric(ours.perSec/floor.perSec, "ours/floor")
			b.ReportMetric(ours.perSec/plain.perSec, "ours/gosdk")
			b.ReportMetric(newest.perSec/ts.perSec, "newest/ts")
			// Client CPU per call (this process only; the server is a
			// child): where the time goes when calls/s fall short.
			b.ReportMetric(ours.cpuMicros, "cpu-µs/call")
			b.ReportMetric(floor.cpuMicros, "floor-cpu-µs/call")
			b.ReportMetric(plain.cpuMicros, "gosdk-cpu-µs/call")
			b.ReportMetric(ours.switches, "ctxsw/call")
			b.ReportMetric(floor.switches, "floor-ctxsw/call")
			b.ReportMetric(plain.switches, "gosdk-ctxsw/call")
		})
	}
}

// peerRevision is the MCP revision the TypeScript SDK's client negotiates
// (its LATEST_PROTOCOL_VERSION in interop's lockfile), which the plain
// go-sdk client and the floor speak too.
const peerRevision = config.DefaultProtocolVersion

// rate is one client's measured round: calls per second, and this
// process's CPU time and its threads' context switches per call.
type rate struct{ perSec, cpuMicros, switches float64 }

// best keeps the faster of two rounds.
func (r rate) best(o rate) rate {
	if o.perSec > r.perSec {
		return o
	}
	return r
}

// timeCalls runs call n times and measures it.
func timeCalls(n int, call func()) rate {
	cpu0, sw0 := cpuTime()
	start := time.Now()
	for range n {
		call()
	}
	elapsed := time.Since(start)
	cpu, sw := cpuTime()
	return rate{
		perSec:    float64(n) / elapsed.Seconds(),
		cpuMicros: float64((cpu - cpu0).Microseconds()) / float64(n),
		switches:  float64(sw-sw0) / float64(n),
	}
}

// warmUp is the number of untimed calls each client makes first, on its
// own fresh server process, so JIT and first-call paths are out of the
// figures alike.
const warmUp = 2000

// connCalls measures our Conn over n echo calls at revision ("" for the
// newest it negotiates), on a fresh server process like the other clients
// get.
func connCalls(b *testing.B, srv benchServer, revision string, n int) rate {
	c := NewConn(benchConfig(srv, revision), nil)
	defer c.Close()
	ctx := b.Context()
	if err := c.Start(ctx); err != nil {
		b.Fatal(err)
	}
	call := func() {
		res, err := c.CallTool(ctx, "echo", srv.args, nil)
		if err != nil || res.IsError {
			b.Fatalf("echo: %v %+v", err, res)
		}
	}
	for range warmUp {
		call()
	}
	return timeCalls(n, call)
}

// sdkCalls is the plain go-sdk client (its CommandTransport, no wrapping),
// for comparison, over n echo calls.
func sdkCalls(b *testing.B, srv benchServer, n int) rate {
	cmd := exec.Command(srv.command[0], srv.command[1:]...)
	cmd.Env = os.Environ()
	for k, v := range srv.env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	ctx := b.Context()
	client := mcpsdk.NewClient(&mcpsdk.Implementation{Name: "plain", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcpsdk.CommandTransport{Command: cmd, TerminateDuration: time.Second}, &mcpsdk.ClientSessionOptions{ProtocolVersion: peerRevision})
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	call := func() {
		res, err := cs.CallTool(ctx, &mcpsdk.CallToolParams{Name: "echo", Arguments: srv.args})
		if err != nil || res.IsError {
			b.Fatalf("echo: %v %+v", err, res)
		}
	}
	for range warmUp {
		call()
	}
	return timeCalls(n, call)
}

func benchConfig(srv benchServer, revision string) config.Server {
	return config.Server{
		Name: "bench", Type: config.TypeLocal, Enabled: true,
		Command: srv.command, Env: srv.env, InheritEnv: true, Timeout: time.Minute,
		ProtocolVersion: revision,
	}
}

// tsCalls runs bench/ts-stdio-client.mjs: n echo calls with the TS SDK.
func tsCalls(b *testing.B, srv benchServer, n int) float64 {
	_, file, _, _ := runtime.Caller(0)
	script := filepath.Join(filepath.Dir(file), "..", "bench", "ts-stdio-client.mjs")
	args, _ := json.Marshal(srv.args)
	cmd := exec.Command("node", append([]string{script, strconv.Itoa(warmUp), strconv.Itoa(n), string(args)}, srv.command...)...)
	cmd.Env = os.Environ()
	for k, v := range srv.env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		b.Fatalf("ts client: %v", err)
	}
	var r struct{ CallsPerSec float64 }
	if err := json.Unmarshal(bytes.TrimSpace(out), &r); err != nil {
		b.Fatalf("ts client output %q: %v", out, err)
	}
	return r.CallsPerSec
}

// floorCalls is the least a client can do: write a request line, read
// lines until the response's, over n calls.
func floorCalls(b *testing.B, srv benchServer, n int) rate {
	cmd := exec.Command(srv.command[0], srv.command[1:]...)
	cmd.Env = os.Environ()
	for k, v := range srv.env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	ownGroup(cmd)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() {
		stdin.Close()
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}()
	r := bufio.NewReaderSize(stdout, 1<<16)
	w := bufio.NewWriter(stdin)
	roundTrip := func(id int, line []byte) {
		w.Write(line)
		w.WriteByte('\n')
		if err := w.Flush(); err != nil {
			b.Fatal(err)
		}
		if id == 0 {
			return // a notification
		}
		want := []byte(`"id":` + strconv.Itoa(id) + `,`)
		want2 := []byte(`"id":` + strconv.Itoa(id) + `}`)
		for {
			resp, err := r.ReadSlice('\n')
			if err != nil {
				b.Fatalf("floor client: %v", err)
			}
			if bytes.Contains(resp, want) || bytes.Contains(resp, want2) {
				return
			}
		}
	}
	roundTrip(1, []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"`+peerRevision+`","capabilities":{},"clientInfo":{"name":"floor","version":"1"}}}`))
	roundTrip(0, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	args, _ := json.Marshal(srv.args)
	call := func(id int) []byte {
		return fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":%s}}`, id, args)
	}
	id := 2
	for range warmUp {
		roundTrip(id, call(id))
		id++
	}
	return timeCalls(n, func() {
		roundTrip(id, call(id))
		id++
	})
}
