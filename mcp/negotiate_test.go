package mcp

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/freecode/freecode/config"
	"github.com/freecode/freecode/internal/filelock"
)

// runLegacyServer is a server written to 2024-11-05, the way hand-written
// servers of that time are: it answers initialize, tools/list, tools/call
// and ping, ignores notifications, and never answers a request it does not
// know, server/discover among them (it says so on stderr).
func runLegacyServer(in io.Reader, out io.Writer) int {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	enc := json.NewEncoder(out)
	for sc.Scan() {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		if json.Unmarshal(sc.Bytes(), &req) != nil || req.ID == nil || req.Method == "" {
			continue // a notification, or an answer
		}
		var result any
		switch req.Method {
		case "initialize":
			result = map[string]any{
				"protocolVersion": "2024-11-05",
				"capabilities":    map[string]any{"tools": map[string]any{}},
				"serverInfo":      map[string]any{"name": "legacy", "version": "0.1"},
			}
		case "tools/list":
			result = map[string]any{"tools": []any{map[string]any{
				"name": "echo", "description": "echo", "inputSchema": map[string]any{"type": "object"},
			}}}
		case "tools/call":
			result = map[string]any{"content": []any{map[string]any{"type": "text", "text": "legacy: " + string(req.Params)}}}
		case "ping":
			result = map[string]any{}
		default:
			fmt.Fprintln(os.Stderr, "ignored", req.Method)
			continue
		}
		if err := enc.Encode(map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": result}); err != nil {
			return 1
		}
	}
	return 0
}

// The go-sdk's own servers speak the newest protocol: the discovery
// answers, status says 2026-07-28, and nothing is remembered.
func TestNegotiateNewestWithGoSDKServer(t *testing.T) {
	s := newMemServer(t, "mem")
	memo := NewVersionMemo("")
	c := memConn(t, s, "m", nil, &ConnOptions{Versions: memo})
	if err := c.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := c.Status().ProtocolVersion; got != LatestProtocolVersion {
		t.Errorf("negotiated %q, want %q", got, LatestProtocolVersion)
	}
	if memo.fellBack(c.Config()) {
		t.Error("a server that took the newest protocol is remembered as one that did not")
	}
	if n := s.Requests(methodDiscover); n != 1 {
		t.Errorf("%s received %d times, want once", methodDiscover, n)
	}
	// What runs over the session works under the stateless protocol too:
	// a call, the health ping.
	if got := memCallText(t, c, "a"); got != "a: {}" {
		t.Errorf("call = %q", got)
	}
	s2, err := c.liveSession(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if err := c.ping(s2); err != nil {
		t.Errorf("health ping on a %s session: %v", LatestProtocolVersion, err)
	}
}

// A server of 2024-11-05 that never answers server/discover connects
// within its timeout at its own version, the discovery's wait is paid
// once, and the memory of it, a 0600 file, spares the next process the
// wait: its connect sends no discovery.
func TestNegotiateFallsBackForServerThatIgnoresDiscover(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state", "protocol-versions.json")
	srv := testSrv(t, "legacy", "legacy")
	srv.Timeout = 4 * time.Second // a discovery wait of 2 s, and 2 s more for the rest

	c := newTestConnOpts(t, srv, nil, &ConnOptions{Environ: testEnviron, NoRetry: true, Versions: NewVersionMemo(path)})
	if err := c.Start(t.Context()); err != nil {
		t.Fatalf("Start: %v", err)
	}
	st := c.Status()
	if st.ProtocolVersion != "2024-11-05" {
		t.Errorf("negotiated %q, want the server's 2024-11-05", st.ProtocolVersion)
	}
	if got := callText(t, c, "echo", map[string]any{"x": 1}); !strings.HasPrefix(got, "legacy: ") {
		t.Errorf("call = %q", got)
	}
	c.Close()
	if !slices.Contains(c.Status().StderrTail, "ignored "+methodDiscover) {
		t.Errorf("the server was not sent %s (stderr %q)", methodDiscover, c.Status().StderrTail)
	}

	fi, err := os.Stat(path)
	if err != nil {
		t.Fatalf("the fallback was not remembered: %v", err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("memo mode %v, want 0600", fi.Mode().Perm())
	}
	entries, err := readMemo(path)
	if err != nil {
		t.Fatal(err)
	}
	e, ok := entries[memoKey(srv)]
	if !ok || e.Version != "2024-11-05" || e.Why != "no answer to server/discover within 2s" {
		t.Errorf("memo entry %+v (found %v)", e, ok)
	}
	b, _ := os.ReadFile(path)
	if strings.Contains(string(b), srv.Command[0]) {
		t.Errorf("the memo names the command; it should hold a hash only:\n%s", b)
	}

	// The next process: a memo read from the file.
	c2 := newTestConnOpts(t, srv, nil, &ConnOptions{Environ: testEnviron, NoRetry: true, Versions: NewVersionMemo(path)})
	if err := c2.Start(t.Context()); err != nil {
		t.Fatalf("second Start: %v", err)
	}
	if got := c2.Status().ProtocolVersion; got != "2024-11-05" {
		t.Errorf("second connect negotiated %q", got)
	}
	c2.Close()
	if tail := c2.Status().StderrTail; slices.Contains(tail, "ignored "+methodDiscover) {
		t.Errorf("the second connect sent %s again (stderr %q)", methodDiscover, tail)
	}
}

// A pinned version is offered as it is: no discovery, nothing remembered.
func TestNegotiatePinnedVersion(t *testing.T) {
	s := newMemServer(t, "mem")
	memo := NewVersionMemo("")
	srv := memSrv("m")
	srv.ProtocolVersion = "2025-06-18"
	c := newTestConnOpts(t, srv, nil, &ConnOptions{Dial: s.Dial, Versions: memo})
	if err := c.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := c.Status().ProtocolVersion; got != "2025-06-18" {
		t.Errorf("negotiated %q, want the pinned 2025-06-18", got)
	}
	if n := s.Requests(methodDiscover); n != 0 {
		t.Errorf("%s sent %d times to a pinned entry", methodDiscover, n)
	}
	if memo.fellBack(srv) {
		t.Error("a pinned entry was remembered")
	}
}

// legacyTransport is runLegacyServer in memory, for tests on a fake clock.
func legacyTransport() (mcpsdk.Transport, func()) {
	cr, sw := io.Pipe()
	sr, cw := io.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		runLegacyServer(sr, sw)
		sw.Close()
	}()
	return &mcpsdk.IOTransport{Reader: cr, Writer: cw}, func() { cw.Close(); sr.Close(); <-done }
}

// legacyDial returns a Dial hook that connects a new legacyTransport each
// time, and the func that stops every one it made.
func legacyDial() (func(context.Context, config.Server) (mcpsdk.Transport, error), func()) {
	var mu sync.Mutex
	var stops []func()
	dial := func(context.Context, config.Server) (mcpsdk.Transport, error) {
		tr, stop := legacyTransport()
		mu.Lock()
		stops = append(stops, stop)
		mu.Unlock()
		return tr, nil
	}
	return dial, func() {
		mu.Lock()
		defer mu.Unlock()
		for _, stop := range stops {
			stop()
		}
	}
}

// On a fake clock: the discovery of a server that ignores it costs exactly
// the discovery wait, then initialize goes on, within the timeout.
func TestNegotiateDiscoveryWaitIsBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dial, stopAll := legacyDial()
		srv := memSrv("old")
		srv.Timeout = 3 * time.Second
		c := NewConn(srv, &ConnOptions{NoRetry: true, Dial: dial})
		start := time.Now()
		if err := c.Start(t.Context()); err != nil {
			t.Fatal(err)
		}
		if took, want := time.Since(start), discoveryWait(srv.Timeout); took != want {
			t.Errorf("connect took %v, want the discovery wait %v", took, want)
		}
		if got := c.Status().ProtocolVersion; got != "2024-11-05" {
			t.Errorf("negotiated %q", got)
		}
		c.Close()
		stopAll()
	})
}

// A memo whose file another process keeps locked (its directory, on Unix:
// ~/.freecode, locked by any writer of a file there) holds up a connect by
// memoLockWait at most, on a fake clock; the fallback is then not
// remembered, and the log says so. Meanwhile the memo's mutex, which every
// connect's fellBack takes, is free.
func TestNegotiateMemoLockHeld(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		path := filepath.Join(t.TempDir(), VersionMemoFile)
		held, err := filelock.Acquire(t.Context(), path)
		if err != nil {
			t.Fatal(err)
		}
		defer held.Unlock()
		memo := NewVersionMemo(path)
		var logs lockedBuffer
		dial, stopAll := legacyDial()
		srv := memSrv("old")
		srv.Timeout = 3 * time.Second
		c := NewConn(srv, &ConnOptions{NoRetry: true, Versions: memo,
			Logger: slog.New(slog.NewTextHandler(&logs, nil)), Dial: dial})
		start := time.Now()
		if err := c.Start(t.Context()); err != nil {
			t.Fatal(err)
		}
		if took, want := time.Since(start), discoveryWait(srv.Timeout)+memoLockWait; took != want {
			t.Errorf("connect took %v, want the discovery wait and memoLockWait, %v", took, want)
		}
		if got := c.Status().ProtocolVersion; got != "2024-11-05" {
			t.Errorf("negotiated %q", got)
		}
		if memo.fellBack(srv) || NewVersionMemo(path).fellBack(srv) {
			t.Error("a fallback whose memo could not be written is remembered")
		}
		if got := logs.String(); !strings.Contains(got, "not remembered") {
			t.Errorf("the log does not say the fallback was not remembered:\n%s", got)
		}
		c.Close()
		stopAll()

		// While remember waits for the file, fellBack is not held up.
		done := make(chan error, 1)
		go func() { done <- memo.remember(t.Context(), srv, "2024-11-05", "why") }()
		synctest.Wait()
		if !memo.mu.TryLock() {
			t.Error("remember holds the memo's mutex while it waits for the file lock")
		} else {
			memo.mu.Unlock()
		}
		if err := <-done; !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("remember with the file locked: %v, want a deadline exceeded", err)
		}
	})
}

func TestDiscoveryWait(t *testing.T) {
	for _, tc := range []struct{ timeout, want time.Duration }{
		{time.Second, 500 * time.Millisecond},
		{config.DefaultTimeout, maxDiscoveryWait},
		{time.Minute, maxDiscoveryWait},
	} {
		if got := discoveryWait(tc.timeout); got != tc.want {
			t.Errorf("discoveryWait(%v) = %v, want %v", tc.timeout, got, tc.want)
		}
	}
}

// A fallback is remembered for a day, by what runs (not by name), and
// entries of other servers in the file are kept.
func TestVersionMemo(t *testing.T) {
	path := filepath.Join(t.TempDir(), "protocol-versions.json")
	now := time.Date(2026, 8, 1, 12, 0, 0, 0, time.UTC)
	m := NewVersionMemo(path)
	m.now = func() time.Time { return now }
	a := config.Server{Name: "a", Type: config.TypeLocal, Command: []string{"old-server"}}
	b := config.Server{Name: "b", Type: config.TypeRemote, URL: "https://old.example/mcp", Transport: config.TransportAuto}
	if err := m.remember(t.Context(), a, "2024-11-05", "why a"); err != nil {
		t.Fatal(err)
	}
	other := NewVersionMemo(path) // another process
	other.now = m.now
	if err := other.remember(t.Context(), b, "2025-03-26", "why b"); err != nil {
		t.Fatal(err)
	}
	renamed := a
	renamed.Name = "renamed"
	changed := a
	changed.Command = []string{"new-server"}
	fresh := NewVersionMemo(path)
	fresh.now = m.now
	for _, tc := range []struct {
		srv  config.Server
		want bool
	}{{a, true}, {b, true}, {renamed, true}, {changed, false}} {
		if got := fresh.fellBack(tc.srv); got != tc.want {
			t.Errorf("fellBack(%s %v) = %v, want %v", tc.srv.Name, tc.srv.Command, got, tc.want)
		}
	}
	now = now.Add(memoTTL)
	if fresh.fellBack(a) {
		t.Error("a fallback a day old is still remembered")
	}
	// Nothing kept in memory alone and nil remembers nothing.
	var none *VersionMemo
	if none.fellBack(a) || none.remember(t.Context(), a, "x", "y") != nil {
		t.Error("a nil memo remembered")
	}
}

// A discovery answered with an error (as the TypeScript SDK answers it)
// records the error as the reason.
func TestDiscoveryProbeRecordsTheAnswer(t *testing.T) {
	for _, tc := range []struct {
		name  string
		res   mcpsdk.Result
		err   error
		cause error
		want  string
	}{
		{"newest", &mcpsdk.DiscoverResult{SupportedVersions: []string{LatestProtocolVersion}}, nil, nil, ""},
		{"older only", &mcpsdk.DiscoverResult{SupportedVersions: []string{"2025-11-25", "2025-06-18"}}, nil, nil, "server/discover: the server offers 2025-11-25, 2025-06-18"},
		{"method not found", nil, &jsonrpc.Error{Code: -32601, Message: "Method not found"}, nil, "server/discover: Method not found"},
		{"no answer", nil, context.DeadlineExceeded, errNoDiscoverAnswer, "no answer to server/discover within 2s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &discoveryProbe{wait: 2 * time.Second}
			p.record(tc.res, tc.err, tc.cause)
			if got := p.fellBack(); got != tc.want {
				t.Errorf("why = %q, want %q", got, tc.want)
			}
		})
	}
}
