package oauthtest

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"
	"golang.org/x/oauth2"

	_ "github.com/freecode/freecode/internal/racetest" // helper processes exit without the race runtime's pause
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestServerIsStrict shows that the server refuses what a sloppy client
// gets wrong, so that the sign-in tests that pass against it mean
// something: no PKCE, no resource, a verifier that does not match, a code
// used twice.
func TestServerIsStrict(t *testing.T) {
	as := New(t, Setup{PRM: "header", ASMeta: "oauth", PreID: "id", PreSecret: "pre-secret"},
		http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	noRedirect := &http.Client{
		Transport:     &http.Transport{},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	defer noRedirect.CloseIdleConnections()
	cfg := &oauth2.Config{
		ClientID: "id", ClientSecret: "pre-secret", RedirectURL: "http://127.0.0.1:1/callback",
		Endpoint: oauth2.Endpoint{AuthURL: as.Issuer + "/authorize", TokenURL: as.Issuer + "/token", AuthStyle: oauth2.AuthStyleInHeader},
	}
	resource := oauth2.SetAuthURLParam("resource", as.MCPURL)
	// authorize returns the code the server redirects back with, or "".
	authorize := func(opts ...oauth2.AuthCodeOption) string {
		resp, err := noRedirect.Get(cfg.AuthCodeURL("st", opts...))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		loc, _ := url.Parse(resp.Header.Get("Location"))
		if loc == nil {
			return ""
		}
		return loc.Query().Get("code")
	}
	verifier := oauth2.GenerateVerifier()
	if code := authorize(resource); code != "" {
		t.Errorf("an authorization request without PKCE got a code")
	}
	if code := authorize(oauth2.S256ChallengeOption(verifier)); code != "" {
		t.Errorf("an authorization request without a resource got a code")
	}
	ctx := context.WithValue(context.Background(), oauth2.HTTPClient, noRedirect)
	code := authorize(resource, oauth2.S256ChallengeOption(verifier))
	if _, err := cfg.Exchange(ctx, code, resource, oauth2.VerifierOption(oauth2.GenerateVerifier())); err == nil {
		t.Errorf("an exchange with the wrong PKCE verifier got a token")
	}
	code = authorize(resource, oauth2.S256ChallengeOption(verifier))
	tok, err := cfg.Exchange(ctx, code, resource, oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatalf("the right exchange: %v", err)
	}
	if _, err := cfg.Exchange(ctx, code, resource, oauth2.VerifierOption(verifier)); err == nil {
		t.Errorf("a code was exchanged twice")
	}
	if tok.AccessToken != as.LastAccessToken() {
		t.Errorf("LastAccessToken does not name the token issued")
	}
	var refused []string
	for _, e := range as.Events("") {
		if i := strings.Index(e, "refused: "); i >= 0 {
			refused = append(refused, e[i+len("refused: "):])
		}
	}
	want := []string{"no PKCE S256 challenge", "no resource parameter", "PKCE verifier does not match"}
	if diff := cmp.Diff(want, refused); diff != "" {
		t.Errorf("refusals (-want +got):\n%s", diff)
	}
}

// TestMCPRequestsBeforeTheAnswer shows that a request is in MCPRequests,
// with its status, by the time its client reads the answer's header: the
// handler here holds the answer's body back until the test has looked.
func TestMCPRequestsBeforeTheAnswer(t *testing.T) {
	release := make(chan struct{})
	as := New(t, Setup{PRM: "header", ASMeta: "oauth"}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusAccepted)
		w.(http.Flusher).Flush()
		<-release
	}))
	as.mu.Lock()
	as.access["access-test"] = &testGrant{expiry: time.Now().Add(time.Hour)}
	as.mu.Unlock()
	req, err := http.NewRequest(http.MethodPost, as.MCPURL, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer access-test")
	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	resp, err := client.Do(req)
	if err != nil {
		close(release)
		t.Fatal(err)
	}
	got := as.MCPRequests()
	close(release)
	resp.Body.Close()
	want := []MCPRequest{{Method: "tools/list", Bearer: "access-test", Status: http.StatusAccepted}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("MCPRequests before the body was read (-want +got):\n%s", diff)
	}
}

// TestRevocation shows what the revocation endpoint does (RFC 7009): only
// the client the token was issued to, authenticated as it registered, may
// revoke it; a revoked refresh token no longer refreshes; a token the
// server does not know is no error.
func TestRevocation(t *testing.T) {
	as := New(t, Setup{PRM: "header", ASMeta: "oauth", PreID: "id", PreSecret: "pre-secret"},
		http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	as.mu.Lock()
	as.clients["other"] = &testClient{id: "other", secret: "other-secret", method: "client_secret_basic"}
	as.refresh["refresh-test"] = &testGrant{client: "id", expiry: time.Now().Add(time.Hour)}
	as.mu.Unlock()
	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	revoke := func(id, secret, token string) int {
		t.Helper()
		form := url.Values{"token": {token}, "token_type_hint": {"refresh_token"}}
		req, err := http.NewRequest(http.MethodPost, as.Issuer+"/revoke", strings.NewReader(form.Encode()))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.SetBasicAuth(id, secret)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	got := []int{
		revoke("id", "wrong", "refresh-test"),
		revoke("other", "other-secret", "refresh-test"),
		revoke("id", "pre-secret", "refresh-test"),
		revoke("id", "pre-secret", "refresh-test"), // unknown now
	}
	if diff := cmp.Diff([]int{401, 400, 200, 200}, got); diff != "" {
		t.Errorf("revocation answers (-want +got):\n%s", diff)
	}
	want := []string{
		"revoke refused: wrong client secret",
		"revoke refused: a token of another client",
		"revoke refresh hint=refresh_token method=client_secret_basic",
		"revoke unknown hint=refresh_token method=client_secret_basic",
	}
	if diff := cmp.Diff(want, as.Events("revoke")); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	cfg := &oauth2.Config{ClientID: "id", ClientSecret: "pre-secret",
		Endpoint: oauth2.Endpoint{TokenURL: as.Issuer + "/token", AuthStyle: oauth2.AuthStyleInHeader}}
	ctx := context.WithValue(context.Background(), oauth2.HTTPClient, client)
	_, err := cfg.TokenSource(ctx, &oauth2.Token{RefreshToken: "refresh-test"}).Token()
	var re *oauth2.RetrieveError
	if !errors.As(err, &re) || re.ErrorCode != "invalid_grant" {
		t.Errorf("refreshing with the revoked refresh token: %v, want invalid_grant", err)
	}
	as.SetRevocationDown(true)
	if code := revoke("id", "pre-secret", "refresh-test"); code != http.StatusServiceUnavailable {
		t.Errorf("revocation down answered %d, want 503", code)
	}
}
