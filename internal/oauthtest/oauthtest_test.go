package oauthtest

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"
	"golang.org/x/oauth2"
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
