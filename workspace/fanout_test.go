package workspace

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/freecode/freecode/defscache"
	"github.com/freecode/freecode/mcp"
)

// TestSubscriptionQueue: what a subscriber that reads only after events
// were published gets.
func TestSubscriptionQueue(t *testing.T) {
	status := func(name string, s mcp.State) Event { return &StatusEvent{Status: mcp.Status{Name: name, State: s}} }
	tools := func(reason string) Event { return &ToolsChangedEvent{Reason: reason} }
	tests := []struct {
		name     string
		capacity int
		publish  []Event
		want     []string
	}{
		{
			name:    "in order",
			publish: []Event{status("a", mcp.StateConnecting), tools("added"), status("b", mcp.StateConnecting)},
			want:    []string{"status a connecting", "tools added", "status b connecting"},
		},
		{
			// The latest takes the place of one only statuses followed;
			// one that other events followed stays, so that they come
			// after the state they happened in, and the latest follows
			// them.
			name: "statuses coalesce per server, never across other events",
			publish: []Event{
				status("a", mcp.StateConnecting), status("b", mcp.StateConnecting), tools("added"),
				status("a", mcp.StateConnected), status("a", mcp.StateReconnecting), tools("removed"),
				status("b", mcp.StateConnected), status("b", mcp.StateFailed),
			},
			want: []string{
				"status a connecting", "status b connecting", "tools added",
				"status a reconnecting", "tools removed", "status b failed",
			},
		},
		{
			// A server connects, then its resources change: a subscriber
			// that reads late still sees them after "connected".
			name: "a status does not move behind what happened after it",
			publish: []Event{
				status("a", mcp.StateConnecting), status("a", mcp.StateConnected), tools("resources"),
				status("a", mcp.StateConnected),
			},
			want: []string{"status a connected", "tools resources", "status a connected"},
		},
		{
			name:     "once events are dropped, only each server's latest status is kept",
			capacity: 2,
			publish: []Event{
				status("a", mcp.StateConnecting), tools("1"), status("a", mcp.StateConnected), tools("2"),
				status("a", mcp.StateReconnecting), tools("3"), status("a", mcp.StateFailed),
			},
			want: []string{"missed 1", "tools 2", "tools 3", "status a failed"},
		},
		{
			name:     "beyond capacity the oldest go, and the subscriber is told first",
			capacity: 2,
			publish:  []Event{tools("1"), status("a", mcp.StateConnecting), tools("2"), tools("3"), tools("4"), status("a", mcp.StateConnected)},
			want:     []string{"missed 2", "tools 3", "tools 4", "status a connected"},
		},
		{
			name:     "statuses do not count against capacity",
			capacity: 1,
			publish:  []Event{status("a", mcp.StateConnecting), status("b", mcp.StateConnecting), status("c", mcp.StateConnecting), tools("1")},
			want:     []string{"status a connecting", "status b connecting", "status c connecting", "tools 1"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var f fanout
			s := f.subscribe(&SubscribeOptions{Capacity: tc.capacity})
			defer s.Close()
			f.publish(tc.publish...)
			var got []string
			for range tc.want {
				got = append(got, short(<-s.Events()))
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
			// Nothing more: a marker published now is the next event.
			f.publish(tools("marker"))
			if ev := short(<-s.Events()); ev != "tools marker" {
				t.Errorf("after the expected events: %s, want the marker", ev)
			}
		})
	}
}

func short(ev Event) string {
	switch ev := ev.(type) {
	case *StatusEvent:
		return fmt.Sprintf("status %s %v", ev.Status.Name, ev.Status.State)
	case *ToolsChangedEvent:
		return "tools " + ev.Reason
	case *MissedEvent:
		return fmt.Sprintf("missed %d", ev.Count)
	}
	return describe(ev)
}

// A subscriber that never reads stalls nobody: the servers keep serving
// calls and reporting, the other subscriber gets every event, and the slow
// one, when it finally reads, is told what it missed, then gets the latest.
func TestSlowSubscriber(t *testing.T) {
	e := newEnv(t)
	writeJSON(t, e.cfgPath, mcpSection([]map[string]any{unpinned(server(t, "a")), unpinned(server(t, "b"))}, nil))
	w := e.open(t)
	fast := w.Subscribe(nil)
	defer fast.Close()
	settle(t, w)
	// The tools of both servers are published before the slow one comes:
	// read up to the event that carries the hash of all eight (one
	// rebuild may cover both servers, so the number of events varies).
	entry, _, err := w.Definitions(t.Context(), defscache.FormatAnthropic)
	if err != nil || entry.Count != 8 {
		t.Fatalf("definitions before the slow subscriber: %v, %v", entry, err)
	}
	await(t, fast, "the initial tools' hash", func(ev *ToolsChangedEvent) bool {
		return ev.Hashes[defscache.FormatAnthropic] == entry.Hash
	})
	const capacity = 3
	slow := w.Subscribe(&SubscribeOptions{Capacity: capacity})
	defer slow.Close()

	// Each new tool is a list_changed from the server, a re-list by its
	// Conn, a registry change, a rebuild and one tools-changed event.
	const rounds = 10
	var last *ToolsChangedEvent
	for i := range rounds {
		srv := []string{"a", "b"}[i%2]
		r := call(t, w, "mcp__"+srv+"__addtool", fmt.Sprintf(`{"name":"t%d"}`, i), allowOnce)
		if r.IsError {
			t.Fatalf("round %d: %+v", i, r)
		}
		// The round is over once both its tools change and the status
		// with the server's new tool count are out, in either order.
		want := 4 + i/2 + 1
		var sawStatus bool
		last = nil
		for last == nil || !sawStatus {
			switch ev := await[Event](t, fast, fmt.Sprintf("round %d's tools change and status", i), nil).(type) {
			case *ToolsChangedEvent:
				if ev.Server == srv {
					last = ev
				}
			case *StatusEvent:
				if ev.Status.Name == srv && ev.Status.ToolCount == want {
					sawStatus = true
				}
			}
		}
	}
	entry, _, err = w.Definitions(t.Context(), defscache.FormatAnthropic)
	if err != nil || entry.Count != 8+rounds || entry.Hash != last.Hashes[defscache.FormatAnthropic] {
		t.Fatalf("definitions after the rounds: %v, %v; last event %+v", entry, err, last)
	}

	// The fast subscriber may take an event before the publisher has
	// queued it for the slow one: publishing holds the fanout's lock
	// until every subscriber has the event, so taking the lock once
	// waits for the last round's.
	w.events.mu.Lock()
	w.events.mu.Unlock()
	// Now the slow subscriber reads: the missed events first, then the
	// last `capacity` tools changes and the latest status of each server.
	ev := <-slow.Events()
	if m, ok := ev.(*MissedEvent); !ok || m.Count != rounds-capacity {
		t.Fatalf("slow subscriber's first event: %s, want missed %d", describe(ev), rounds-capacity)
	}
	var got []string
	statuses := map[string]int{} // server → tool count
	for range capacity + 2 {
		switch ev := (<-slow.Events()).(type) {
		case *ToolsChangedEvent:
			got = append(got, ev.Server)
			if ev == last {
				got[len(got)-1] += " (last)"
			}
		case *StatusEvent:
			statuses[ev.Status.Name] = ev.Status.ToolCount
		default:
			t.Fatalf("unexpected event %s", describe(ev))
		}
	}
	if diff := cmp.Diff([]string{"b", "a", "b (last)"}, got); diff != "" {
		t.Errorf("tools changes kept for the slow subscriber (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]int{"a": 4 + rounds/2, "b": 4 + rounds/2}, statuses); diff != "" {
		t.Errorf("latest statuses for the slow subscriber (-want +got):\n%s", diff)
	}
	if t.Failed() {
		for {
			select {
			case ev := <-slow.Events():
				t.Logf("then: %s", describe(ev))
				continue
			case <-time.After(time.Second):
			}
			break
		}
		var all []string
		for _, st := range w.Statuses() {
			all = append(all, fmt.Sprintf("%s %v %d", st.Name, st.State, st.ToolCount))
		}
		t.Logf("statuses: %s", strings.Join(all, "; "))
	}
}
