package server_test

import (
	"runtime/metrics"
	"testing"

	"github.com/freecode/freecode/internal/protocol"
	"github.com/freecode/freecode/server/servertest"
)

// goroutinesCreated is how many goroutines this process has started.
func goroutinesCreated() uint64 {
	s := []metrics.Sample{{Name: "/sched/goroutines-created:goroutines"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// A request starts one goroutine, the reader that takes over while it
// runs, and no other: its context is the connection's, which the standard
// library links to without a goroutine to watch it. Both ends run in this
// process, so the count has the frontend's too (none per request); what
// else the process starts meanwhile is left room for.
func TestGoroutinesPerRequest(t *testing.T) {
	servertest.Run(t, `
-- config.json --
{"mcp": {"servers": [{{server "a"}}]}}
`, func(t *testing.T, env *servertest.Env) {
		env.Editor.AwaitStatus("a", protocol.StateConnected)
		const n = 200
		for _, tc := range []struct {
			name string
			do   func() error
			most int // goroutines per request, at most
		}{
			{"freecode/servers", func() error { _, err := env.Editor.Servers(t.Context()); return err }, 1},
			{"freecode/tools", func() error { _, err := env.Editor.Tools(t.Context(), ""); return err }, 1},
		} {
			before := goroutinesCreated()
			for range n {
				if err := tc.do(); err != nil {
					t.Fatal(err)
				}
			}
			if got := goroutinesCreated() - before; got > uint64(n*tc.most+n/4) {
				t.Errorf("%d %s requests started %d goroutines; want at most %d a request", n, tc.name, got, tc.most)
			}
		}
	}, servertest.Modes(servertest.Stdio))
}
