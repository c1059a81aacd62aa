package workspace

import (
	"slices"
	"testing"
	"time"

	"github.com/freecode/freecode/mcp"
)

// A server whose tools are being registered is connected to its Conn, not
// yet to a frontend that connects then: ShownStatuses leaves it out until
// its tools are registered and its status is emitted.
func TestShownStatusesWaitForTheTools(t *testing.T) {
	e := newEnv(t)
	writeJSON(t, e.cfgPath, mcpSection([]map[string]any{server(t, "srv")}, nil))
	w := e.open(t)
	settle(t, w)
	if _, err := w.StopServer(t.Context(), "srv"); err != nil {
		t.Fatal(err)
	}
	sub := w.Subscribe(nil)
	defer sub.Close()

	// The handover of the next session's tools waits for the pinner.
	w.pins.mu.Lock()
	locked := true
	defer func() {
		if locked {
			w.pins.mu.Unlock()
		}
	}()
	started := make(chan error, 1)
	go func() {
		_, err := w.StartServer(t.Context(), "srv")
		started <- err
	}()
	state := func(sts []mcp.Status) (mcp.State, bool) {
		i := slices.IndexFunc(sts, func(st mcp.Status) bool { return st.Name == "srv" })
		if i < 0 {
			return 0, false
		}
		return sts[i].State, true
	}
	for deadline := time.Now().Add(hangGuard); ; time.Sleep(time.Millisecond) {
		if st, _ := state(w.Statuses()); st == mcp.StateConnected {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("srv not connected within %v", hangGuard)
		}
	}
	if st, ok := state(w.ShownStatuses()); ok {
		t.Errorf("shown while its tools are not registered: %v", st)
	}
	if r := call(t, w, "mcp__srv__echo", `{"text":"hi"}`, nil); !r.IsError {
		t.Fatalf("a call before the tools are registered went through: %+v", r)
	}

	w.pins.mu.Unlock()
	locked = false
	if err := <-started; err != nil {
		t.Fatal(err)
	}
	await(t, sub, "srv connected", statusIs("srv", "connected"))
	if st, ok := state(w.ShownStatuses()); !ok || st != mcp.StateConnected {
		t.Errorf("once registered: %v %v, want connected", st, ok)
	}
}
