package mcp

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/freecode/freecode/config"
	"github.com/freecode/freecode/internal/mcptest"
)

// The tests in this file run the real Conn against in-memory servers
// (internal/mcptest) reached through ConnOptions.Dial: the supervision,
// reconnect and re-list logic without a subprocess.

// memSrv is the entry of an in-memory server: only its name matters.
func memSrv(name string) config.Server {
	return config.Server{Name: name, Type: config.TypeLocal, Enabled: true, Scope: "user", Command: []string{"unused"}}
}

// newMemServer returns a scripted server with tools a and b, closed by the
// test's cleanup (after the Conns, which are cleaned up later-first).
func newMemServer(t *testing.T, name string) *mcptest.Server {
	t.Helper()
	s := mcptest.NewServer(name, mcptest.Tool("a"), mcptest.Tool("b"))
	t.Cleanup(s.Close)
	return s
}

// memConn returns a Conn for s, its events going to rec.
func memConn(t *testing.T, s *mcptest.Server, name string, rec *mcptest.Recorder, opts *ConnOptions) *Conn {
	t.Helper()
	if opts == nil {
		opts = &ConnOptions{}
	}
	opts.Dial = s.Dial
	return newTestConnOpts(t, memSrv(name), rec, opts)
}

func memCallText(t *testing.T, c *Conn, tool string) string {
	t.Helper()
	return callText(t, c, tool, nil)
}

func TestMemStatus(t *testing.T) {
	s := newMemServer(t, "mem")
	rec := mcptest.NewRecorder()
	c := memConn(t, s, "m", rec, nil)
	if err := c.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	st := c.Status()
	st.ConnectedAt = time.Time{}
	want := Status{
		Name: "m", Scope: "user", Type: "local", State: StateConnected, ToolCount: 2,
		ServerInfo: &ServerInfo{Name: "mem", Version: "1.0.0"}, ProtocolVersion: LatestProtocolVersion,
		Command: []string{"unused"},
	}
	if diff := cmp.Diff(want, st); diff != "" {
		t.Errorf("status over Dial (-want +got):\n%s", diff)
	}
	if got := memCallText(t, c, "a"); got != "a: {}" {
		t.Errorf("a = %q", got)
	}
}

// A session that drops is reconnected; equal tools after the reconnect are
// no tools event, and the tools stay while it reconnects.
func TestMemReconnectAfterKill(t *testing.T) {
	s := newMemServer(t, "mem")
	rec := mcptest.NewRecorder()
	c := memConn(t, s, "m", rec, nil)
	// Hold the reconnect until the test has looked at the reconnecting state.
	release := make(chan struct{})
	c.backoff = func(int) time.Duration { <-release; return 0 }
	if err := c.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	s.Kill()
	rec.MustAwait(t, mcptest.InState("m", StateReconnecting))
	if st := c.Status(); st.ToolCount != 2 {
		t.Errorf("tools while reconnecting: %d, want the 2 of the last session", st.ToolCount)
	}
	close(release)
	rec.MustAwait(t, mcptest.ReachedStateTimes("m", StateConnected, 2))
	if got := memCallText(t, c, "b"); got != "b: {}" {
		t.Errorf("b after the reconnect = %q", got)
	}
	if diff := cmp.Diff(stateStrings(StateConnecting, StateConnected, StateReconnecting, StateConnected), rec.States("m")); diff != "" {
		t.Errorf("states (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"connected:a,b"}, rec.ToolChanges("m")); diff != "" {
		t.Errorf("tool events (-want +got):\n%s", diff)
	}
	if got := s.Dials(); got != 2 {
		t.Errorf("dials = %d, want 2", got)
	}
}

// A reconnect that brings other tools says so.
func TestMemReconnectWithOtherTools(t *testing.T) {
	s := newMemServer(t, "mem")
	rec := mcptest.NewRecorder()
	c := memConn(t, s, "m", rec, nil)
	release := make(chan struct{})
	c.backoff = func(int) time.Duration { <-release; return 0 }
	if err := c.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	s.Kill()
	rec.MustAwait(t, mcptest.InState("m", StateReconnecting))
	// No session is up, so no list_changed goes out: only the reconnect's
	// tools/list can see the change.
	s.SetTools(mcptest.Tool("a"), mcptest.Tool("c"))
	close(release)
	rec.MustAwait(t, mcptest.ToolsChangedFor("m", "reconnected", 2))
	if diff := cmp.Diff([]string{"connected:a,b", "reconnected:a,c"}, rec.ToolChanges("m")); diff != "" {
		t.Errorf("tool events (-want +got):\n%s", diff)
	}
}

// A server that stays down is failed after the tries, its tools dropped.
func TestMemReconnectGivesUp(t *testing.T) {
	s := newMemServer(t, "mem")
	rec := mcptest.NewRecorder()
	c := memConn(t, s, "m", rec, nil)
	if err := c.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	s.FailConnects(-1)
	s.Kill()
	// The failed status comes first, then the tools' going.
	rec.MustAwait(t, mcptest.ReachedState("m", StateFailed), mcptest.ToolsChangedFor("m", "failed", 0))
	if got, want := s.Dials(), 1+reconnectTries; got != want {
		t.Errorf("dials = %d, want %d (the start and every try)", got, want)
	}
	if diff := cmp.Diff([]string{"connected:a,b", "failed:"}, rec.ToolChanges("m")); diff != "" {
		t.Errorf("tool events (-want +got):\n%s", diff)
	}
	if _, err := c.CallTool(t.Context(), "a", nil, nil); !errors.Is(err, ErrNotConnected) {
		t.Errorf("CallTool when failed = %v, want ErrNotConnected", err)
	}
}

// A call whose session dies under it reports ErrConnectionLost, and the
// next call waits for the reconnect.
func TestMemCallLostMidCall(t *testing.T) {
	s := newMemServer(t, "mem")
	s.AddTool(mcptest.Tool("die"), func(context.Context, *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
		s.Kill()
		return nil, errors.New("died")
	})
	rec := mcptest.NewRecorder()
	c := memConn(t, s, "m", rec, &ConnOptions{PingInterval: time.Hour})
	if err := c.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CallTool(t.Context(), "die", nil, nil); !errors.Is(err, ErrConnectionLost) {
		t.Fatalf("CallTool(die) = %v, want ErrConnectionLost", err)
	}
	if got := memCallText(t, c, "a"); got != "a: {}" {
		t.Errorf("a after the loss = %q", got)
	}
	rec.MustAwait(t, mcptest.ReachedStateTimes("m", StateConnected, 2))
}

// tools/list_changed re-lists: a real change is one event, the same tools
// again are none.
func TestMemToolsListChanged(t *testing.T) {
	s := newMemServer(t, "mem")
	rec := mcptest.NewRecorder()
	c := memConn(t, s, "m", rec, &ConnOptions{PingInterval: time.Hour})
	if err := c.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	s.AddTools(mcptest.Tool("extra"))
	rec.MustAwait(t, mcptest.ToolsChangedFor("m", "listChanged", 3))
	if got := memCallText(t, c, "extra"); got != "extra: {}" {
		t.Errorf("extra = %q", got)
	}
	// The same definition again: the server says the list changed, the
	// re-list finds it equal.
	lists := s.Requests("tools/list")
	s.AddTools(mcptest.Tool("extra"))
	if err := s.AwaitRequests(t.Context(), "tools/list", lists+1); err != nil {
		t.Fatal(err)
	}
	// Re-lists run in order: an event for the equal list would come before
	// the one for this change.
	s.RemoveTools("b")
	rec.MustAwait(t, mcptest.ToolsChangedFor("m", "listChanged", 2))
	want := []string{"connected:a,b", "listChanged:a,b,extra", "listChanged:a,extra"}
	if diff := cmp.Diff(want, rec.ToolChanges("m")); diff != "" {
		t.Errorf("tool events (-want +got):\n%s", diff)
	}
}

// Calls run while the tool list is re-listed after list_changed: under the
// newest protocol the SDK's CallTool reads the pages it cached while the
// re-list lists them again, and nothing of ours may write them then (the
// race detector is the assertion).
func TestMemCallsDuringRelist(t *testing.T) {
	s := newMemServer(t, "mem")
	rec := mcptest.NewRecorder()
	c := memConn(t, s, "m", rec, &ConnOptions{PingInterval: time.Hour})
	if err := c.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	if v := c.Status().ProtocolVersion; v != LatestProtocolVersion {
		t.Fatalf("negotiated %s; this test needs %s, whose SDK caches list pages", v, LatestProtocolVersion)
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-done:
				return
			default:
			}
			if _, err := c.CallTool(t.Context(), "a", nil, nil); err != nil {
				t.Errorf("CallTool a: %v", err)
				return
			}
		}
	})
	for i := range 20 {
		s.AddTools(mcptest.Tool(fmt.Sprintf("t%d", i)))
		rec.MustAwait(t, mcptest.ToolsChangedFor("m", "listChanged", 3+i))
	}
	close(done)
	wg.Wait()
}

// pingSrv is memSrv at the newest protocol that has a ping: 2026-07-28
// has none, so a Conn at it sends no health pings.
func pingSrv(name string) config.Server {
	srv := memSrv(name)
	srv.ProtocolVersion = config.DefaultProtocolVersion
	return srv
}

// The health ping records its latency.
func TestMemHealthPingRecordsLatency(t *testing.T) {
	s := newMemServer(t, "mem")
	c := newTestConnOpts(t, pingSrv("m"), nil, &ConnOptions{Dial: s.Dial, PingInterval: 10 * time.Millisecond})
	if err := c.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	// Pings go one at a time: when the second arrives, the first one's
	// latency is recorded.
	if err := s.AwaitRequests(t.Context(), "ping", 2); err != nil {
		t.Fatal(err)
	}
	if c.Status().LastPing <= 0 {
		t.Error("no ping latency recorded")
	}
}

// A server that stops answering is found by the health ping and
// reconnected once it answers again.
func TestMemUnansweredPingReconnects(t *testing.T) {
	s := newMemServer(t, "mem")
	rec := mcptest.NewRecorder()
	srv := pingSrv("m")
	srv.Timeout = 50 * time.Millisecond // the ping's deadline
	c := newTestConnOpts(t, srv, rec, &ConnOptions{Dial: s.Dial, PingInterval: 10 * time.Millisecond})
	release := make(chan struct{})
	c.backoff = func(int) time.Duration { <-release; return 0 }
	if err := c.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	s.Mute()
	rec.MustAwait(t, mcptest.StatusWith("m", StateReconnecting, "health ping"))
	s.Unmute()
	close(release)
	rec.MustAwait(t, mcptest.ReachedStateTimes("m", StateConnected, 2))
}

// A first connect that fails is retried with the reconnect backoff, in
// state connecting, so a server slow to come up on its first run is not
// failed for good.
func TestMemFirstConnectRetried(t *testing.T) {
	s := newMemServer(t, "mem")
	s.FailConnects(3)
	rec := mcptest.NewRecorder()
	c := memConn(t, s, "m", rec, nil)
	err := c.Start(t.Context())
	if !errors.Is(err, ErrRetrying) || !errors.Is(err, mcptest.ErrConnectRefused) {
		t.Fatalf("Start = %v, want the attempt's error and ErrRetrying", err)
	}
	rec.MustAwait(t, mcptest.InState("m", StateConnected))
	if got := s.Dials(); got != 4 {
		t.Errorf("dials = %d, want 4", got)
	}
	if diff := cmp.Diff(stateStrings(StateConnecting, StateConnected), rec.States("m")); diff != "" {
		t.Errorf("states (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"connected:a,b"}, rec.ToolChanges("m")); diff != "" {
		t.Errorf("tool events (-want +got):\n%s", diff)
	}
	if st := c.Status(); st.LastError != "" {
		t.Errorf("lastError once connected = %q", st.LastError)
	}
}

func TestMemFirstConnectGivesUp(t *testing.T) {
	s := newMemServer(t, "mem")
	s.FailConnects(-1)
	rec := mcptest.NewRecorder()
	c := memConn(t, s, "m", rec, nil)
	if err := c.Start(t.Context()); !errors.Is(err, ErrRetrying) {
		t.Fatalf("Start = %v, want ErrRetrying", err)
	}
	rec.MustAwait(t, mcptest.StatusWith("m", StateFailed, "connect refused"))
	if got, want := s.Dials(), 1+reconnectTries; got != want {
		t.Errorf("dials = %d, want %d", got, want)
	}
	if diff := cmp.Diff(stateStrings(StateConnecting, StateFailed), rec.States("m")); diff != "" {
		t.Errorf("states (-want +got):\n%s", diff)
	}
	if got := rec.ToolChanges("m"); len(got) != 0 {
		t.Errorf("tool events for a server that never connected: %q", got)
	}
}

// NoRetry (the CLI's one-shot check) fails at the first failure.
func TestMemFirstConnectNoRetry(t *testing.T) {
	s := newMemServer(t, "mem")
	s.FailConnects(1)
	rec := mcptest.NewRecorder()
	c := memConn(t, s, "m", rec, &ConnOptions{NoRetry: true})
	err := c.Start(t.Context())
	if err == nil || errors.Is(err, ErrRetrying) {
		t.Fatalf("Start = %v, want a final error", err)
	}
	if st := c.Status(); st.State != StateFailed || !strings.Contains(st.LastError, "connect refused") {
		t.Errorf("status = %v %q, want failed with the attempt's error", st.State, st.LastError)
	}
	if got := s.Dials(); got != 1 {
		t.Errorf("dials = %d, want 1", got)
	}
}

// NoRetry reconnects a lost session once, so that a read-only call can be
// retried; the second loss is final.
func TestMemNoRetryReconnectsOnce(t *testing.T) {
	s := newMemServer(t, "mem")
	rec := mcptest.NewRecorder()
	c := memConn(t, s, "m", rec, &ConnOptions{NoRetry: true})
	if err := c.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	s.Kill()
	// Connected again; failed first is what a one-shot Conn did before.
	rec.MustAwait(t, mcptest.Expect("m connected again before failing", func(events []mcptest.Event) mcptest.Verdict {
		connected := 0
		for _, e := range events {
			switch {
			case e.Server != "m" || e.Kind != mcptest.StatusEvent:
			case e.State == StateFailed.String():
				return mcptest.Unmeetable
			case e.State == StateConnected.String():
				if connected++; connected == 2 {
					return mcptest.Met
				}
			}
		}
		return mcptest.Unmet
	}))
	if got := memCallText(t, c, "a"); got == "" {
		t.Errorf("call after the reconnect answered nothing")
	}
	s.Kill()
	rec.MustAwait(t, mcptest.ReachedState("m", StateFailed))
	if got := s.Dials(); got != 2 {
		t.Errorf("dials = %d, want 2: the first connect and the one reconnect", got)
	}
	if diff := cmp.Diff(stateStrings(StateConnecting, StateConnected, StateReconnecting, StateConnected, StateFailed), rec.States("m")); diff != "" {
		t.Errorf("states (-want +got):\n%s", diff)
	}
}

// A problem of the entry itself is not retried.
func TestMemConfigErrorNotRetried(t *testing.T) {
	s := newMemServer(t, "mem")
	srv := memSrv("m")
	srv.Env = map[string]string{"TOKEN": "${env:NOT_SET_ANYWHERE}"}
	c := newTestConnOpts(t, srv, nil, &ConnOptions{Dial: s.Dial})
	err := c.Start(t.Context())
	if err == nil || errors.Is(err, ErrRetrying) || !strings.Contains(err.Error(), "NOT_SET_ANYWHERE") {
		t.Fatalf("Start = %v, want a final error naming the variable", err)
	}
	if st := c.Status(); st.State != StateFailed {
		t.Errorf("state = %v, want failed", st.State)
	}
}

// A second Start while the Conn waits out a backoff tries at once and
// returns that attempt's outcome.
func TestMemStartAgainTriesNow(t *testing.T) {
	s := newMemServer(t, "mem")
	s.FailConnects(2)
	c := memConn(t, s, "m", nil, nil)
	c.backoff = func(int) time.Duration { return time.Hour }
	if err := c.Start(t.Context()); !errors.Is(err, ErrRetrying) {
		t.Fatalf("first Start = %v, want ErrRetrying", err)
	}
	if err := c.Start(t.Context()); !errors.Is(err, ErrRetrying) || s.Dials() != 2 {
		t.Fatalf("second Start = %v after %d dials, want the second attempt's failure", err, s.Dials())
	}
	if err := c.Start(t.Context()); err != nil {
		t.Fatalf("third Start = %v, want connected", err)
	}
	if st := c.Status(); st.State != StateConnected {
		t.Errorf("state = %v", st.State)
	}
}

// The first connect's retries wait the reconnect backoff: 0.5 s doubling,
// jittered to between half and all of each wait, 6 tries.
func TestMemFirstConnectBackoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := mcptest.NewServer("mem")
		defer s.Close()
		s.FailConnects(-1)
		rec := mcptest.NewRecorder()
		opts := &ConnOptions{Dial: s.Dial, OnStatus: func(st Status) { rec.Status(st.Name, st.State, st.LastError) }}
		c := NewConn(memSrv("m"), opts)
		defer c.Close()
		start := time.Now()
		if err := c.Start(t.Context()); !errors.Is(err, ErrRetrying) {
			t.Fatalf("Start = %v", err)
		}
		rec.MustAwait(t, mcptest.ReachedState("m", StateFailed))
		var lo, hi time.Duration
		for n := range reconnectTries {
			d := min(backoffMin<<n, backoffMax)
			lo, hi = lo+d/2, hi+d
		}
		if took := time.Since(start); took < lo || took > hi {
			t.Errorf("gave up after %v, want between %v and %v", took, lo, hi)
		}
	})
}

// The client hooks can declare a capability and serve it: roots, the way
// the sidecar will serve the editor's workspace folders.
//
// The server asks outside of a request, which only the protocol before
// 2026-07-28 allows (from then on roots come as a call's input request), so
// the entry pins that protocol.
func TestMemClientHooksServeRoots(t *testing.T) {
	s := newMemServer(t, "mem")
	srv := memSrv("m")
	srv.ProtocolVersion = config.DefaultProtocolVersion
	c := newTestConnOpts(t, srv, nil, &ConnOptions{
		Dial: s.Dial,
		ClientOptions: func(_ config.Server, o *mcpsdk.ClientOptions) {
			o.Capabilities.RootsV2 = &mcpsdk.RootCapabilities{ListChanged: true}
		},
		OnClient: func(_ config.Server, cl *mcpsdk.Client) {
			cl.AddRoots(&mcpsdk.Root{URI: "file:///work/project", Name: "project"})
		},
	})
	if err := c.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	var got []string
	for ss := range s.SDK().Sessions() {
		res, err := ss.ListRoots(t.Context(), nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range res.Roots {
			got = append(got, r.URI)
		}
	}
	if diff := cmp.Diff([]string{"file:///work/project"}, got); diff != "" {
		t.Errorf("roots the server sees (-want +got):\n%s", diff)
	}
}
