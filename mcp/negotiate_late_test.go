package mcp

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/freecode/freecode/config"
)

// newestOnlyServer is a loopback server that speaks only 2026-07-28: it
// refuses initialize (and any POST without that revision) as the go-sdk's
// stateless handler does. first, if set, serves the first discovery in its
// stead; initializes counts the refused ones and refused is closed at the
// first.
func newestOnlyServer(t *testing.T, first func(w http.ResponseWriter, r *http.Request, serve http.Handler, refused <-chan struct{})) (url string, discovers, initializes *atomic.Int32) {
	server := newTestServer(io.Discard, false)
	h := mcpsdk.NewStreamableHTTPHandler(func(*http.Request) *mcpsdk.Server { return server },
		&mcpsdk.StreamableHTTPOptions{Stateless: true})
	discovers, initializes = new(atomic.Int32), new(atomic.Int32)
	refused := make(chan struct{})
	var once sync.Once
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.Header.Get("MCP-Protocol-Version") != LatestProtocolVersion {
			initializes.Add(1)
			once.Do(func() { close(refused) })
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			w.Write([]byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Missing MCP-Protocol-Version header"}}`))
			return
		}
		if r.Method == http.MethodPost && r.Header.Get("Mcp-Method") == methodDiscover && discovers.Add(1) == 1 && first != nil {
			first(w, r, h, refused)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close) // after the Conn's Close, which ends its streams
	return ts.URL, discovers, initializes
}

// TestNegotiateLateDiscoveryOneShot: a server that speaks only 2026-07-28
// (it refuses initialize) opens the stream of a one-shot Conn's first
// discovery and answers on it only after the Conn gave it up and fell
// back. The fallback's initialize is refused; a one-shot connect has no
// later attempt, so it makes one more at once whose discovery waits, and
// connects at the newest version instead of failing.
func TestNegotiateLateDiscoveryOneShot(t *testing.T) {
	url, discovers, _ := newestOnlyServer(t, func(w http.ResponseWriter, r *http.Request, _ http.Handler, refused <-chan struct{}) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		select { // no answer on the stream: the Conn gives the discovery up
		case <-refused:
		case <-r.Context().Done():
		case <-time.After(hangGuard):
		}
	})
	srv := remoteServer(url, config.TransportHTTP)
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

// TestNegotiateSlowServer: a remote server that takes longer than the
// discovery's wait to answer its first POST at all (a loaded machine: the
// conformance suite's 32 scenarios at once) is waited for, since the wait
// starts once the server answers: the discovery brings the newest version,
// and no initialize goes out (which a server of both revisions would have
// taken, connecting at the older one).
func TestNegotiateSlowServer(t *testing.T) {
	const timeout = 4 * time.Second // the discovery waits 2 s
	url, discovers, initializes := newestOnlyServer(t, func(w http.ResponseWriter, r *http.Request, serve http.Handler, _ <-chan struct{}) {
		select {
		case <-time.After(discoveryWait(timeout) + 500*time.Millisecond):
		case <-r.Context().Done():
			return
		}
		serve.ServeHTTP(w, r)
	})
	srv := remoteServer(url, config.TransportHTTP)
	srv.Timeout = timeout
	c := newTestConnOpts(t, srv, nil, &ConnOptions{Environ: testEnviron, NoRetry: true})
	if err := c.Start(t.Context()); err != nil {
		t.Fatalf("connecting to a slow server: %v", err)
	}
	if got := c.Status().ProtocolVersion; got != LatestProtocolVersion {
		t.Errorf("connected at %q, want %q", got, LatestProtocolVersion)
	}
	if d, i := discovers.Load(), initializes.Load(); d != 1 || i != 0 {
		t.Errorf("the server saw %d discoveries and %d initializes, want 1 and 0", d, i)
	}
}

// TestNegotiateSlowLocalServer: a local server that reads nothing for
// longer than the discovery's wait (a node server loading its bundle on a
// loaded machine) is waited for, as the wait starts once it has read the
// discovery: it connects at the newest version, and nothing is
// remembered as a fallback.
func TestNegotiateSlowLocalServer(t *testing.T) {
	if !seesUnreadInput {
		t.Skip("a pipe's writer does not see what is unread here: the wait runs from the write")
	}
	const timeout = 8 * time.Second // the discovery waits 2 s
	methods := filepath.Join(t.TempDir(), "methods")
	srv := testSrv(t, "slow", fmt.Sprintf("slowstart=%v", maxDiscoveryWait+time.Second), "methods="+methods)
	srv.Timeout = timeout
	memo := NewVersionMemo(filepath.Join(t.TempDir(), "protocol-versions.json"))
	c := newTestConnOpts(t, srv, nil, &ConnOptions{Environ: testEnviron, NoRetry: true, Versions: memo})
	if err := c.Start(t.Context()); err != nil {
		t.Fatalf("connecting to a local server slow to start: %v", err)
	}
	if got := c.Status().ProtocolVersion; got != LatestProtocolVersion {
		t.Errorf("connected at %q, want %q", got, LatestProtocolVersion)
	}
	if memo.fellBack(c.Config()) {
		t.Error("a slow server that took the newest protocol is remembered as one that did not")
	}
	// One discovery, answered, and no initialize: not a discovery given
	// up, a fallback sent behind it and a second attempt.
	b, err := os.ReadFile(methods)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Fields(string(b))
	discovers := len(slices.DeleteFunc(slices.Clone(got), func(m string) bool { return m != methodDiscover }))
	if discovers != 1 || slices.Contains(got, "initialize") {
		t.Errorf("the server received %v, want one %s and no initialize", got, methodDiscover)
	}
}
