package mcp

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/freecode/freecode/config"
	"github.com/freecode/freecode/internal/mcptest"
)

const testIdle = 10 * time.Minute

// onDemandSrv is the entry of an in-memory server started on demand.
func onDemandSrv(name string) config.Server {
	s := memSrv(name)
	s.Start, s.IdleTimeout = config.StartOnDemand, testIdle
	return s
}

// demandManager returns a Manager whose servers are the in-memory s, its
// events going to rec, with manifests from manifests (by server name).
func demandManager(t *testing.T, s *mcptest.Server, rec *mcptest.Recorder, manifests map[string]*Listing, noRetry bool) *Manager {
	t.Helper()
	opts := recordManager(rec)
	opts.Dial = s.Dial
	opts.NoRetry = noRetry
	opts.Manifest = func(srv config.Server) *Listing { return manifests[srv.Name] }
	m := NewManager(opts)
	t.Cleanup(func() { m.Close() })
	return m
}

// idleServer returns an in-memory server with tool a, and a Manager that
// runs it on demand as "d", idle from its manifest. The server closes with
// the test.
func idleServer(t *testing.T, noRetry bool) (*mcptest.Server, *mcptest.Recorder, *Manager) {
	t.Helper()
	s := mcptest.NewServer("mem", mcptest.Tool("a"))
	t.Cleanup(s.Close)
	rec := mcptest.NewRecorder()
	m := demandManager(t, s, rec, map[string]*Listing{"d": {Tools: []*mcpsdk.Tool{mcptest.Tool("a")}}}, noRetry)
	m.Apply(t.Context(), []config.Server{onDemandSrv("d")})
	rec.MustAwait(t, mcptest.InState("d", StateIdle))
	return s, rec, m
}

// callVia makes one call through Acquire, as the orchestrator does.
func callVia(t *testing.T, m *Manager, name, tool string) string {
	t.Helper()
	c, release, err := m.Acquire(t.Context(), name)
	if err != nil {
		t.Fatalf("Acquire(%s): %v", name, err)
	}
	defer release()
	return callText(t, c, tool, nil)
}

func statusOf(m *Manager, name string) Status {
	for _, st := range m.Statuses() {
		if st.Name == name {
			return st
		}
	}
	return Status{}
}

// A server on demand with a manifest is registered from it and idle, not
// started; a call starts it; it stops after its idle timeout without
// calls and keeps its tools; the next call starts it again.
func TestOnDemandFromManifest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := mcptest.NewServer("mem", mcptest.Tool("a"), mcptest.Tool("b"))
		defer s.Close()
		rec := mcptest.NewRecorder()
		listing := &Listing{Tools: []*mcpsdk.Tool{mcptest.Tool("a"), mcptest.Tool("b")},
			ServerInfo: &ServerInfo{Name: "mem", Version: "0.9"}, ProtocolVersion: "2025-06-18"}
		m := demandManager(t, s, rec, map[string]*Listing{"d": listing}, false)
		m.Apply(t.Context(), []config.Server{onDemandSrv("d")})
		rec.MustAwait(t, mcptest.InState("d", StateIdle), mcptest.ToolsChangedFor("d", "manifest", 2))
		st := statusOf(m, "d")
		if st.State != StateIdle || st.ToolCount != 2 || st.ServerInfo == nil || st.ServerInfo.Version != "0.9" {
			t.Errorf("idle status: %+v", st)
		}
		if s.Dials() != 0 {
			t.Fatalf("the server was dialled %d times before any call", s.Dials())
		}

		if got := callVia(t, m, "d", "a"); got != "a: {}" {
			t.Errorf("a = %q", got)
		}
		if s.Dials() != 1 || statusOf(m, "d").State != StateConnected {
			t.Fatalf("after the call: %d dials, state %v", s.Dials(), statusOf(m, "d").State)
		}
		// Calls keep it up: the timeout runs from the last one's end.
		time.Sleep(testIdle - time.Second)
		callVia(t, m, "d", "b")
		time.Sleep(testIdle - time.Second)
		synctest.Wait()
		if st := statusOf(m, "d"); st.State != StateConnected {
			t.Fatalf("state %v before the idle timeout since the last call", st.State)
		}
		time.Sleep(2 * time.Second)
		synctest.Wait()
		if st := statusOf(m, "d"); st.State != StateIdle || st.ToolCount != 2 {
			t.Fatalf("after the idle timeout: %+v", st)
		}
		if n := s.Sessions(); n != 0 {
			t.Errorf("%d sessions left after going idle", n)
		}

		// The tools were never dropped: manifest, then the live list.
		if diff := cmp.Diff([]string{"manifest:a,b", "connected:a,b"}, rec.ToolChanges("d")); diff != "" {
			t.Errorf("tool events (-want +got):\n%s", diff)
		}
		if got := callVia(t, m, "d", "a"); got != "a: {}" || s.Dials() != 2 {
			t.Errorf("a after idling = %q, %d dials", got, s.Dials())
		}
	})
}

// A call in flight is never cut by the idle timeout.
func TestOnDemandIdleWaitsForCalls(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, _, m := idleServer(t, false)
		c, release, err := m.Acquire(t.Context(), "d")
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(3 * testIdle)
		synctest.Wait()
		if st := c.Status(); st.State != StateConnected {
			t.Fatalf("state %v with a call in flight", st.State)
		}
		release()
		release() // a second release changes nothing
		time.Sleep(testIdle + time.Second)
		synctest.Wait()
		if st := statusOf(m, "d"); st.State != StateIdle {
			t.Errorf("state %v after the call ended and the timeout passed", st.State)
		}
	})
}

// A server on demand without a manifest starts once to learn its tools,
// then goes idle.
func TestOnDemandLearnsTools(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := mcptest.NewServer("mem", mcptest.Tool("a"))
		defer s.Close()
		rec := mcptest.NewRecorder()
		m := demandManager(t, s, rec, nil, false)
		m.Apply(t.Context(), []config.Server{onDemandSrv("d")})
		rec.MustAwait(t, mcptest.ReachedState("d", StateConnected), mcptest.InState("d", StateIdle))
		if diff := cmp.Diff(stateStrings(StateConnecting, StateConnected, StateIdle), rec.States("d")); diff != "" {
			t.Errorf("states (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]string{"connected:a"}, rec.ToolChanges("d")); diff != "" {
			t.Errorf("tool events (-want +got):\n%s", diff)
		}
		if st := statusOf(m, "d"); st.ToolCount != 1 {
			t.Errorf("idle tool count %d", st.ToolCount)
		}
	})
}

// A start on demand that fails fails the call; the tools stay registered,
// and the next call tries again.
func TestOnDemandFailedStart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, rec, m := idleServer(t, true)
		s.FailConnects(1)
		if _, release, err := m.Acquire(t.Context(), "d"); err == nil {
			release()
			t.Fatal("Acquire succeeded against a server that refuses connects")
		}
		if st := statusOf(m, "d"); st.State != StateFailed {
			t.Errorf("state after a failed start: %v", st.State)
		}
		if diff := cmp.Diff([]string{"manifest:a"}, rec.ToolChanges("d")); diff != "" {
			t.Errorf("tool events (-want +got):\n%s", diff)
		}
		if got := callVia(t, m, "d", "a"); got != "a: {}" {
			t.Errorf("a after a failed start = %q", got)
		}
	})
}

// Warm starts an idle server in the background; it idles out if no call
// comes.
func TestOnDemandWarm(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := mcptest.NewServer("mem", mcptest.Tool("a"))
		defer s.Close()
		rec := mcptest.NewRecorder()
		m := demandManager(t, s, rec, map[string]*Listing{"d": {Tools: []*mcpsdk.Tool{mcptest.Tool("a")}}}, false)
		m.Apply(t.Context(), []config.Server{onDemandSrv("d"), memSrv("eager")})
		rec.MustAwait(t, mcptest.InState("d", StateIdle), mcptest.InState("eager", StateConnected))
		m.Warm("eager") // not on demand: nothing to do
		m.Warm("d")
		rec.MustAwait(t, mcptest.InState("d", StateConnected))
		time.Sleep(testIdle + time.Second)
		synctest.Wait()
		if st := statusOf(m, "d"); st.State != StateIdle {
			t.Errorf("state %v after a warm start and no call", st.State)
		}
		if st := statusOf(m, "eager"); st.State != StateConnected {
			t.Errorf("an eager server's state %v after the idle timeout", st.State)
		}
	})
}

// Stopped by hand, a server on demand stays stopped: a call does not
// start it. Start brings it back, and it idles out again.
func TestOnDemandStopAndStart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, _, m := idleServer(t, false)
		if _, err := m.Stop(t.Context(), "d"); err != nil {
			t.Fatal(err)
		}
		c, release, err := m.Acquire(t.Context(), "d")
		if err != nil {
			t.Fatal(err)
		}
		if st := c.Status(); st.State != StateStopped || s.Dials() != 0 {
			t.Errorf("a call to a stopped server on demand: state %v, %d dials", st.State, s.Dials())
		}
		release()
		if st, err := m.Start(t.Context(), "d"); err != nil || st.State != StateConnected {
			t.Fatalf("Start: %v, %v", st.State, err)
		}
		time.Sleep(testIdle + time.Second)
		synctest.Wait()
		if st := statusOf(m, "d"); st.State != StateIdle {
			t.Errorf("state %v after a start by hand and the idle timeout", st.State)
		}
	})
}

// A change of start mode or idle timeout applies to the running server
// without a restart.
func TestOnDemandModeChange(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := mcptest.NewServer("mem", mcptest.Tool("a"))
		defer s.Close()
		rec := mcptest.NewRecorder()
		m := demandManager(t, s, rec, map[string]*Listing{"d": {Tools: []*mcpsdk.Tool{mcptest.Tool("a")}}}, false)
		eager := memSrv("d")
		m.Apply(t.Context(), []config.Server{eager})
		rec.MustAwait(t, mcptest.InState("d", StateConnected))
		m.Apply(t.Context(), []config.Server{onDemandSrv("d")})
		time.Sleep(testIdle + time.Second)
		synctest.Wait()
		if st := statusOf(m, "d"); st.State != StateIdle || s.Dials() != 1 {
			t.Fatalf("eager turned on demand: state %v after the idle timeout, %d dials", st.State, s.Dials())
		}
		m.Apply(t.Context(), []config.Server{eager})
		rec.MustAwait(t, mcptest.ReachedStateTimes("d", StateConnected, 2))
		time.Sleep(testIdle + time.Second)
		synctest.Wait()
		if st := statusOf(m, "d"); st.State != StateConnected {
			t.Errorf("on demand turned eager: state %v", st.State)
		}
	})
}

// idle is a state of the protocol, spelt as it is there (server/wire's
// tests hold every state to one the protocol names).
func TestIdleStateName(t *testing.T) {
	st, err := ParseState("idle")
	if err != nil || st != StateIdle || StateIdle.String() != "idle" {
		t.Errorf("ParseState(idle) = %v, %v", st, err)
	}
}
