package oauth_test

import (
	"net/http"
	"testing"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/freecode/freecode/config"
	"github.com/freecode/freecode/internal/oauthtest"
	"github.com/freecode/freecode/mcp"
)

// newestOnlyServer is goSDKServer as a server that speaks only the newest
// protocol: stateless Streamable HTTP (the go-sdk serves 2026-07-28 only
// there), in front of it oauthtest.NewestOnly.
func newestOnlyServer(t *testing.T) http.Handler {
	server := goSDKServer(t)
	return oauthtest.NewestOnly(mcpsdk.NewStreamableHTTPHandler(func(*http.Request) *mcpsdk.Server { return server },
		&mcpsdk.StreamableHTTPOptions{Stateless: true}), mcp.LatestProtocolVersion)
}

// A server that speaks only the newest protocol, behind OAuth: the sign-in
// connects at that protocol (it used to fall back to initialize, which such
// a server refuses), and so does the next connect on the stored tokens.
func TestOAuthNewestOnlyServer(t *testing.T) {
	e := newAuthEnvServing(t, oauthtest.Setup{PRM: "header", ASMeta: "oauth"}, config.TransportHTTP, newestOnlyServer(t))
	srv := e.server(nil)
	c, err := e.login(srv, e.options(nil))
	if err != nil {
		t.Fatalf("signing in: %v\nauthorization server: %q\n%s", err, e.as.Events(""), e.logs.String())
	}
	if got := c.Status().ProtocolVersion; got != mcp.LatestProtocolVersion {
		t.Errorf("signed in at %q, want %q", got, mcp.LatestProtocolVersion)
	}
	if err := e.echo(c); err != nil {
		t.Fatalf("calling after the sign-in: %v", err)
	}
	c.Close()

	c, err = e.start(srv, e.options(nil))
	if err != nil {
		t.Fatalf("connecting on the stored sign-in: %v", err)
	}
	if err := e.echo(c); err != nil {
		t.Fatalf("calling on the stored sign-in: %v", err)
	}
	if got := c.Status().ProtocolVersion; got != mcp.LatestProtocolVersion {
		t.Errorf("connected at %q, want %q", got, mcp.LatestProtocolVersion)
	}
}

// No health ping goes to a server that speaks only the newest protocol:
// 2026-07-28 has no ping, and the server's refusal of one lost the session
// at every tick. The calls between the ticks stay on one connection.
func TestNewestOnlyServerNoHealthPing(t *testing.T) {
	e := newAuthEnvServing(t, oauthtest.Setup{PRM: "header", ASMeta: "oauth"}, config.TransportHTTP, newestOnlyServer(t))
	opts := e.options(nil)
	opts.PingInterval = time.Millisecond
	c, err := e.login(e.server(nil), opts)
	if err != nil {
		t.Fatalf("signing in: %v\n%s", err, e.logs.String())
	}
	for i := range 50 {
		if err := e.echo(c); err != nil {
			t.Fatalf("call %d: %v; status %+v", i, err, c.Status())
		}
	}
	for _, r := range e.as.MCPRequests() {
		if r.Method == "ping" {
			t.Errorf("a ping was sent, answered %d", r.Status)
		}
	}
	if st := c.Status(); st.State != mcp.StateConnected || st.LastError != "" {
		t.Errorf("after 50 calls: %s, %q", st.State, st.LastError)
	}
}
