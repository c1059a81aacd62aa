package mcp

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/freecode/freecode/config"
)

// TestNegotiateLateDiscoveryOneShot: a server that speaks only 2026-07-28
// (it refuses initialize) answers a one-shot Conn's first discovery only
// after the Conn gave it up and fell back, as on a loaded machine. The
// fallback's initialize is refused; a one-shot connect has no later
// attempt, so it makes one more at once whose discovery waits, and
// connects at the newest version instead of failing.
func TestNegotiateLateDiscoveryOneShot(t *testing.T) {
	server := newTestServer(io.Discard, false)
	h := mcpsdk.NewStreamableHTTPHandler(func(*http.Request) *mcpsdk.Server { return server },
		&mcpsdk.StreamableHTTPOptions{Stateless: true})
	var (
		discovers atomic.Int32
		refused   = make(chan struct{}) // closed at the first initialize refused
		once      sync.Once
	)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.Header.Get("MCP-Protocol-Version") != LatestProtocolVersion {
			once.Do(func() { close(refused) })
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			w.Write([]byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Missing MCP-Protocol-Version header"}}`))
			return
		}
		if r.Method == http.MethodPost && r.Header.Get("Mcp-Method") == methodDiscover && discovers.Add(1) == 1 {
			// The first discovery is answered only once the client has
			// given up on it and fallen back.
			select {
			case <-refused:
			case <-r.Context().Done():
				return
			}
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close) // after the Conn's Close, which ends its streams

	srv := remoteServer(ts.URL, config.TransportHTTP)
	srv.Timeout = 2 * time.Second // the first discovery waits 1 s
	c := newTestConnOpts(t, srv, nil, &ConnOptions{Environ: testEnviron, NoRetry: true})
	if err := c.Start(t.Context()); err != nil {
		t.Fatalf("a one-shot connect to a server whose first discovery was answered late: %v", err)
	}
	if got := c.Status().ProtocolVersion; got != LatestProtocolVersion {
		t.Errorf("connected at %q, want %q", got, LatestProtocolVersion)
	}
	if n := discovers.Load(); n != 2 {
		t.Errorf("the server saw %d discoveries, want 2 (the one given up, the patient one)", n)
	}
	if got := callText(t, c, "echo", map[string]any{"text": "late"}); got != "late" {
		t.Errorf("echo = %q", got)
	}
}
