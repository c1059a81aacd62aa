package mcp

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/freecode/freecode/config"
)

// TestUpstreamLostPOST is the reproducer of a go-sdk defect
// (docs/upstream/go-sdk-lost-post.md): the go-sdk's Streamable HTTP client
// reports a POST whose connection broke after the request went out, whole,
// as one the transport rejected (jsonrpc2.ErrRejected, -32005 "rejected by
// transport"), its comment saying that any error from http.Client.Do
// means the request did not reach the server. Here the server reads the
// tools/call, runs it, and drops the connection before answering: the
// plain go-sdk client's error says "rejected", though the call ran. The
// second half is FreeCode's workaround (call.go, lostanswer.go): the same
// drop through a Conn is ErrConnectionLost, which the orchestrator retries
// only for a read-only or idempotent tool.
//
// When the go-sdk tells a request that went out from one that did not,
// the first half fails: the override in call.go can then go.
func TestUpstreamLostPOST(t *testing.T) {
	server := newTestServer(io.Discard, false)
	h := mcpsdk.NewStreamableHTTPHandler(func(*http.Request) *mcpsdk.Server { return server }, &mcpsdk.StreamableHTTPOptions{Stateless: true})
	var ran atomic.Int32
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.Header.Get("Mcp-Method") == "tools/call" {
			body, _ := io.ReadAll(r.Body)
			if strings.Contains(string(body), `"drop"`) {
				ran.Add(1) // the server has the whole request and acts on it
				conn, _, err := w.(http.Hijacker).Hijack()
				if err == nil {
					conn.Close() // and the answer never leaves
				}
				return
			}
			r.Body = io.NopCloser(strings.NewReader(string(body)))
		}
		h.ServeHTTP(w, r)
	}))
	defer ts.Close()

	t.Run("go-sdk", func(t *testing.T) {
		c := mcpsdk.NewClient(&mcpsdk.Implementation{Name: "repro", Version: "1"}, nil)
		cs, err := c.Connect(t.Context(), &mcpsdk.StreamableClientTransport{Endpoint: ts.URL, DisableStandaloneSSE: true}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		before := ran.Load()
		_, err = cs.CallTool(t.Context(), &mcpsdk.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "drop"}})
		var werr *jsonrpc.Error
		rejected := errors.As(err, &werr) && werr.Code == codeRejected
		t.Logf("the server ran the call %d time(s); the go-sdk said: %v", ran.Load()-before, err)
		if ran.Load()-before != 1 || !rejected {
			t.Errorf("ran %d, error %v: the go-sdk no longer reports a call the server received as rejected by the transport; see docs/upstream/go-sdk-lost-post.md",
				ran.Load()-before, err)
		}
	})
	t.Run("freecode", func(t *testing.T) {
		srv := remoteServer(ts.URL, config.TransportHTTP)
		c := newTestConnOpts(t, srv, nil, &ConnOptions{Environ: testEnviron, NoRetry: true})
		if err := c.Start(t.Context()); err != nil {
			t.Fatal(err)
		}
		before := ran.Load()
		_, err := c.CallTool(t.Context(), "echo", map[string]any{"text": "drop"}, nil)
		if ran.Load()-before != 1 || !errors.Is(err, ErrConnectionLost) {
			t.Errorf("ran %d, error %v; want ErrConnectionLost", ran.Load()-before, err)
		}
	})
}
