package oauth_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/freecode/freecode/config"
	"github.com/freecode/freecode/internal/oauthtest"
	"github.com/freecode/freecode/internal/tokenstore"
	"github.com/freecode/freecode/mcp"
	"github.com/freecode/freecode/mcp/oauth"
)

// authEnv is one OAuth test: the servers, a token store of its own, a
// browser, and everything FreeCode wrote (logs, statuses, errors), which
// must never show a secret.
type authEnv struct {
	t       *testing.T
	setup   oauthtest.Setup
	sse     bool // the MCP server speaks legacy HTTP+SSE
	as      *oauthtest.Server
	store   *tokenstore.Store
	browser *oauthtest.Browser

	// changed is signalled at every status a Conn emits.
	changed chan struct{}

	mu       sync.Mutex
	logs     bytes.Buffer
	statuses []mcp.Status
	errs     []string
}

func newAuthEnv(t *testing.T, setup oauthtest.Setup) *authEnv {
	return newAuthEnvOver(t, setup, config.TransportHTTP)
}

// newAuthEnvOver is newAuthEnv with the MCP server speaking transport.
func newAuthEnvOver(t *testing.T, setup oauthtest.Setup, transport string) *authEnv {
	return newAuthEnvServing(t, setup, transport, goSDKHandler(t, transport))
}

// newAuthEnvServing is newAuthEnvOver with the MCP server h.
func newAuthEnvServing(t *testing.T, setup oauthtest.Setup, transport string, h http.Handler) *authEnv {
	e := &authEnv{
		t: t, setup: setup, sse: transport == config.TransportSSE,
		as:    oauthtest.New(t, setup, h),
		store: tokenstore.Open(t.TempDir(), nil), browser: oauthtest.NewBrowser(t),
		changed: make(chan struct{}, 1),
	}
	t.Cleanup(e.checkNoSecrets)
	return e
}

func (e *authEnv) Write(p []byte) (int, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.logs.Write(p)
}

// server returns the MCP server's entry.
func (e *authEnv) server(o *config.OAuth) config.Server {
	srv := remoteServer(e.as.MCPURL, config.TransportHTTP)
	if e.sse {
		srv.Transport = config.TransportSSE
	}
	srv.OAuth = o
	return srv
}

// options returns mcp.Conn options logging into e at debug level, with e's
// token store; openURL, if set, may ask for more access mid-session.
func (e *authEnv) options(openURL oauth.OpenURLFunc) *mcp.ConnOptions {
	return &mcp.ConnOptions{
		Logger:   slog.New(slog.NewTextHandler(e, &slog.HandlerOptions{Level: slog.LevelDebug})),
		OnStatus: e.noteStatus,
		Environ:  func() []string { return []string{"PRE_SECRET=" + e.setup.PreSecret} },
		Auth:     &oauth.Options{Tokens: e.store, OpenURL: openURL},
	}
}

func (e *authEnv) noteStatus(st mcp.Status) {
	e.mu.Lock()
	e.statuses = append(e.statuses, st)
	e.mu.Unlock()
	select {
	case e.changed <- struct{}{}:
	default:
	}
}

func (e *authEnv) noteErr(err error) error {
	if err != nil {
		e.mu.Lock()
		e.errs = append(e.errs, err.Error())
		e.mu.Unlock()
	}
	return err
}

// login signs in on a new mcp.Conn through the headless browser.
func (e *authEnv) login(srv config.Server, opts *mcp.ConnOptions) (*mcp.Conn, error) {
	c := mcp.NewConn(srv, opts)
	e.t.Cleanup(func() { c.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), remoteHangGuard)
	defer cancel()
	err := e.noteErr(c.Login(ctx, e.browser.Open))
	e.noteStatus(c.Status())
	return c, err
}

// start starts a new mcp.Conn, which may use stored tokens only.
func (e *authEnv) start(srv config.Server, opts *mcp.ConnOptions) (*mcp.Conn, error) {
	c := mcp.NewConn(srv, opts)
	e.t.Cleanup(func() { c.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), remoteHangGuard)
	defer cancel()
	err := e.noteErr(c.Start(ctx))
	e.noteStatus(c.Status())
	return c, err
}

// echo calls the echo tool.
func (e *authEnv) echo(c *mcp.Conn) error { return e.echoBy(c, nil) }

// echoBy calls the echo tool for asker.
func (e *authEnv) echoBy(c *mcp.Conn, asker mcp.Asker) error {
	ctx, cancel := context.WithTimeout(context.Background(), remoteHangGuard)
	defer cancel()
	res, err := c.CallTool(ctx, "echo", map[string]any{"text": "signed in"}, &mcp.CallOptions{ID: "call-1", Asker: asker})
	if err != nil {
		return e.noteErr(err)
	}
	if tc, ok := res.Content[0].(*mcpsdk.TextContent); !ok || tc.Text != "signed in" || res.IsError {
		return fmt.Errorf("echo answered %+v", res.Content[0])
	}
	return nil
}

// stored returns the stored record of srv, or nil.
func (e *authEnv) stored(srv config.Server) *oauth.TokenRecord {
	return storedAs[oauth.TokenRecord](e, oauth.SignInKey(srv))
}

// storedAs returns the entry of e's store under key, or nil.
func storedAs[T any](e *authEnv, key string) *T {
	e.t.Helper()
	raw, err := e.store.Get(context.Background(), key)
	if errors.Is(err, tokenstore.ErrNotFound) {
		return nil
	}
	if err != nil {
		e.t.Fatal(err)
	}
	var v T
	if err := json.Unmarshal(raw, &v); err != nil {
		e.t.Fatal(err)
	}
	return &v
}

// signIn signs in to srv on a mcp.Conn it then closes: the sign-in is stored.
func (e *authEnv) signIn(srv config.Server, opts *mcp.ConnOptions) {
	e.t.Helper()
	c, err := e.login(srv, opts)
	if err != nil {
		e.t.Fatalf("signing in: %v\nauthorization server: %q", err, e.as.Events(""))
	}
	c.Close()
}

// manager returns a mcp.Manager of e's options running srv, closed when the
// test ends.
func (e *authEnv) manager(srv config.Server) *mcp.Manager {
	connOpts := e.options(nil)
	m := mcp.NewManager(&mcp.ManagerOptions{ConnOptions: mcp.ConnOptions{Logger: connOpts.Logger, OnStatus: e.noteStatus, Auth: connOpts.Auth}})
	e.t.Cleanup(func() { m.Close() })
	m.Apply(context.Background(), []config.Server{srv})
	return m
}

// checkNoSecrets fails the test if a token, code or client secret the
// authorization server handed out shows in a log line, a status or an
// error.
func (e *authEnv) checkNoSecrets() {
	e.mu.Lock()
	defer e.mu.Unlock()
	status, _ := json.Marshal(e.statuses)
	texts := map[string]string{"logs": e.logs.String(), "statuses": string(status), "errors": strings.Join(e.errs, "\n")}
	secrets := e.as.Secrets()
	if os.Getenv("DUMPLOGS") != "" {
		e.t.Log(texts["logs"], texts["errors"])
	}
	if len(secrets) == 0 {
		return
	}
	for what, text := range texts {
		for _, s := range secrets {
			if strings.Contains(text, s) {
				e.t.Errorf("the %s show the secret %s…", what, s[:min(len(s), 12)])
			}
		}
	}
}

func TestOAuthDiscoveryAndRegistration(t *testing.T) {
	const cimdURL = "https://freecode.example/oauth/client.json"
	tests := []struct {
		name  string
		setup oauthtest.Setup
		oauth *config.OAuth
		// want is the client's token request as the server saw it, and
		// whether it registered.
		wantMethod   string
		wantRegister bool
		wantClient   string
		wantMeta     []string // metadata documents read
	}{
		{
			name: "PRM named by WWW-Authenticate, OAuth metadata, pre-registered client (basic)",
			setup: oauthtest.Setup{PRM: "header", ASMeta: "oauth", PreID: "pre-id", PreSecret: "pre-secret-value",
				ChallengeScopes: []string{"read"}},
			oauth:      &config.OAuth{ClientID: "pre-id", ClientSecret: "${env:PRE_SECRET}"},
			wantMethod: "client_secret_basic", wantClient: "pre-id",
			wantMeta: []string{"metadata /.well-known/oauth-authorization-server"},
		},
		{
			name:       "PRM at the path well-known, OIDC metadata of an issuer with a path, dynamic registration",
			setup:      oauthtest.Setup{PRM: "path", ASMeta: "oidc", ASPath: "/tenant1", ScopesSupported: []string{"read", "write"}},
			wantMethod: "client_secret_basic", wantRegister: true,
			wantMeta: []string{"metadata /.well-known/openid-configuration/tenant1"},
		},
		{
			name:       "PRM at the root well-known, OAuth metadata, Client ID Metadata Document",
			setup:      oauthtest.Setup{PRM: "root", ASMeta: "oauth", CIMD: true, AuthMethods: []string{"none"}},
			oauth:      &config.OAuth{ClientMetadataURL: cimdURL},
			wantMethod: "none", wantClient: cimdURL,
			wantMeta: []string{"metadata /.well-known/oauth-authorization-server"},
		},
		{
			name:       "a Client ID Metadata Document the server does not support: dynamic registration",
			setup:      oauthtest.Setup{PRM: "header", ASMeta: "oauth"},
			oauth:      &config.OAuth{ClientMetadataURL: cimdURL},
			wantMethod: "client_secret_basic", wantRegister: true,
			wantMeta: []string{"metadata /.well-known/oauth-authorization-server"},
		},
		{
			name:       "2025-03-26: no PRM, OAuth metadata on the server's origin",
			setup:      oauthtest.Setup{PRM: "none", ASMeta: "oauth", AuthMethods: []string{"client_secret_post"}},
			wantMethod: "client_secret_post", wantRegister: true,
			wantMeta: []string{"metadata /.well-known/oauth-authorization-server"},
		},
		{
			name:       "2025-03-26: no metadata at all, the default endpoints",
			setup:      oauthtest.Setup{PRM: "none", ASMeta: "none"},
			wantMethod: "client_secret_basic", wantRegister: true,
		},
		{
			name:       "pre-registered client, client_secret_post",
			setup:      oauthtest.Setup{PRM: "header", ASMeta: "oauth", PreID: "pre-id", PreSecret: "pre-secret-value", AuthMethods: []string{"client_secret_post"}},
			oauth:      &config.OAuth{ClientID: "pre-id", ClientSecret: "${env:PRE_SECRET}"},
			wantMethod: "client_secret_post", wantClient: "pre-id",
			wantMeta: []string{"metadata /.well-known/oauth-authorization-server"},
		},
		{
			name:       "pre-registered public client, no client authentication",
			setup:      oauthtest.Setup{PRM: "header", ASMeta: "oauth", PreID: "public-id", AuthMethods: []string{"none"}, NoDCR: true},
			oauth:      &config.OAuth{ClientID: "public-id"},
			wantMethod: "none", wantClient: "public-id",
			wantMeta: []string{"metadata /.well-known/oauth-authorization-server"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newAuthEnv(t, tc.setup)
			srv := e.server(tc.oauth)
			c, err := e.login(srv, e.options(nil))
			if err != nil {
				t.Fatalf("Login: %v\nauthorization server: %q", err, e.as.Events(""))
			}
			if st := c.Status(); st.State != mcp.StateConnected || st.ToolCount == 0 {
				t.Fatalf("after Login: %v with %d tools, want connected with tools", st.State, st.ToolCount)
			}
			if err := e.echo(c); err != nil {
				t.Fatalf("calling a tool: %v", err)
			}
			if n := e.browser.Opens(); n != 1 {
				t.Errorf("the browser was opened %d times, want 1", n)
			}
			wantResource := e.as.Resource()
			got := map[string]any{
				"metadata": e.as.Events("metadata"),
				"register": len(e.as.Events("register")) == 1,
				"token":    e.as.Events("token code"),
			}
			want := map[string]any{
				"metadata": tc.wantMeta,
				"register": tc.wantRegister,
				"token":    []string{fmt.Sprintf("token code method=%s pkce=ok resource=%s", tc.wantMethod, wantResource)},
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("what the authorization server saw (-want +got):\n%s", diff)
			}
			// A native application, its redirect a loopback one (OIDC
			// registration defaults to web, which may not use one; the
			// go-sdk infers native from the redirect URI).
			if tc.wantRegister && !slices.Equal(e.as.Events("register"), []string{"register grant_types=authorization_code,refresh_token application_type=native"}) {
				t.Errorf("registration: %q, want one of a native application asking for authorization_code and refresh_token", e.as.Events("register"))
			}
			rec := e.stored(srv)
			if rec == nil || rec.AccessToken != e.as.LastAccessToken() || rec.Resource != wantResource {
				t.Fatalf("stored sign-in %+v; want the last access token, for resource %s", rec, wantResource)
			}
			if tc.wantClient != "" && rec.ClientID != tc.wantClient {
				t.Errorf("client id %q, want %q", rec.ClientID, tc.wantClient)
			}
			if tc.oauth != nil && tc.oauth.ClientID != "" && rec.ClientSecret != "" {
				t.Errorf("the configured client secret was stored with the tokens")
			}

			// The next run needs no browser: the stored token serves.
			c.Close()
			c2, err := e.start(srv, e.options(nil))
			if err != nil {
				t.Fatalf("Start with the stored sign-in: %v", err)
			}
			if err := e.echo(c2); err != nil {
				t.Fatalf("calling a tool with the stored sign-in: %v", err)
			}
			if n, m := e.browser.Opens(), len(e.as.Events("authorize")); n != 1 || m != 1 {
				t.Errorf("after the restart: browser opened %d times, %d authorization requests; want 1 and 1", n, m)
			}
		})
	}
}

func TestOAuthNeedsSignInWithoutToken(t *testing.T) {
	e := newAuthEnv(t, oauthtest.Setup{PRM: "header", ASMeta: "oauth"})
	c, err := e.start(e.server(nil), e.options(e.browser.Open))
	if !errors.Is(err, oauth.ErrNeedsAuth) || errors.Is(err, mcp.ErrRetrying) {
		t.Fatalf("Start: %v; want oauth.ErrNeedsAuth, not retrying", err)
	}
	st := c.Status()
	want := "sign-in required: the server asks for an OAuth sign-in and FreeCode holds no token for it"
	if st.State != mcp.StateNeedsAuth || !strings.Contains(st.LastError, want) {
		t.Errorf("status: %v, %q; want needsAuth, %q", st.State, st.LastError, want)
	}
	// The state as the protocol spells it (server/wire sends String's).
	if st.State.String() != "needsAuth" {
		t.Errorf("status state %q, want needsAuth", st.State)
	}
	// Nobody was asked, and the authorization server never heard of it.
	if n, events := e.browser.Opens(), e.as.Events(""); n != 0 || len(events) != 0 {
		t.Errorf("a connect that may not ask opened the browser %d times; the authorization server saw %q", n, events)
	}
	// One request, refused; nothing retries it.
	if got, want := e.as.MCPRequests(), 1; len(got) != want || got[0].Status != 401 {
		t.Errorf("the MCP server answered %+v, want one 401", got)
	}
}

func TestOAuthDeniedConsent(t *testing.T) {
	e := newAuthEnv(t, oauthtest.Setup{PRM: "header", ASMeta: "oauth"})
	e.as.SetDeny(true)
	srv := e.server(nil)
	c, err := e.login(srv, e.options(nil))
	if !errors.Is(err, oauth.ErrNeedsAuth) || !strings.Contains(err.Error(), "access was denied at the authorization server (access_denied): The user said <no>.") {
		t.Fatalf("Login with consent denied: %v; want oauth.ErrNeedsAuth saying access was denied", err)
	}
	if st := c.Status(); st.State != mcp.StateNeedsAuth || !strings.Contains(st.LastError, "access_denied") {
		t.Errorf("status %v, %q; want needsAuth saying why", st.State, st.LastError)
	}
	if rec := e.stored(srv); rec != nil {
		t.Errorf("a denied sign-in stored %+v", rec)
	}
	if pages := e.browser.Pages(); len(pages) != 1 || !strings.Contains(pages[0], "Sign-in did not complete") || !strings.Contains(pages[0], "&lt;no&gt;") {
		t.Errorf("the browser's page: %q; want the failure, the server's text escaped", pages)
	}
}

// A code the browser brings back is no sign-in yet: the page it lands on
// waits for the code's exchange and says it failed, with the token
// endpoint's reason escaped, when the exchange does (invalid_target, as a
// server behind a gateway answers a resource it does not know); it says
// "signed in" only once a token was had.
func TestOAuthExchangeFailedPage(t *testing.T) {
	e := newAuthEnv(t, oauthtest.Setup{PRM: "header", ASMeta: "oauth"})
	e.as.SetCodeError("invalid_target", "the resource <mcp> is not served here")
	srv := e.server(nil)
	c, err := e.login(srv, e.options(nil))
	if !errors.Is(err, oauth.ErrNeedsAuth) || !strings.Contains(err.Error(), "invalid_target") {
		t.Fatalf("Login with the exchange refused: %v; want oauth.ErrNeedsAuth saying invalid_target", err)
	}
	if st := c.Status(); st.State != mcp.StateNeedsAuth || !strings.Contains(st.LastError, "invalid_target") {
		t.Errorf("status %v, %q; want needsAuth saying why", st.State, st.LastError)
	}
	pages := e.browser.Pages()
	if len(pages) != 1 {
		t.Fatalf("the browser ended on %d pages, want 1: %q", len(pages), pages)
	}
	for _, want := range []string{"<h1>Sign-in failed</h1>", "Sign-in failed: ", "invalid_target", "the resource &lt;mcp&gt; is not served here"} {
		if !strings.Contains(pages[0], want) {
			t.Errorf("the browser's page lacks %q:\n%s", want, pages[0])
		}
	}
	if strings.Contains(pages[0], "signed in") || strings.Contains(pages[0], "Signed in") {
		t.Errorf("the browser's page says signed in after the exchange failed:\n%s", pages[0])
	}

	e.as.SetCodeError("", "")
	if _, err := e.login(srv, e.options(nil)); err != nil {
		t.Fatalf("Login once the exchange works: %v", err)
	}
	if pages := e.browser.Pages(); len(pages) != 2 || !strings.Contains(pages[1], "<h1>Signed in</h1>") {
		t.Errorf("the browser's pages: %q; want the second to say signed in", pages)
	}
}

func TestOAuthRefreshBeforeExpiry(t *testing.T) {
	// Tokens live 30 s, under refreshMargin: each is refreshed before it
	// is sent again, with no clock to wait for.
	e := newAuthEnv(t, oauthtest.Setup{PRM: "header", ASMeta: "oauth", AccessTTL: 30e9})
	srv := e.server(nil)
	c, err := e.login(srv, e.options(nil))
	if err != nil {
		t.Fatal(err)
	}
	if err := e.echo(c); err != nil {
		t.Fatal(err)
	}
	for _, r := range e.as.Events("refresh") {
		if want := "refresh method=client_secret_basic resource=" + e.as.MCPURL; r != want {
			t.Errorf("refresh %q, want %q: a refresh must name the resource", r, want)
		}
	}
	reqs := e.as.MCPRequests()
	e.checkEachRefreshed(reqs, "")
	call := reqs[len(reqs)-1]
	if call.Method != "tools/call" || call.Status != 200 || call.Bearer == "" {
		t.Fatalf("the last request: %s, status %d, with a token: %v; want tools/call, 200, with one", call.Method, call.Status, call.Bearer != "")
	}
	// Nothing went out after the call, which fetched its token last: the
	// token it carried is the one stored.
	if rec := e.stored(srv); rec == nil || rec.AccessToken != call.Bearer {
		t.Errorf("the token of the call was not stored")
	}

	// A new run refreshes the stored token before its first use.
	c.Close()
	stored := e.stored(srv)
	from := len(e.as.MCPRequests())
	c2, err := e.start(srv, e.options(nil))
	if err != nil {
		t.Fatalf("Start with a stored token about to expire: %v", err)
	}
	if err := e.echo(c2); err != nil {
		t.Fatal(err)
	}
	e.checkEachRefreshed(e.as.MCPRequests()[from:], stored.AccessToken)
}

// checkEachRefreshed fails the test unless every request of reqs that
// carried a token carried one issued for a refresh token, which no other
// request carried, and none carried stale.
func (e *authEnv) checkEachRefreshed(reqs []oauthtest.MCPRequest, stale string) {
	e.t.Helper()
	seen := map[string]bool{}
	for i, r := range reqs {
		switch {
		case r.Bearer == "":
			continue
		case r.Bearer == stale:
			e.t.Errorf("request %d (%s) carried the stored token, not refreshed", i, r.Method)
		case seen[r.Bearer]:
			e.t.Errorf("request %d (%s) carried a token an earlier request carried, not refreshed", i, r.Method)
		case !e.as.Refreshed(r.Bearer):
			e.t.Errorf("request %d (%s) carried a token not issued for a refresh token", i, r.Method)
		}
		seen[r.Bearer] = true
	}
	if len(seen) == 0 {
		e.t.Errorf("none of %d requests carried a token", len(reqs))
	}
}

func TestOAuthExpiredRefreshToken(t *testing.T) {
	e := newAuthEnv(t, oauthtest.Setup{PRM: "header", ASMeta: "oauth", AccessTTL: 30e9})
	srv := e.server(nil)
	c, err := e.login(srv, e.options(nil))
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	e.as.RevokeRefreshTokens()
	e.as.ExpireAccessTokens()
	c2, err := e.start(srv, e.options(e.browser.Open))
	if !errors.Is(err, oauth.ErrNeedsAuth) {
		t.Fatalf("Start with an expired refresh token: %v, want oauth.ErrNeedsAuth", err)
	}
	want := "sign-in required: the stored sign-in expired and the authorization server refused to renew it"
	if st := c2.Status(); st.State != mcp.StateNeedsAuth || !strings.Contains(st.LastError, want) {
		t.Errorf("status %v, %q; want needsAuth, %q", st.State, st.LastError, want)
	}
	if n := e.browser.Opens(); n != 1 {
		t.Errorf("the browser was opened %d times; a start must not open it", n-1)
	}
}

func TestOAuthExpiredRefreshTokenMidSession(t *testing.T) {
	e := newAuthEnv(t, oauthtest.Setup{PRM: "header", ASMeta: "oauth", AccessTTL: 30e9})
	srv := e.server(nil)
	opts := e.options(nil)
	opts.NoRetry = true
	c, err := e.login(srv, opts)
	if err != nil {
		t.Fatal(err)
	}
	e.as.RevokeRefreshTokens()
	e.as.ExpireAccessTokens()
	if err := e.echo(c); err == nil {
		t.Fatal("a call with a token that could not be refreshed succeeded")
	}
	ctx, cancel := context.WithTimeout(context.Background(), remoteHangGuard)
	defer cancel()
	for st := c.Status(); st.State != mcp.StateNeedsAuth; st = c.Status() {
		select {
		case <-e.changed:
		case <-ctx.Done():
			t.Fatalf("state %v (%s), want needsAuth", st.State, st.LastError)
		}
	}
	if st := c.Status(); !strings.Contains(st.LastError, "sign-in required") {
		t.Errorf("lastError %q; want it to say a sign-in is required", st.LastError)
	}
}

func TestOAuthSignedOutElsewhere(t *testing.T) {
	// Tokens live 30 s: the next call refreshes, and finds the sign-in
	// deleted by another process (freecode mcp logout beside the sidecar).
	e := newAuthEnv(t, oauthtest.Setup{PRM: "header", ASMeta: "oauth", AccessTTL: 30e9})
	srv := e.server(nil)
	opts := e.options(nil)
	opts.NoRetry = true
	c, err := e.login(srv, opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if had, err := oauth.DeleteTokens(ctx, srv, opts.Auth); !had || err != nil {
		t.Fatalf("oauth.DeleteTokens = %v, %v; want true, nil", had, err)
	}
	refreshes := len(e.as.Events("refresh"))
	e.as.ExpireAccessTokens()
	if err := e.echo(c); err == nil || !strings.Contains(err.Error(), "sign-in required: "+oauth.SignedOutReason) {
		t.Errorf("a call after signing out elsewhere: %v; want %q", err, oauth.SignedOutReason)
	}
	if n := len(e.as.Events("refresh")); n != refreshes {
		t.Errorf("%d refreshes after the sign-out", n-refreshes)
	}
	if rec := e.stored(srv); rec != nil {
		t.Errorf("the signed-out session stored its tokens again")
	}
	if _, err := oauth.TokenLocation(ctx, srv, opts.Auth); !errors.Is(err, tokenstore.ErrNotFound) {
		t.Errorf("oauth.TokenLocation after sign-out: %v, want ErrNotFound", err)
	}
}

func TestOAuthStepUp(t *testing.T) {
	setup := oauthtest.Setup{PRM: "header", ASMeta: "oauth", ChallengeScopes: []string{"read"}, WriteScope: "write"}
	t.Run("someone to ask", func(t *testing.T) {
		e := newAuthEnv(t, setup)
		c, err := e.login(e.server(nil), e.options(e.browser.Open))
		if err != nil {
			t.Fatal(err)
		}
		if err := e.echo(c); err != nil {
			t.Fatalf("a call needing more access: %v", err)
		}
		var scopes []string
		for _, ev := range e.as.Events("authorize") {
			_, s, _ := strings.Cut(ev, "scope=")
			s, _, _ = strings.Cut(s, " resource=")
			words := strings.Fields(strings.Trim(s, `"`))
			slices.Sort(words)
			scopes = append(scopes, strings.Join(words, " "))
		}
		if diff := cmp.Diff([]string{"read", "read write"}, scopes); diff != "" {
			t.Errorf("scopes asked (-want +got):\n%s", diff)
		}
	})
	// The call's Asker is asked, not the Conn's opener; one that cannot
	// be asked leaves it to that opener.
	t.Run("the call's Asker", func(t *testing.T) {
		e := newAuthEnv(t, setup)
		var mu sync.Mutex
		var opened []string
		opener := func(who string) oauth.OpenURLFunc {
			return func(ctx context.Context, u string) error {
				mu.Lock()
				opened = append(opened, who)
				mu.Unlock()
				return e.browser.Open(ctx, u)
			}
		}
		c, err := e.login(e.server(nil), e.options(opener("the Conn's")))
		if err != nil {
			t.Fatal(err)
		}
		if err := e.echoBy(c, &stepUpAsker{open: opener("the call's Asker")}); err != nil {
			t.Fatalf("a call needing more access: %v", err)
		}
		if want := []string{"the call's Asker"}; !slices.Equal(opened, want) {
			t.Errorf("the sign-in pages were opened by %q, want %q", opened, want)
		}
	})
	t.Run("nobody to ask", func(t *testing.T) {
		e := newAuthEnv(t, setup)
		opts := e.options(nil)
		opts.NoRetry = true
		c, err := e.login(e.server(nil), opts)
		if err != nil {
			t.Fatal(err)
		}
		err = e.echoBy(c, &stepUpAsker{}) // an Asker that cannot show a page
		if err == nil || !strings.Contains(err.Error(), "insufficient_scope") {
			t.Fatalf("a call needing more access, with nobody to ask: %v", err)
		}
		// The server refused it before running it: that is no lost
		// connection (which may have run it), and it says what it asks for.
		if !errors.Is(err, oauth.ErrNeedsAuth) || errors.Is(err, mcp.ErrConnectionLost) || !strings.Contains(err.Error(), `scope "read write"`) {
			t.Errorf("the error %q; want oauth.ErrNeedsAuth, not mcp.ErrConnectionLost, naming the scope asked for", err)
		}
		c.Close()
		if n := len(e.as.Events("authorize")); n != 1 {
			t.Errorf("%d authorization requests, want 1", n)
		}
	})
	t.Run("bounded", func(t *testing.T) {
		never := setup
		never.NeverGrant = "write"
		e := newAuthEnv(t, never)
		c, err := e.login(e.server(nil), e.options(e.browser.Open))
		if err != nil {
			t.Fatal(err)
		}
		for i := range 3 {
			err := e.echo(c)
			if err == nil {
				t.Fatal("a call succeeded without the scope it needs")
			}
			// Refused, the sign-in for it notwithstanding: the user must act.
			if !errors.Is(err, oauth.ErrNeedsAuth) {
				t.Errorf("call %d: %v; want oauth.ErrNeedsAuth", i+1, err)
			}
		}
		if n := len(e.as.Events("authorize")); n > 1+oauth.MaxStepUps {
			t.Errorf("%d authorization requests, want at most %d", n, 1+oauth.MaxStepUps)
		}
	})
}

// stepUpAsker is the Asker of a call that may sign in for more access
// through open (nil: it cannot), and answers nothing else.
type stepUpAsker struct{ open oauth.OpenURLFunc }

func (*stepUpAsker) Elicit(context.Context, string, string, *mcpsdk.ElicitParams) (*mcpsdk.ElicitResult, error) {
	return nil, nil
}

func (*stepUpAsker) Sample(context.Context, string, string, *mcpsdk.CreateMessageParams) (*mcpsdk.CreateMessageResult, error) {
	return nil, errors.New("no sampling here")
}

func (a *stepUpAsker) SignInOpener(string) func(context.Context, string) error {
	if a.open == nil {
		return nil
	}
	return a.open
}

func TestOAuthLegacySSE(t *testing.T) {
	e := newAuthEnvOver(t, oauthtest.Setup{PRM: "header", ASMeta: "oauth"}, config.TransportSSE)
	srv := e.server(nil)
	c, err := e.login(srv, e.options(nil))
	if err != nil {
		t.Fatalf("Login over legacy SSE: %v", err)
	}
	if err := e.echo(c); err != nil {
		t.Fatal(err)
	}
	c.Close()
	c2, err := e.start(srv, e.options(nil))
	if err != nil {
		t.Fatalf("Start over legacy SSE with the stored sign-in: %v", err)
	}
	if err := e.echo(c2); err != nil {
		t.Fatal(err)
	}
}

func TestManagerLoginLogout(t *testing.T) {
	e := newAuthEnv(t, oauthtest.Setup{PRM: "header", ASMeta: "oauth"})
	srv := e.server(nil)
	m := e.manager(srv)
	ctx, cancel := context.WithTimeout(context.Background(), remoteHangGuard)
	defer cancel()
	st, err := m.Start(ctx, srv.Name)
	if !errors.Is(err, oauth.ErrNeedsAuth) || st.State != mcp.StateNeedsAuth {
		t.Fatalf("Start before signing in: %v, %v; want needsAuth", st.State, err)
	}
	st, err = m.Login(ctx, srv.Name, e.browser.Open)
	if err != nil || st.State != mcp.StateConnected {
		t.Fatalf("Login: %v, %v; want connected", st.State, e.noteErr(err))
	}
	st, err = m.Logout(ctx, srv.Name)
	if err != nil || st.State != mcp.StateStopped {
		t.Fatalf("Logout: %v, %v; want stopped", st.State, err)
	}
	if rec := e.stored(srv); rec != nil {
		t.Errorf("Logout left the tokens in the store")
	}
	if st, err := m.Start(ctx, srv.Name); !errors.Is(err, oauth.ErrNeedsAuth) {
		t.Errorf("Start after Logout: %v, %v; want needsAuth", st.State, err)
	}
}
