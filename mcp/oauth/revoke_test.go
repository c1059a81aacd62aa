package oauth_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/oauth2"

	"github.com/freecode/freecode/config"
	"github.com/freecode/freecode/internal/oauthtest"
	"github.com/freecode/freecode/mcp"
	"github.com/freecode/freecode/mcp/oauth"
)

// refreshAt asks the test server for a token with the refresh token of
// rec, as any client holding a copy of it could, and returns the error.
func (e *authEnv) refreshAt(rec *oauth.TokenRecord, secret string) error {
	e.t.Helper()
	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	cfg := &oauth2.Config{
		ClientID: rec.ClientID, ClientSecret: secret,
		Endpoint: oauth2.Endpoint{TokenURL: rec.TokenURL, AuthStyle: oauth2.AuthStyle(rec.AuthStyle)},
	}
	ctx := context.WithValue(context.Background(), oauth2.HTTPClient, client)
	_, err := cfg.TokenSource(ctx, &oauth2.Token{RefreshToken: rec.RefreshToken}).Token()
	return err
}

// mcpStatus returns the status the MCP server answers a request carrying
// the access token with.
func (e *authEnv) mcpStatus(access string) int {
	e.t.Helper()
	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	req, err := http.NewRequest(http.MethodPost, e.as.MCPURL, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+access)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := client.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func invalidGrant(err error) bool {
	var re *oauth2.RetrieveError
	return errors.As(err, &re) && re.ErrorCode == "invalid_grant"
}

// TestSignOutRevokes signs in with each kind of client and signs out: the
// authorization server revokes the refresh token and the access token,
// authenticated as the sign-in authenticates, and neither works any more.
func TestSignOutRevokes(t *testing.T) {
	tests := []struct {
		name       string
		setup      oauthtest.Setup
		oauth      *config.OAuth
		wantMethod string
		wantKept   bool // a registration to keep
	}{
		{"registered, client_secret_basic", oauthtest.Setup{PRM: "header", ASMeta: "oauth"}, nil, "client_secret_basic", true},
		{
			"registered, client_secret_post",
			oauthtest.Setup{PRM: "header", ASMeta: "oauth", AuthMethods: []string{"client_secret_post"}}, nil,
			"client_secret_post", true,
		},
		{"registered public client", oauthtest.Setup{PRM: "header", ASMeta: "oidc", AuthMethods: []string{"none"}}, nil, "none", true},
		{
			"configured client, its secret from the environment",
			oauthtest.Setup{PRM: "header", ASMeta: "oauth", PreID: "pre-id", PreSecret: "pre-secret-value"},
			&config.OAuth{ClientID: "pre-id", ClientSecret: "${env:PRE_SECRET}"},
			"client_secret_basic", false,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newAuthEnv(t, tc.setup)
			srv := e.server(tc.oauth)
			opts := e.options(nil)
			e.signIn(srv, opts)
			rec := e.stored(srv)
			lookup := func(name string) (string, bool) { return tc.setup.PreSecret, name == "PRE_SECRET" }
			res, err := mcp.SignOut(context.Background(), srv, lookup, opts.Auth)
			e.noteErr(res.RevokeErr)
			if err != nil || !res.Had || !res.Revoked || res.RevokeErr != nil {
				t.Fatalf("mcp.SignOut = %+v, %v; want had, revoked", res, err)
			}
			want := []string{
				"revoke refresh hint=refresh_token method=" + tc.wantMethod,
				"revoke access hint=access_token method=" + tc.wantMethod,
			}
			if diff := cmp.Diff(want, e.as.Events("revoke")); diff != "" {
				t.Errorf("revocations (-want +got):\n%s", diff)
			}
			if e.stored(srv) != nil {
				t.Errorf("the tokens are still stored")
			}
			if kept := e.keptClient(srv) != nil; kept != tc.wantKept {
				t.Errorf("a kept registration: %v, want %v", kept, tc.wantKept)
			}
			secret := rec.ClientSecret
			if tc.oauth != nil {
				secret = tc.setup.PreSecret
			}
			if err := e.refreshAt(rec, secret); !invalidGrant(err) {
				t.Errorf("refreshing with the revoked refresh token: %v, want invalid_grant", err)
			}
			if got := e.mcpStatus(rec.AccessToken); got != http.StatusUnauthorized {
				t.Errorf("the MCP server answered the revoked access token with %d, want 401", got)
			}
		})
	}
}

// TestSignOutNotRevoked: whatever keeps the authorization server from
// revoking the tokens, they are deleted here, and the result says why they
// were not revoked, without a token in it.
func TestSignOutNotRevoked(t *testing.T) {
	tests := []struct {
		name     string
		setup    oauthtest.Setup
		breakAS  func(*oauthtest.Server)
		wantErr  string
		noRevoke bool // errors.Is oauth.ErrNoRevocation
		wantKept bool
	}{
		{
			name: "no revocation endpoint", setup: oauthtest.Setup{PRM: "header", ASMeta: "oauth", NoRevocation: true},
			wantErr: "the authorization server offers no token revocation", noRevoke: true, wantKept: true,
		},
		{
			name: "no metadata", setup: oauthtest.Setup{PRM: "none", ASMeta: "none"},
			wantErr: "the authorization server offers no token revocation: the sign-in names no authorization server metadata", noRevoke: true, wantKept: true,
		},
		{
			name: "the revocation endpoint down", setup: oauthtest.Setup{PRM: "header", ASMeta: "oauth"},
			breakAS: func(as *oauthtest.Server) { as.SetRevocationDown(true) },
			wantErr: "the authorization server refused to revoke the refresh token (503)", wantKept: true,
		},
		{
			name: "the client rejected", setup: oauthtest.Setup{PRM: "header", ASMeta: "oauth"},
			breakAS: func(as *oauthtest.Server) { as.SetRejectClients(true) },
			wantErr: "the authorization server refused to revoke the refresh token (401 invalid_client): client rejected",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newAuthEnv(t, tc.setup)
			srv := e.server(nil)
			opts := e.options(nil)
			e.signIn(srv, opts)
			rec := e.stored(srv)
			if tc.breakAS != nil {
				tc.breakAS(e.as)
			}
			res, err := mcp.SignOut(context.Background(), srv, nil, opts.Auth)
			e.noteErr(res.RevokeErr)
			if err != nil || !res.Had || res.Revoked || res.RevokeErr == nil {
				t.Fatalf("mcp.SignOut = %+v, %v; want had, not revoked, and why", res, err)
			}
			if !strings.HasPrefix(res.RevokeErr.Error(), tc.wantErr) || errors.Is(res.RevokeErr, oauth.ErrNoRevocation) != tc.noRevoke {
				t.Errorf("RevokeErr %q (oauth.ErrNoRevocation: %v); want %q (%v)", res.RevokeErr, errors.Is(res.RevokeErr, oauth.ErrNoRevocation), tc.wantErr, tc.noRevoke)
			}
			if e.stored(srv) != nil {
				t.Errorf("the tokens are still stored")
			}
			if kept := e.keptClient(srv) != nil; kept != tc.wantKept {
				t.Errorf("a kept registration: %v, want %v", kept, tc.wantKept)
			}
			// Not revoked: the refresh token still works, as the result warns.
			e.as.SetRejectClients(false)
			if err := e.refreshAt(rec, rec.ClientSecret); err != nil {
				t.Errorf("refreshing with the refresh token afterwards: %v", err)
			}
		})
	}
}

// TestManagerLogoutReports: mcp.Manager.Logout (the sidecar's
// freecode/servers/logout, Workspace.Logout) logs whether the tokens were
// revoked, and a failure to revoke them is the status's lastError.
func TestManagerLogoutReports(t *testing.T) {
	tests := []struct {
		name          string
		setup         oauthtest.Setup
		down          bool
		wantLastError string
		wantLog       string
	}{
		{"revoked", oauthtest.Setup{PRM: "header", ASMeta: "oauth"}, false, "",
			`level=INFO msg="signed out: the authorization server revoked the tokens"`},
		{"no revocation endpoint", oauthtest.Setup{PRM: "header", ASMeta: "oauth", NoRevocation: true}, false, "",
			`level=INFO msg="signed out: the tokens were deleted; the authorization server cannot revoke them, so they stay valid there until they expire"`},
		{
			"the revocation endpoint down", oauthtest.Setup{PRM: "header", ASMeta: "oauth"}, true,
			"signed out, but the authorization server did not revoke the tokens: the authorization server refused to revoke the refresh token (503)",
			`level=WARN msg="signed out: the tokens were deleted, but revoking them failed, so they stay valid at the authorization server until they expire"`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newAuthEnv(t, tc.setup)
			srv := e.server(nil)
			m := e.manager(srv)
			ctx, cancel := context.WithTimeout(context.Background(), remoteHangGuard)
			defer cancel()
			if st, err := m.Login(ctx, srv.Name, e.browser.Open); err != nil || st.State != mcp.StateConnected {
				t.Fatalf("Login: %v, %v; want connected", st.State, e.noteErr(err))
			}
			e.as.SetRevocationDown(tc.down)
			st, err := m.Logout(ctx, srv.Name)
			if err != nil || st.State != mcp.StateStopped || !strings.HasPrefix(st.LastError, tc.wantLastError) || (tc.wantLastError == "") != (st.LastError == "") {
				t.Errorf("Logout: %v, %q, %v; want stopped, lastError %q", st.State, st.LastError, err, tc.wantLastError)
			}
			if e.stored(srv) != nil {
				t.Errorf("Logout left the tokens in the store")
			}
			e.mu.Lock()
			logs := e.logs.String()
			last := e.statuses[len(e.statuses)-1]
			e.mu.Unlock()
			if !strings.Contains(logs, tc.wantLog) || !strings.Contains(logs, "server="+srv.Name) {
				t.Errorf("the logs lack %s for server %s:\n%s", tc.wantLog, srv.Name, logs)
			}
			if last.State != mcp.StateStopped || last.LastError != st.LastError {
				t.Errorf("the last status emitted: %v, %q; want the one Logout returned", last.State, last.LastError)
			}
		})
	}
}
