package oauth_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/freecode/freecode/config"
	"github.com/freecode/freecode/internal/oauthtest"
	"github.com/freecode/freecode/mcp"
	"github.com/freecode/freecode/mcp/oauth"
)

// refusingHandler is an MCP server that, once refuse is set, answers every
// request a valid token carries with 403 insufficient_scope for a scope no
// sign-in brings (as the conformance suite's auth/scope-retry-limit does)
// and, with plainInit, its initialize with a plain 400 (that scenario's
// server speaks only the newest protocol and refuses the go-sdk's
// fallback). Until then it is next.
func refusingHandler(next http.Handler, refuse *atomic.Bool, plainInit bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !refuse.Load() || r.Method != http.MethodPost {
			next.ServeHTTP(w, r)
			return
		}
		body, _ := io.ReadAll(r.Body)
		var msg struct{ Method string }
		_ = json.Unmarshal(body, &msg)
		if plainInit && msg.Method == "initialize" {
			http.Error(w, "Missing MCP-Protocol-Version header", http.StatusBadRequest)
			return
		}
		w.Header().Set("WWW-Authenticate", `Bearer error="insufficient_scope", scope="admin"`)
		http.Error(w, "insufficient scope", http.StatusForbidden)
	})
}

// signedRequests counts the MCP requests that carried a token: the ones a
// connect attempt sends once it holds a sign-in.
func signedRequests(as *oauthtest.Server) int {
	n := 0
	for _, r := range as.MCPRequests() {
		if r.Bearer != "" {
			n++
		}
	}
	return n
}

// kick asks c for its next connect attempt as often as the reconnect
// backoff would make one (Start on a started Conn makes a waiting attempt
// at once), so that a Conn which retries shows it in the server's count
// without the test waiting out the backoff.
func kick(t *testing.T, c *mcp.Conn) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), remoteHangGuard)
	defer cancel()
	for range 8 {
		if err := c.Start(ctx); err == nil {
			t.Fatal("connected to a server that refuses every sign-in")
		}
	}
}

// checkRefusedForGood checks that err and c say the user must sign in, the
// final state, and that no attempt follows: the server sees no request
// with a token beyond the seen it saw when the refusal came.
func checkRefusedForGood(t *testing.T, e *authEnv, c *mcp.Conn, err error, seen int) {
	t.Helper()
	if !errors.Is(err, oauth.ErrNeedsAuth) || errors.Is(err, mcp.ErrRetrying) || !strings.Contains(err.Error(), `scope "admin"`) {
		t.Errorf("the refused sign-in's error %v; want oauth.ErrNeedsAuth naming the scope asked for, not retrying", err)
	}
	if st := c.Status(); st.State != mcp.StateNeedsAuth || !strings.Contains(st.LastError, "sign in again") {
		t.Errorf("status %v %q; want needsAuth saying what to do", st.State, st.LastError)
	}
	kick(t, c)
	c.Close()
	if n := signedRequests(e.as); n != seen {
		t.Errorf("the server saw %d requests with a token after the refusal; want none", n-seen)
	}
}

// A server that refuses every sign-in with 403 insufficient_scope, and the
// discovery's fallback initialize too (with a 400, or the same 403, which
// the flow then answers with a bounded sign-in for more access), is
// refused for good: the Conn neither retries in the background nor on
// reconnect.
func TestOAuthScopeRefusedForGood(t *testing.T) {
	setup := oauthtest.Setup{PRM: "header", ASMeta: "oauth", ChallengeScopes: []string{"admin"}}
	for _, ask := range []string{"nobody to ask", "someone to ask", "someone to ask, initialize refused too"} {
		plainInit := !strings.HasSuffix(ask, "too")
		t.Run("login/"+ask, func(t *testing.T) {
			refuse := new(atomic.Bool)
			refuse.Store(true)
			e := newAuthEnvServing(t, setup, config.TransportHTTP, refusingHandler(goSDKHandler(t, config.TransportHTTP), refuse, plainInit))
			open := e.browser.Open
			if ask == "nobody to ask" {
				open = nil
			}
			c, err := e.login(e.server(nil), e.options(open))
			if n := len(e.as.Events("authorize")); n > 1+oauth.MaxStepUps {
				t.Errorf("%d authorization requests, want at most %d", n, 1+oauth.MaxStepUps)
			}
			checkRefusedForGood(t, e, c, err, signedRequests(e.as))
		})
		t.Run("start/"+ask, func(t *testing.T) {
			refuse := new(atomic.Bool)
			e := newAuthEnvServing(t, setup, config.TransportHTTP, refusingHandler(goSDKHandler(t, config.TransportHTTP), refuse, plainInit))
			srv := e.server(nil)
			e.signIn(srv, e.options(nil))
			refuse.Store(true) // from now on no sign-in is enough
			open := e.browser.Open
			if ask == "nobody to ask" {
				open = nil
			}
			c, err := e.start(srv, e.options(open))
			if n := len(e.as.Events("authorize")); n > 1+oauth.MaxStepUps {
				t.Errorf("%d authorization requests, want at most %d", n, 1+oauth.MaxStepUps)
			}
			checkRefusedForGood(t, e, c, err, signedRequests(e.as))
		})
	}
}
