package mcp

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/freecode/freecode/config"
)

// authSetup describes a protected MCP server and its authorization server,
// for the OAuth tests: each discovery variant of the MCP authorization
// spec is a combination of these.
type authSetup struct {
	// prm is where the protected resource metadata is: "header" (at the
	// path-based well-known URL, which the 401's WWW-Authenticate names),
	// "path" (there, not named), "root" (at the root well-known URL) or
	// "none" (a 2025-03-26 server: none, the origin is the authorization
	// server).
	prm string
	// asMeta is the authorization server's metadata: "oauth" (RFC 8414),
	// "oidc" (OpenID discovery) or "none" (the 2025-03-26 default
	// endpoints /authorize, /token, /register on the origin).
	asMeta string
	// asPath is the path of the issuer ("" for the origin).
	asPath string
	// authMethods are the token endpoint's auth methods
	// (default client_secret_basic).
	authMethods []string
	cimd        bool // accepts Client ID Metadata Document URLs as client ids
	noDCR       bool // offers no registration endpoint
	// preID and preSecret are a client registered beforehand.
	preID, preSecret string
	// challengeScopes are the scopes the 401 names and every token needs.
	challengeScopes []string
	// scopesSupported is the resource's scopes_supported.
	scopesSupported []string
	// writeScope, if set, is needed on top for tools/call: a token
	// without it gets 403 insufficient_scope.
	writeScope string
	// neverGrant is a scope the authorization server never grants.
	neverGrant string
	accessTTL  time.Duration // default an hour
	sse        bool          // the MCP server speaks legacy HTTP+SSE
}

// testAuthServer is a small OAuth 2.1 authorization server built on
// net/http, strict where a client can go wrong: PKCE S256 verified, the
// resource parameter required, redirect URIs and client authentication
// checked, codes single-use, refresh tokens rotated.
type testAuthServer struct {
	t      *testing.T
	setup  authSetup
	base   string // the origin it is served on
	issuer string
	mcpURL string // the MCP endpoint

	// mu guards the fields below.
	mu       sync.Mutex
	deny     bool // the user denies consent
	clients  map[string]*testClient
	codes    map[string]*testCode
	access   map[string]*testGrant
	refresh  map[string]*testGrant
	events   []string // what happened, in order, for assertions
	issued   []string // every secret handed out: tokens, codes, client secrets
	bearers  []string // the bearer token of each MCP request, "" for none
	statuses []int    // the status of each MCP request
}

type testClient struct {
	id, secret, method string
	redirectURIs       []string // empty: any loopback callback
}

type testCode struct {
	client, redirectURI, challenge, resource string
	scopes                                   []string
}

type testGrant struct {
	client, resource string
	scopes           []string
	expiry           time.Time
}

// newAuthEnvServers starts the authorization server and the MCP server of
// setup and returns the authorization server; the MCP endpoint is its
// mcpURL.
func newAuthEnvServers(t *testing.T, setup authSetup) *testAuthServer {
	if setup.authMethods == nil {
		setup.authMethods = []string{"client_secret_basic"}
	}
	if setup.accessTTL == 0 {
		setup.accessTTL = time.Hour
	}
	as := &testAuthServer{t: t, setup: setup, clients: map[string]*testClient{}, codes: map[string]*testCode{},
		access: map[string]*testGrant{}, refresh: map[string]*testGrant{}}
	if setup.preID != "" {
		method := setup.authMethods[0]
		as.clients[setup.preID] = &testClient{id: setup.preID, secret: setup.preSecret, method: method}
		if setup.preSecret != "" {
			as.issued = append(as.issued, setup.preSecret)
		}
	}

	mcpMux := http.NewServeMux()
	mcpSrv := httptest.NewServer(mcpMux)
	t.Cleanup(mcpSrv.Close)
	as.mcpURL = mcpSrv.URL + "/mcp"

	asMux := mcpMux
	as.base = mcpSrv.URL
	if setup.prm != "none" {
		// The authorization server lives elsewhere, as it usually does.
		asMux = http.NewServeMux()
		asSrv := httptest.NewServer(asMux)
		t.Cleanup(asSrv.Close)
		as.base = asSrv.URL
	}
	as.issuer = as.base + setup.asPath
	as.mountAS(asMux)

	resource := as.mcpURL
	switch setup.prm {
	case "header", "path":
		mcpMux.Handle("/.well-known/oauth-protected-resource/mcp", as.prmHandler(resource))
	case "root":
		resource = mcpSrv.URL
		mcpMux.Handle("/.well-known/oauth-protected-resource", as.prmHandler(resource))
	}
	opts := &auth.RequireBearerTokenOptions{Scopes: setup.challengeScopes}
	if setup.prm == "header" {
		opts.ResourceMetadataURL = mcpSrv.URL + "/.well-known/oauth-protected-resource/mcp"
	}
	transport := config.TransportHTTP
	if setup.sse {
		transport = config.TransportSSE
	}
	inner := goSDKHandler(t, transport)
	protected := auth.RequireBearerToken(as.verify, opts)(as.stepUp(inner, opts.ResourceMetadataURL))
	mcpMux.Handle("/mcp", as.recordMCP(protected))
	return as
}

// recordMCP notes each MCP request's bearer token and answer.
func (as *testAuthServer) recordMCP(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		h.ServeHTTP(rec, r)
		as.mu.Lock()
		as.bearers = append(as.bearers, bearerToken(r))
		as.statuses = append(as.statuses, rec.status)
		as.mu.Unlock()
	})
}

type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(code int) {
	r.status = code
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// stepUp answers a tools/call whose token lacks writeScope with 403
// insufficient_scope, naming the scopes needed.
func (as *testAuthServer) stepUp(next http.Handler, metadataURL string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if as.setup.writeScope == "" || r.Method != http.MethodPost {
			next.ServeHTTP(w, r)
			return
		}
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(strings.NewReader(string(body)))
		var msg struct{ Method string }
		_ = json.Unmarshal(body, &msg)
		info := auth.TokenInfoFromContext(r.Context())
		if msg.Method != "tools/call" || info == nil || slices.Contains(info.Scopes, as.setup.writeScope) {
			next.ServeHTTP(w, r)
			return
		}
		need := append(slices.Clone(as.setup.challengeScopes), as.setup.writeScope)
		params := fmt.Sprintf(`Bearer error="insufficient_scope", scope=%q`, strings.Join(need, " "))
		if metadataURL != "" {
			params += fmt.Sprintf(", resource_metadata=%q", metadataURL)
		}
		w.Header().Set("WWW-Authenticate", params)
		http.Error(w, "insufficient scope", http.StatusForbidden)
	})
}

// verify is the MCP server's token check.
func (as *testAuthServer) verify(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
	as.mu.Lock()
	defer as.mu.Unlock()
	g, ok := as.access[token]
	if !ok {
		return nil, auth.ErrInvalidToken
	}
	return &auth.TokenInfo{Scopes: g.scopes, Expiration: g.expiry}, nil
}

func (as *testAuthServer) prmHandler(resource string) http.Handler {
	return auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
		Resource:             resource,
		AuthorizationServers: []string{as.issuer},
		ScopesSupported:      as.setup.scopesSupported,
	})
}

func (as *testAuthServer) mountAS(mux *http.ServeMux) {
	endpoint := func(name string) string { return as.issuer + "/" + name }
	meta := map[string]any{
		"issuer":                                as.issuer,
		"authorization_endpoint":                endpoint("authorize"),
		"token_endpoint":                        endpoint("token"),
		"response_types_supported":              []string{"code"},
		"grant_types_supported":                 []string{"authorization_code", "refresh_token"},
		"token_endpoint_auth_methods_supported": as.setup.authMethods,
		"code_challenge_methods_supported":      []string{"S256"},
	}
	if !as.setup.noDCR {
		meta["registration_endpoint"] = endpoint("register")
	}
	if as.setup.cimd {
		meta["client_id_metadata_document_supported"] = true
	}
	serveMeta := func(w http.ResponseWriter, r *http.Request) {
		as.note("metadata " + r.URL.Path)
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(meta)
	}
	switch as.setup.asMeta {
	case "oauth":
		mux.HandleFunc("GET /.well-known/oauth-authorization-server"+as.setup.asPath, serveMeta)
	case "oidc":
		mux.HandleFunc("GET /.well-known/openid-configuration"+as.setup.asPath, serveMeta)
	}
	mux.HandleFunc("GET "+as.setup.asPath+"/authorize", as.authorize)
	mux.HandleFunc("POST "+as.setup.asPath+"/token", as.token)
	if !as.setup.noDCR {
		mux.HandleFunc("POST "+as.setup.asPath+"/register", as.register)
	}
}

func (as *testAuthServer) note(event string) {
	as.mu.Lock()
	as.events = append(as.events, event)
	as.mu.Unlock()
}

// secret returns a new random secret with prefix, and remembers it.
func (as *testAuthServer) secret(prefix string) string {
	s := prefix + "-" + rand.Text()
	as.issued = append(as.issued, s)
	return s
}

func (as *testAuthServer) register(w http.ResponseWriter, r *http.Request) {
	var md oauthex.ClientRegistrationMetadata
	if err := json.NewDecoder(r.Body).Decode(&md); err != nil || len(md.RedirectURIs) == 0 {
		http.Error(w, `{"error":"invalid_client_metadata"}`, http.StatusBadRequest)
		return
	}
	as.mu.Lock()
	method := md.TokenEndpointAuthMethod
	if method == "" || !slices.Contains(as.setup.authMethods, method) {
		method = as.setup.authMethods[0]
	}
	// A client id is public; its secret is not.
	c := &testClient{id: "client-" + rand.Text(), method: method, redirectURIs: md.RedirectURIs}
	if method != "none" {
		c.secret = as.secret("client-secret")
	}
	as.clients[c.id] = c
	as.events = append(as.events, "register grant_types="+strings.Join(md.GrantTypes, ","))
	as.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusCreated)
	json.NewEncoder(w).Encode(map[string]any{
		"client_id": c.id, "client_secret": c.secret, "token_endpoint_auth_method": c.method,
		"redirect_uris": c.redirectURIs,
	})
}

func (as *testAuthServer) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	fail := func(format string, args ...any) {
		msg := fmt.Sprintf(format, args...)
		as.note("authorize refused: " + msg)
		http.Error(w, msg, http.StatusBadRequest)
	}
	clientID, redirect := q.Get("client_id"), q.Get("redirect_uri")
	as.mu.Lock()
	c, known := as.clients[clientID]
	deny := as.deny
	as.mu.Unlock()
	if !known && as.setup.cimd && strings.HasPrefix(clientID, "https://") {
		c, known = &testClient{id: clientID, method: "none"}, true
		as.mu.Lock()
		as.clients[clientID] = c
		as.mu.Unlock()
	}
	ru, err := url.Parse(redirect)
	switch {
	case !known:
		fail("unknown client %q", clientID)
		return
	case q.Get("response_type") != "code":
		fail("response_type %q", q.Get("response_type"))
		return
	case err != nil || ru.Scheme != "http" || ru.Hostname() != "127.0.0.1" || ru.Path != "/callback":
		fail("redirect_uri %q is not a loopback callback", redirect)
		return
	case len(c.redirectURIs) > 0 && !slices.Contains(c.redirectURIs, redirect):
		fail("redirect_uri %q was not registered", redirect)
		return
	case q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "":
		fail("no PKCE S256 challenge")
		return
	case q.Get("resource") == "":
		fail("no resource parameter")
		return
	}
	scopes := strings.Fields(q.Get("scope"))
	as.note(fmt.Sprintf("authorize client=%s scope=%q resource=%s", clientID, q.Get("scope"), q.Get("resource")))
	back := ru.Query()
	back.Set("state", q.Get("state"))
	if deny {
		back.Set("error", "access_denied")
		back.Set("error_description", "The user said <no>.")
	} else {
		as.mu.Lock()
		code := as.secret("code")
		as.codes[code] = &testCode{client: clientID, redirectURI: redirect, challenge: q.Get("code_challenge"), resource: q.Get("resource"), scopes: scopes}
		as.mu.Unlock()
		back.Set("code", code)
	}
	ru.RawQuery = back.Encode()
	http.Redirect(w, r, ru.String(), http.StatusFound)
}

// clientAuth returns the client the token request authenticated as, and
// how, or an error message.
func (as *testAuthServer) clientAuth(r *http.Request) (*testClient, string, string) {
	id, secret, basic := r.BasicAuth()
	method := "client_secret_basic"
	if basic {
		id, _ = url.QueryUnescape(id)
		secret, _ = url.QueryUnescape(secret)
	} else {
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
		method = "client_secret_post"
		if secret == "" {
			method = "none"
		}
	}
	as.mu.Lock()
	c, ok := as.clients[id]
	as.mu.Unlock()
	switch {
	case !ok:
		return nil, "", "unknown client"
	case c.method != method:
		return nil, "", fmt.Sprintf("client registered for %s authenticated with %s", c.method, method)
	case c.secret != secret:
		return nil, "", "wrong client secret"
	}
	return c, method, ""
}

func (as *testAuthServer) token(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		tokenError(w, "invalid_request", "bad form")
		return
	}
	c, method, problem := as.clientAuth(r)
	if problem != "" {
		as.note("token refused: " + problem)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		json.NewEncoder(w).Encode(map[string]string{"error": "invalid_client", "error_description": problem})
		return
	}
	f := r.PostForm
	var g testGrant
	as.mu.Lock()
	defer as.mu.Unlock()
	switch f.Get("grant_type") {
	case "authorization_code":
		code, ok := as.codes[f.Get("code")]
		delete(as.codes, f.Get("code")) // single use
		sum := sha256.Sum256([]byte(f.Get("code_verifier")))
		switch {
		case !ok || code.client != c.id:
			tokenError(w, "invalid_grant", "unknown code")
			return
		case code.redirectURI != f.Get("redirect_uri"):
			tokenError(w, "invalid_grant", "redirect_uri differs")
			return
		case base64.RawURLEncoding.EncodeToString(sum[:]) != code.challenge:
			as.events = append(as.events, "token refused: PKCE verifier does not match")
			tokenError(w, "invalid_grant", "PKCE verification failed")
			return
		case f.Get("resource") != code.resource:
			tokenError(w, "invalid_target", "resource differs")
			return
		}
		as.events = append(as.events, fmt.Sprintf("token code method=%s pkce=ok resource=%s", method, f.Get("resource")))
		g = testGrant{client: c.id, resource: code.resource, scopes: code.scopes}
	case "refresh_token":
		old, ok := as.refresh[f.Get("refresh_token")]
		delete(as.refresh, f.Get("refresh_token")) // rotated
		if !ok || old.client != c.id {
			as.events = append(as.events, "refresh refused")
			tokenError(w, "invalid_grant", "unknown refresh token")
			return
		}
		as.events = append(as.events, fmt.Sprintf("refresh method=%s resource=%s", method, f.Get("resource")))
		g = *old
	default:
		tokenError(w, "unsupported_grant_type", f.Get("grant_type"))
		return
	}
	g.scopes = slices.DeleteFunc(slices.Clone(g.scopes), func(s string) bool { return s == as.setup.neverGrant })
	g.expiry = time.Now().Add(as.setup.accessTTL)
	at, rt := as.secret("access"), as.secret("refresh")
	as.access[at] = &g
	as.refresh[rt] = &g
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	json.NewEncoder(w).Encode(map[string]any{
		"access_token": at, "token_type": "Bearer", "refresh_token": rt,
		"expires_in": int(as.setup.accessTTL / time.Second), "scope": strings.Join(g.scopes, " "),
	})
}

func tokenError(w http.ResponseWriter, code, description string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	json.NewEncoder(w).Encode(map[string]string{"error": code, "error_description": description})
}

// setDeny makes the user deny (or grant) consent.
func (as *testAuthServer) setDeny(deny bool) {
	as.mu.Lock()
	as.deny = deny
	as.mu.Unlock()
}

// expireAccessTokens makes every access token issued so far expired.
func (as *testAuthServer) expireAccessTokens() {
	as.mu.Lock()
	for _, g := range as.access {
		g.expiry = time.Now().Add(-time.Hour)
	}
	as.mu.Unlock()
}

// revokeRefreshTokens forgets every refresh token: they expired.
func (as *testAuthServer) revokeRefreshTokens() {
	as.mu.Lock()
	clear(as.refresh)
	as.mu.Unlock()
}

// eventsWith returns the events that start with prefix.
func (as *testAuthServer) eventsWith(prefix string) []string {
	as.mu.Lock()
	defer as.mu.Unlock()
	var out []string
	for _, e := range as.events {
		if strings.HasPrefix(e, prefix) {
			out = append(out, e)
		}
	}
	return out
}

// secrets returns every secret the server handed out.
func (as *testAuthServer) secrets() []string {
	as.mu.Lock()
	defer as.mu.Unlock()
	return slices.Clone(as.issued)
}

// lastAccessToken returns the access token issued last.
func (as *testAuthServer) lastAccessToken() string {
	as.mu.Lock()
	defer as.mu.Unlock()
	for i := len(as.issued) - 1; i >= 0; i-- {
		if strings.HasPrefix(as.issued[i], "access-") {
			return as.issued[i]
		}
	}
	return ""
}

// mcpRequests returns the bearer token and status of each MCP request.
func (as *testAuthServer) mcpRequests() ([]string, []int) {
	as.mu.Lock()
	defer as.mu.Unlock()
	return slices.Clone(as.bearers), slices.Clone(as.statuses)
}

// headlessBrowser stands in for the user's browser: it loads the
// authorization URL and follows the redirects, back to the loopback
// callback, as a browser does when the user consents at once.
type headlessBrowser struct {
	t      *testing.T
	client *http.Client

	mu     sync.Mutex
	opened []string
	pages  []string // the callback pages' bodies
}

func newHeadlessBrowser(t *testing.T) *headlessBrowser {
	b := &headlessBrowser{t: t, client: &http.Client{Transport: &http.Transport{}}}
	t.Cleanup(b.client.CloseIdleConnections)
	return b
}

func (b *headlessBrowser) open(ctx context.Context, u string) error {
	b.mu.Lock()
	b.opened = append(b.opened, u)
	b.mu.Unlock()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	resp, err := b.client.Do(req)
	if err != nil {
		return err
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	b.mu.Lock()
	b.pages = append(b.pages, string(body))
	b.mu.Unlock()
	if resp.StatusCode != http.StatusOK {
		b.t.Errorf("the browser ended on %s with %s: %s", resp.Request.URL, resp.Status, body)
	}
	return nil
}

func (b *headlessBrowser) opens() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.opened)
}
