package mcp

import (
	"context"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/freecode/freecode/config"
)

// server-everything (TypeScript SDK, 2025-11-25) answers server/discover
// with "Method not found" at once: the connect falls back on the same
// process, at 2025-11-25, and remembers why.
func TestInteropNegotiateServerEverything(t *testing.T) {
	srv := everythingServer(t)
	memo := NewVersionMemo(filepath.Join(t.TempDir(), "protocol-versions.json"))
	c := newTestConnOpts(t, srv, nil, &ConnOptions{Environ: testEnviron, NoRetry: true, Versions: memo})
	if err := c.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := c.Status().ProtocolVersion; got != "2025-11-25" {
		t.Errorf("negotiated %q, want 2025-11-25", got)
	}
	entries, err := readMemo(memo.path)
	if err != nil {
		t.Fatal(err)
	}
	if e := entries[memoKey(srv)]; e.Version != "2025-11-25" || e.Why != "server/discover: Method not found" {
		t.Errorf("remembered %+v", e)
	}
}

// server-everything honours logging/setLevel: at "error", of the random
// levels its simulated logging sends (one at once each time it is turned
// on), none below error arrives.
func TestInteropLogLevelServerEverything(t *testing.T) {
	srv := everythingServer(t)
	var (
		mu     sync.Mutex
		levels []string
	)
	c := newTestConnOpts(t, srv, nil, &ConnOptions{Environ: testEnviron, NoRetry: true, LogLevel: "error",
		ClientOptions: func(_ config.Server, o *mcpsdk.ClientOptions) {
			o.LoggingMessageHandler = func(_ context.Context, req *mcpsdk.LoggingMessageRequest) {
				mu.Lock()
				levels = append(levels, string(req.Params.Level))
				mu.Unlock()
			}
		}})
	if err := c.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	// Each toggle that turns it on sends one message of a random level at
	// once, before the call's answer. 12 of them: that every one was error
	// or above by chance alone is a 1 in 4096 event.
	for range 12 {
		callText(t, c, "toggle-simulated-logging", nil) // on
		callText(t, c, "toggle-simulated-logging", nil) // off
	}
	mu.Lock()
	defer mu.Unlock()
	for _, l := range levels {
		if !slices.Contains([]string{"error", "critical", "alert", "emergency"}, l) {
			t.Errorf("a %s message came through at level error (all: %v)", l, levels)
		}
	}
}
