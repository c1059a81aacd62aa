package mcp

import (
	"errors"
	"path/filepath"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/freecode/freecode/config"
	"github.com/freecode/freecode/internal/mcptest"
)

// A restart is a reconnect: a new process, the tools held throughout, and
// no tools event when the new session lists the same tools.
func TestManagerRestartKeepsTools(t *testing.T) {
	rec := mcptest.NewRecorder()
	m := NewManager(recordManager(rec))
	defer m.Close()
	m.Apply(t.Context(), []config.Server{testSrv(t, "a")})
	rec.MustAwait(t, mcptest.InState("a", StateConnected))
	c, _ := m.Conn("a")
	before := c.Status().PID

	st, err := m.Restart(t.Context(), "a")
	if err != nil || st.State != StateConnected || st.PID == before || st.ToolCount != 8 {
		t.Fatalf("Restart = %+v, %v; want connected, a new process, 8 tools", st, err)
	}
	if again, _ := m.Conn("a"); again != c {
		t.Errorf("Restart replaced the Conn: a new one has no tools until it lists them")
	}
	want := stateStrings(StateConnecting, StateConnected, StateReconnecting, StateConnected)
	if diff := cmp.Diff(want, rec.States("a")); diff != "" {
		t.Errorf("states (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"connected:addtool,crash,echo,env,freeze,huge,progress,sleep"}, rec.ToolChanges("a")); diff != "" {
		t.Errorf("tool events (-want +got):\n%s", diff)
	}
}

// A restarted server that does not come back is a reconnect that fails:
// its tools stay registered while it is tried again, and go only when it
// ends in failed.
func TestRestartThatFailsKeepsToolsUntilFailed(t *testing.T) {
	counter := filepath.Join(t.TempDir(), "starts")
	rec := mcptest.NewRecorder()
	c := newTestConn(t, testSrv(t, "gone", "crashafter="+counter+":1"), rec)
	var mu sync.Mutex
	var toolsWhileReconnecting []int
	c.opts.OnStatus = func(st Status) {
		if st.State == StateReconnecting {
			mu.Lock()
			toolsWhileReconnecting = append(toolsWhileReconnecting, st.ToolCount)
			mu.Unlock()
		}
		rec.Status(st.Name, st.State, st.LastError)
	}
	if err := c.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	err := c.Reconnect(t.Context())
	if !errors.Is(err, ErrRetrying) && !errors.Is(err, ErrNotConnected) {
		t.Errorf("Reconnect of a server that exits at start = %v; want it to say it retries, or failed", err)
	}
	rec.MustAwait(t, mcptest.ReachedState("gone", StateFailed), mcptest.ToolsChangedFor("gone", "failed", 0))
	want := stateStrings(StateConnecting, StateConnected, StateReconnecting, StateFailed)
	if diff := cmp.Diff(want, rec.States("gone")); diff != "" {
		t.Errorf("states (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"connected:addtool,crash,echo,env,freeze,huge,progress,sleep", "failed:"}, rec.ToolChanges("gone")); diff != "" {
		t.Errorf("tool events (-want +got):\n%s", diff)
	}
	mu.Lock()
	if len(toolsWhileReconnecting) == 0 {
		t.Errorf("no reconnecting status")
	}
	for _, n := range toolsWhileReconnecting {
		if n != 8 {
			t.Errorf("tools while reconnecting: %v; want 8 each time", toolsWhileReconnecting)
			break
		}
	}
	mu.Unlock()
	// A Conn with no session has nothing to reconnect: the Manager
	// starts it anew.
	if err := c.Reconnect(t.Context()); !errors.Is(err, errNoSession) {
		t.Errorf("Reconnect of a failed Conn = %v; want errNoSession", err)
	}
}
