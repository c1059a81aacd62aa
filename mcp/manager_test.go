package mcp

import (
	"context"
	"errors"
	"maps"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/freecode/freecode/config"
	"github.com/freecode/freecode/internal/mcptest"
)

// recordManager returns options that send the Manager's events to rec.
func recordManager(rec *mcptest.Recorder) *ManagerOptions {
	return &ManagerOptions{
		ConnOptions: ConnOptions{
			Environ:  testEnviron,
			OnStatus: func(st Status) { rec.Status(st.Name, st.State, st.LastError) },
		},
		OnToolsChanged: func(tc ToolsChanged) { rec.Tools(tc.Server, tc.Reason, tc.Tools) },
	}
}

func states(m *Manager) map[string]State {
	out := map[string]State{}
	for _, st := range m.Statuses() {
		out[st.Name] = st.State
	}
	return out
}

func TestManagerApply(t *testing.T) {
	rec := mcptest.NewRecorder()
	m := NewManager(recordManager(rec))
	defer m.Close()

	a, b, d := testSrv(t, "a"), testSrv(t, "b"), testSrv(t, "d")
	d.Enabled = false
	slow := testSrv(t, "slow", "noinit") // answers nothing until its timeout
	m.Apply(t.Context(), []config.Server{a, b, d, slow})
	// One server that never answers delays no other.
	rec.MustAwait(t, mcptest.InState("a", StateConnected), mcptest.InState("b", StateConnected))
	want := map[string]State{"a": StateConnected, "b": StateConnected, "d": StateDisabled, "slow": StateConnecting}
	if diff := cmp.Diff(want, states(m)); diff != "" {
		t.Errorf("states (-want +got):\n%s", diff)
	}
	if names := slices.Collect(func(yield func(string) bool) {
		for _, st := range m.Statuses() {
			yield(st.Name)
		}
	}); !slices.IsSorted(names) {
		t.Errorf("Statuses not sorted: %v", names)
	}
	pid := func(name string) int {
		c, ok := m.Conn(name)
		if !ok {
			return -1
		}
		return c.Status().PID
	}
	pidB := pid("b")

	// Remove a and slow, change b, leave d, add c.
	b2 := b
	b2.Env = maps.Clone(b.Env)
	b2.Env["EXTRA"] = "1"
	c := testSrv(t, "c")
	m.Apply(t.Context(), []config.Server{b2, c, d})
	rec.MustAwait(t, mcptest.ReachedStateTimes("b", StateConnected, 2), mcptest.InState("b", StateConnected), mcptest.InState("c", StateConnected))
	if pid("b") == pidB {
		t.Errorf("b's pid is %d after its entry changed: not restarted", pidB)
	}
	want = map[string]State{"b": StateConnected, "c": StateConnected, "d": StateDisabled}
	if diff := cmp.Diff(want, states(m)); diff != "" {
		t.Errorf("states after the second Apply (-want +got):\n%s", diff)
	}
	rec.MustAwait(t,
		mcptest.ToolsChangedFor("a", "connected", 8), mcptest.ToolsChangedFor("b", "connected", 8),
		mcptest.ToolsChangedFor("a", "removed", 0), mcptest.ToolsChangedFor("b", "changed", 0),
		mcptest.ToolsChangedFor("c", "connected", 8))

	// The same config again changes nothing.
	pidB, pidC := pid("b"), pid("c")
	m.Apply(t.Context(), []config.Server{b2, c, d})
	if pid("b") != pidB || pid("c") != pidC {
		t.Errorf("an unchanged Apply restarted servers")
	}

	// Enabling d starts it.
	d.Enabled = true
	m.Apply(t.Context(), []config.Server{b2, c, d})
	rec.MustAwait(t, mcptest.InState("d", StateConnected))

	st, err := m.Stop(t.Context(), "b")
	if err != nil || st.State != StateStopped {
		t.Errorf("Stop = %v, %v", st.State, err)
	}
	st, err = m.Start(t.Context(), "b")
	if err != nil || st.State != StateConnected || st.PID == pidB {
		t.Errorf("Start = %v (pid %d), %v", st.State, st.PID, err)
	}
	pidB = st.PID
	st, err = m.Restart(t.Context(), "b")
	if err != nil || st.State != StateConnected || st.PID == pidB {
		t.Errorf("Restart = %v (pid %d), %v", st.State, st.PID, err)
	}
	if _, err := m.Start(t.Context(), "nope"); !errors.Is(err, ErrNoServer) {
		t.Errorf("Start(nope) = %v, want ErrNoServer", err)
	}

	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	for name, s := range states(m) {
		if s != StateStopped {
			t.Errorf("%s is %v after Close", name, s)
		}
	}
	if pids := procsWithArg(t, "noinit"); len(pids) != 0 {
		t.Errorf("processes left after Close: %v", pids)
	}
}

// A server removed while its changed entry waits to restart is not
// started again: it is no longer in the Manager, so nothing would ever
// stop it (Close included) and its process would outlive the sidecar.
func TestManagerRemovedDuringRestartStaysStopped(t *testing.T) {
	rec := mcptest.NewRecorder()
	m := NewManager(recordManager(rec))
	defer m.Close()
	a := testSrv(t, "a")
	m.Apply(t.Context(), []config.Server{a})
	rec.MustAwait(t, mcptest.InState("a", StateConnected))

	m.mu.Lock()
	e := m.entries["a"]
	m.mu.Unlock()
	// Hold the entry's lifecycle lock, as a start in progress would, so the
	// restart of the change below waits until the removal is in.
	e.opMu.Lock()
	a2 := a
	a2.Env = maps.Clone(a.Env)
	a2.Env["EXTRA"] = "1"
	m.Apply(t.Context(), []config.Server{a2})
	m.Apply(t.Context(), nil)
	e.opMu.Unlock()
	m.wg.Wait() // the restart and the removal have run

	m.mu.Lock()
	c := e.conn
	m.mu.Unlock()
	if st := c.Status().State; st != StateStopped {
		t.Errorf("removed server is %v, want %v", st, StateStopped)
	}
	if _, err := m.Start(t.Context(), "a"); !errors.Is(err, ErrNoServer) {
		t.Errorf("Start(a) after removal = %v, want ErrNoServer", err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
}

// A server removed and added again at once (an entry cut and pasted back)
// starts only once the old one has stopped: otherwise the old one's
// "removed" event, which comes when its slow stop ends, arrived after the
// new one's "connected", and whoever follows the events dropped the tools
// of a running server.
func TestManagerReAddedAfterRemoval(t *testing.T) {
	rec := mcptest.NewRecorder()
	m := NewManager(recordManager(rec))
	defer m.Close()
	old := testSrv(t, "a", "ignoreterm") // stops only at SIGKILL, seconds later
	m.Apply(t.Context(), []config.Server{old})
	rec.MustAwait(t, mcptest.InState("a", StateConnected))
	m.Apply(t.Context(), nil)
	m.Apply(t.Context(), []config.Server{testSrv(t, "a")})
	rec.MustAwait(t, mcptest.EventCount("a", mcptest.ToolsEvent, 3))
	m.wg.Wait()
	const tools = "addtool,crash,echo,env,freeze,huge,progress,sleep"
	if diff := cmp.Diff([]string{"connected:" + tools, "removed:", "connected:" + tools}, rec.ToolChanges("a")); diff != "" {
		t.Errorf("tools events (-want +got):\n%s", diff)
	}
	if st := states(m)["a"]; st != StateConnected {
		t.Errorf("a is %v, want connected", st)
	}
}

// Apply with a ctx that is done changes nothing and says so; a ctx that
// ends after Apply returned does not end the start it began: a server
// outlives the request that configured it.
func TestManagerApplyContext(t *testing.T) {
	rec := mcptest.NewRecorder()
	m := NewManager(recordManager(rec))
	defer m.Close()
	done, cancel := context.WithCancel(t.Context())
	cancel()
	if err := m.Apply(done, []config.Server{testSrv(t, "a")}); !errors.Is(err, context.Canceled) {
		t.Errorf("Apply with a cancelled ctx = %v, want context.Canceled", err)
	}
	if _, ok := m.Conn("a"); ok {
		t.Error("Apply with a cancelled ctx added the server")
	}
	ctx, cancel := context.WithCancel(t.Context())
	if err := m.Apply(ctx, []config.Server{testSrv(t, "a")}); err != nil {
		t.Fatal(err)
	}
	cancel()
	rec.MustAwait(t, mcptest.InState("a", StateConnected))
}
