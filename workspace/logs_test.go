package workspace

import (
	"strings"
	"testing"
	"time"

	"github.com/freecode/freecode/mcp"
)

// A server's stderr reaches the subscribers that ask as log events, at
// most a burst of them at once: the lines beyond are counted, and every
// line is either published or counted. A subscriber that did not ask gets
// none.
func TestLogEvents(t *testing.T) {
	e := newEnv(t)
	writeJSON(t, e.cfgPath, mcpSection([]map[string]any{unpinned(extraServer(t, "srv"))}, nil))
	w := e.open(t)
	sub := w.Subscribe(&SubscribeOptions{Logs: true})
	defer sub.Close()
	quiet := w.Subscribe(nil)
	defer quiet.Close()
	settle(t, w)

	// Far more lines than the bucket lets through at once: some are
	// dropped however slowly the lines are read.
	const lines = 20 * logBurst
	if r := call(t, w, "mcp__srv__say", `{"text":"line","count":4000}`, nil); r.IsError {
		t.Fatalf("say: %+v", r)
	}
	published, dropped := 0, 0
	for published+dropped < lines {
		// The server's stderr, not its life (starting, connected) told
		// beside it.
		ev := await(t, sub, "log lines", func(ev *LogEvent) bool { return ev.Log.Server == "srv" && ev.Log.Source != mcp.LogFreeCode })
		dropped += ev.Dropped
		if ev.Log.Message != "" {
			published++
			if ev.Log.Source != mcp.LogStderr || !strings.HasPrefix(ev.Log.Message, "line ") || ev.Log.Time.IsZero() {
				t.Fatalf("log event %+v", ev)
			}
		}
	}
	if published+dropped != lines || dropped == 0 || published < logBurst {
		t.Errorf("%d lines published and %d dropped; want %d in all, at least %d published, some dropped", published, dropped, lines, logBurst)
	}

	// The quiet subscriber got none of them: before a tools change after
	// the lines, it has only statuses and the tools at connect.
	if r := call(t, w, "mcp__srv__addtool", `{"name":"marker"}`, allowOnce); r.IsError {
		t.Fatalf("addtool: %+v", r)
	}
	timer := time.NewTimer(hangGuard)
	defer timer.Stop()
	for {
		select {
		case ev := <-quiet.Events():
			switch ev := ev.(type) {
			case *StatusEvent:
				continue
			case *ToolsChangedEvent:
				if ev.Reason == "listChanged" {
					return // the marker
				}
				continue // the server's tools at connect
			}
			t.Fatalf("a subscriber that did not ask for logs got %s", describe(ev))
		case <-timer.C:
			t.Fatal("no tools change for the quiet subscriber")
		}
	}
}
