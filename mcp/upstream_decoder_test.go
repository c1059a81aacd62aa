package mcp

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/freecode/freecode/config"
	"github.com/freecode/freecode/internal/mcpwire"
)

// BenchmarkUpstreamDecoder is the reproducer of a go-sdk defect
// (docs/upstream/go-sdk-json-decoder.md): the SDK decodes JSON through its
// internal/json.Unmarshal, which makes a new streaming decoder for every
// call, and that decoder (segmentio/encoding/json) starts with a 32 KiB
// buffer whatever the size of the input.
//
// The call/… sub-benchmarks make echo tool calls with the plain go-sdk
// client against a go-sdk server in this process: over the SDK's in-memory
// transport (the SDK alone), and with the client on our stdio transport.
// Besides B/op (both ends) they report the bytes of those decoder buffers
// per call, found with the heap profiler at one sample per allocation, and
// log them by end and by the SDK function that asked for the decoder. The
// envelope/… and result/… sub-benchmarks decode the response line of one
// such call: the SDK's jsonrpc.DecodeMessage against our mcpwire.Decode, and
// the SDK's CallToolResult.UnmarshalJSON, which its client runs, inside a
// decoder of its own, for every result.
func BenchmarkUpstreamDecoder(b *testing.B) {
	b.Run("call/gosdk-inmemory", func(b *testing.B) {
		serverEnd, clientEnd := mcpsdk.NewInMemoryTransports()
		benchDecoderCalls(b, serverEnd, clientEnd)
	})
	b.Run("call/our-transport", func(b *testing.B) {
		serverEnd, clientEnd, _ := pipeTransports()
		benchDecoderCalls(b, serverEnd, clientEnd)
	})

	line := echoResponseLine(b)
	b.Run("envelope/gosdk", func(b *testing.B) {
		b.Logf("the response line (%d bytes): %s", len(line), strings.TrimSpace(string(line)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := jsonrpc.DecodeMessage(line); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("envelope/ours", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := mcpwire.Decode(line); err != nil {
				b.Fatal(err)
			}
		}
	})
	msg, err := mcpwire.Decode(line)
	if err != nil {
		b.Fatal(err)
	}
	result := msg.(*jsonrpc.Response).Result
	b.Run("result/gosdk", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var r mcpsdk.CallToolResult
			if err := r.UnmarshalJSON(result); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// benchDecoderCalls serves the test server's echo tool on serverEnd, calls
// it through a plain go-sdk client on clientEnd in the timed loop, then
// profiles a fixed number of calls and reports their decoder buffers.
func benchDecoderCalls(b *testing.B, serverEnd, clientEnd mcpsdk.Transport) {
	cs, stop := echoSession(b, serverEnd, clientEndTransport{clientEnd})
	defer stop()
	ctx := b.Context()
	call := func() {
		res, err := cs.CallTool(ctx, &mcpsdk.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hello"}})
		if err != nil || res.IsError {
			b.Fatalf("echo: %v %+v", err, res)
		}
	}
	for range 200 {
		call()
	}
	b.ReportAllocs()
	for b.Loop() {
		call()
	}

	const n = 500
	sites, profiled, counted, gcs := decoderBuffers(b, n, call)
	var total, buffers [2]int64 // by end: client, server
	for _, s := range sites {
		end := 0
		if s.end == "server" {
			end = 1
		}
		total[end] += s.bytes
		buffers[end] += s.count
		b.Logf("%-6s %-52s %4.2f buffers %6.0f B per call", s.end, s.caller, float64(s.count)/n, float64(s.bytes)/n)
	}
	// Less than 100 would mean allocations the attribution missed.
	b.ReportMetric(100*float64(profiled)/float64(counted), "profiled-%")
	b.ReportMetric(float64(total[0])/n, "client-decoder-B/op")
	b.ReportMetric(float64(buffers[0])/n, "client-decoders/op")
	b.ReportMetric(float64(total[1])/n, "server-decoder-B/op")
	b.ReportMetric(float64(gcs)*1000/n, "GCs/1k-calls")
}

// echoSession connects the test server (testserver_test.go) on serverEnd
// and a plain go-sdk client on clientEnd; stop ends both sessions.
func echoSession(b *testing.B, serverEnd, clientEnd mcpsdk.Transport) (cs *mcpsdk.ClientSession, stop func()) {
	ctx := b.Context()
	ss, err := newTestServer(io.Discard, false).Connect(ctx, serverEnd, nil)
	if err != nil {
		b.Fatal(err)
	}
	client := mcpsdk.NewClient(&mcpsdk.Implementation{Name: "plain", Version: "1"}, nil)
	cs, err = client.Connect(ctx, clientEnd, &mcpsdk.ClientSessionOptions{ProtocolVersion: config.DefaultProtocolVersion})
	if err != nil {
		ss.Close()
		b.Fatal(err)
	}
	return cs, func() {
		cs.Close()
		ss.Wait()
	}
}

// clientEndTransport marks the client's end of a session: clientEndConn.Read
// is a frame of every stack that reads a message for the client, which tells
// the profile's two ends apart. The SDK's client asserts no optional
// interface on its connection, so the wrapper changes nothing else.
type clientEndTransport struct{ mcpsdk.Transport }

func (t clientEndTransport) Connect(ctx context.Context) (mcpsdk.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return clientEndConn{c}, nil
}

type clientEndConn struct{ mcpsdk.Connection }

func (c clientEndConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	return c.Connection.Read(ctx)
}

// pipeTransports returns a server end (the SDK's IOTransport) and a client
// end (our stdioTransport) joined by in-memory pipes, and a function that
// returns what the server wrote last.
func pipeTransports() (serverEnd, clientEnd mcpsdk.Transport, lastLine func() []byte) {
	c2sR, c2sW := io.Pipe()
	s2cR, s2cW := io.Pipe()
	w := &lastWrite{WriteCloser: s2cW}
	serverEnd = &mcpsdk.IOTransport{Reader: c2sR, Writer: w}
	clientEnd = &stdioTransport{filter: mcpwire.NewFilter(s2cR, 1<<20, slog.New(slog.DiscardHandler), nil), stdin: c2sW}
	return serverEnd, clientEnd, w.get
}

// lastWrite keeps a copy of the last write through it: the SDK's IOTransport
// writes each message as one line in one write.
type lastWrite struct {
	io.WriteCloser
	mu   sync.Mutex
	last []byte
}

func (w *lastWrite) Write(p []byte) (int, error) {
	w.mu.Lock()
	w.last = append(w.last[:0], p...)
	w.mu.Unlock()
	return w.WriteCloser.Write(p)
}

func (w *lastWrite) get() []byte {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]byte(nil), w.last...)
}

// echoResponseLine makes one echo call and returns the line of the
// server's response, as it was on the wire.
func echoResponseLine(b *testing.B) []byte {
	serverEnd, clientEnd, lastLine := pipeTransports()
	cs, stop := echoSession(b, serverEnd, clientEnd)
	defer stop()
	if _, err := cs.CallTool(b.Context(), &mcpsdk.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hello"}}); err != nil {
		b.Fatal(err)
	}
	line := lastLine()
	if !strings.Contains(string(line), `"result":{"content":[`) {
		b.Fatalf("the last line is not the call's response: %s", line)
	}
	return line
}

// decoderSite is the decoder buffers one SDK function asked for on one end.
type decoderSite struct {
	end          string // "client" or "server"
	caller       string // the function that called into the JSON packages, with its line
	count, bytes int64
}

// decoderBuffers runs call n times with every allocation profiled and
// returns the allocations made by the segmentio decoder's buffer code
// ((*Decoder).readValue), grouped by end and by the first caller outside
// the JSON packages, most bytes first. It also returns the bytes the
// profile saw in all and the bytes runtime.MemStats counted meanwhile: when
// the two agree, nothing escaped the profile. gcs is the number of garbage
// collections the calls caused.
func decoderBuffers(b *testing.B, n int, call func()) (sites []decoderSite, profiled, counted int64, gcs uint32) {
	old := runtime.MemProfileRate
	runtime.MemProfileRate = 1
	defer func() { runtime.MemProfileRate = old }()
	// These calls put every stack of a call into the profile before the
	// first snapshot.
	for range 50 {
		call()
	}
	before := memProfile(b)
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	for range n {
		call()
	}
	runtime.ReadMemStats(&ms1)
	after := memProfile(b)
	counted = int64(ms1.TotalAlloc - ms0.TotalAlloc)
	gcs = ms1.NumGC - ms0.NumGC

	bySite := map[[2]string]*decoderSite{}
	for key, r := range after {
		bytes, count := r.AllocBytes, r.AllocObjects
		if p, ok := before[key]; ok {
			bytes, count = bytes-p.AllocBytes, count-p.AllocObjects
		}
		frames := stackFunctions(r.Stack())
		if count == 0 || hasFunction(frames, "/mcp.memProfile") {
			// memProfile's own snapshot before the calls is published
			// only by the one after them.
			continue
		}
		profiled += bytes
		caller, ok := decoderCaller(r.Stack())
		if !ok {
			continue
		}
		end := "server"
		if hasFunction(frames, "clientEndConn") || hasFunction(frames, ".(*ClientSession).") {
			end = "client"
		}
		k := [2]string{end, caller}
		s := bySite[k]
		if s == nil {
			s = &decoderSite{end: end, caller: caller}
			bySite[k] = s
		}
		s.count += count
		s.bytes += bytes
	}
	for _, s := range bySite {
		sites = append(sites, *s)
	}
	sort.Slice(sites, func(i, j int) bool {
		if sites[i].end != sites[j].end {
			return sites[i].end < sites[j].end
		}
		if sites[i].bytes != sites[j].bytes {
			return sites[i].bytes > sites[j].bytes
		}
		return sites[i].caller < sites[j].caller
	})
	return sites, profiled, counted, gcs
}

// memProfile returns the heap profile's records by stack, after the
// garbage collections that publish every allocation made so far.
func memProfile(b *testing.B) map[string]runtime.MemProfileRecord {
	// A record shows an allocation once the cycle after it has ended.
	runtime.GC()
	runtime.GC()
	var recs []runtime.MemProfileRecord
	for n := 1024; ; {
		recs = make([]runtime.MemProfileRecord, n)
		got, ok := runtime.MemProfile(recs, true)
		if ok {
			recs = recs[:got]
			break
		}
		n = got + 1024
	}
	m := make(map[string]runtime.MemProfileRecord, len(recs))
	for _, r := range recs {
		m[fmt.Sprint(r.Stack())] = r
	}
	if len(m) == 0 {
		b.Fatal("empty heap profile")
	}
	return m
}

// stackFunctions returns the function names of stack, innermost first.
func stackFunctions(stack []uintptr) []string {
	var names []string
	frames := runtime.CallersFrames(stack)
	for {
		f, more := frames.Next()
		names = append(names, f.Function)
		if !more {
			return names
		}
	}
}

func hasFunction(names []string, part string) bool {
	for _, n := range names {
		if strings.Contains(n, part) {
			return true
		}
	}
	return false
}

const (
	segmentioJSON = "github.com/segmentio/encoding/json."
	sdkModule     = "github.com/modelcontextprotocol/go-sdk/"
	sdkJSON       = sdkModule + "internal/json."
)

// decoderCaller reports whether stack is an allocation of the segmentio
// decoder's buffer code and, if so, returns the first function above it
// that is neither that package nor the SDK's internal/json wrapper.
func decoderCaller(stack []uintptr) (string, bool) {
	frames := runtime.CallersFrames(stack)
	inDecoder := false
	for {
		f, more := frames.Next()
		switch {
		case strings.HasPrefix(f.Function, "runtime."):
		case f.Function == segmentioJSON+"(*Decoder).readValue":
			inDecoder = true
		case !inDecoder:
			return "", false
		case strings.HasPrefix(f.Function, segmentioJSON), strings.HasPrefix(f.Function, sdkJSON):
		default:
			name := strings.TrimPrefix(f.Function, sdkModule)
			return fmt.Sprintf("%s (%s:%d)", name, filepath.Base(f.File), f.Line), true
		}
		if !more {
			return "", false
		}
	}
}
