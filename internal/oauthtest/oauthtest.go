// Package oauthtest is an OAuth 2.1 authorization server and an MCP
// server protected by it, in-process, for tests of FreeCode's sign-in: each
// discovery variant of the MCP authorization spec is a Setup. It also has
// the stand-in for the user's browser.
package oauthtest

import (
	"bytes"
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
)

// Setup describes a protected MCP server and its authorization server.
type Setup struct {
	// PRM is where the protected resource metadata is: "header" (at the
	// path-based well-known URL, which the 401's WWW-Authenticate names),
	// "path" (there, not named), "root" (at the root well-known URL) or
	// "none" (a 2025-03-26 server: none, and the MCP server's origin is
	// the authorization server).
	PRM string
	// ASMeta is the authorization server's metadata: "oauth" (RFC 8414),
	// "oidc" (OpenID discovery) or "none" (the 2025-03-26 default
	// endpoints /authorize, /token and /register on the origin).
	ASMeta string
	// ASPath is the path of the issuer ("" for the origin).
	ASPath string
	// AuthMethods are the token endpoint's auth methods (default
	// client_secret_basic); the first is what registration gives.
	AuthMethods []string
	CIMD        bool // accepts Client ID Metadata Document URLs as client ids
	NoDCR       bool // offers no registration endpoint
	// PreID and PreSecret are a client registered beforehand.
	PreID, PreSecret string
	// ChallengeScopes are the scopes the 401 names and every token needs.
	ChallengeScopes []string
	// ScopesSupported is the resource's scopes_supported.
	ScopesSupported []string
	// WriteScope, if set, is needed on top for tools/call: a token
	// without it gets 403 insufficient_scope.
	WriteScope string
	// NeverGrant is a scope the authorization server never grants.
	NeverGrant string
	AccessTTL  time.Duration // how long access tokens live (default an hour)
	// ClientSecretTTL, if set, is how long the secret of a client
	// registered dynamically lasts: the registration's
	// client_secret_expires_at (0, never, if unset).
	ClientSecretTTL time.Duration
	// NoRevocation offers no revocation endpoint (RFC 7009).
	NoRevocation bool
}

// Server is a small OAuth 2.1 authorization server built on net/http,
// strict where a client can go wrong: PKCE S256 verified, the resource
// parameter required, redirect URIs and client authentication checked,
// codes single-use, refresh tokens rotated, revocation (RFC 7009) only of
// the authenticated client's own tokens. In front of an MCP server it
// requires its tokens (auth.RequireBearerToken).
type Server struct {
	setup Setup
	base  string // the origin it is served on
	// Issuer is the authorization server's issuer URL.
	Issuer string
	// MCPURL is the protected MCP endpoint.
	MCPURL string

	// mu guards the fields below.
	mu   sync.Mutex
	deny bool // the user denies consent
	// rejectClients refuses every client at the token and revocation
	// endpoints.
	rejectClients bool
	revokeDown    bool // the revocation endpoint answers 503
	clients       map[string]*testClient
	codes         map[string]*testCode
	access        map[string]*testGrant
	refresh       map[string]*testGrant
	events        []string // what happened, in order, for assertions
	issued        []string // every secret handed out: tokens, codes, client secrets
	// refreshed holds the access tokens issued for a refresh token.
	refreshed map[string]bool
	requests  []MCPRequest // in the order they arrived
}

type testClient struct {
	id, secret, method string
	redirectURIs       []string // empty: any loopback callback
	// secretExpiry is when the secret stops working; zero for never.
	secretExpiry time.Time
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

// New serves mcp (a Streamable HTTP or legacy SSE handler) at /mcp behind
// the authorization server of setup, both on loopback until the test
// ends.
func New(t testing.TB, setup Setup, mcp http.Handler) *Server {
	if setup.AuthMethods == nil {
		setup.AuthMethods = []string{"client_secret_basic"}
	}
	if setup.AccessTTL == 0 {
		setup.AccessTTL = time.Hour
	}
	as := &Server{setup: setup, clients: map[string]*testClient{}, codes: map[string]*testCode{},
		access: map[string]*testGrant{}, refresh: map[string]*testGrant{}, refreshed: map[string]bool{}}
	if setup.PreID != "" {
		method := setup.AuthMethods[0]
		as.clients[setup.PreID] = &testClient{id: setup.PreID, secret: setup.PreSecret, method: method}
		if setup.PreSecret != "" {
			as.issued = append(as.issued, setup.PreSecret)
		}
	}

	mcpMux := http.NewServeMux()
	mcpSrv := httptest.NewServer(mcpMux)
	t.Cleanup(mcpSrv.Close)
	as.MCPURL = mcpSrv.URL + "/mcp"

	asMux := mcpMux
	as.base = mcpSrv.URL
	if setup.PRM != "none" {
		// The authorization server lives elsewhere, as it usually does.
		asMux = http.NewServeMux()
		asSrv := httptest.NewServer(asMux)
		t.Cleanup(asSrv.Close)
		as.base = asSrv.URL
	}
	as.Issuer = as.base + setup.ASPath
	as.mountAS(asMux)

	resource := as.MCPURL
	switch setup.PRM {
	case "header", "path":
		mcpMux.Handle("/.well-known/oauth-protected-resource/mcp", as.prmHandler(resource))
	case "root":
		resource = mcpSrv.URL
		mcpMux.Handle("/.well-known/oauth-protected-resource", as.prmHandler(resource))
	}
	opts := &auth.RequireBearerTokenOptions{Scopes: setup.ChallengeScopes}
	if setup.PRM == "header" {
		opts.ResourceMetadataURL = mcpSrv.URL + "/.well-known/oauth-protected-resource/mcp"
	}
	protected := auth.RequireBearerToken(as.verify, opts)(as.stepUp(mcp, opts.ResourceMetadataURL))
	mcpMux.Handle("/mcp", as.recordMCP(protected))
	return as
}

// Resource returns the resource the protected resource metadata names:
// the MCP endpoint, or its origin when the metadata is at the root.
func (as *Server) Resource() string {
	if as.setup.PRM == "root" {
		return strings.TrimSuffix(as.MCPURL, "/mcp")
	}
	return as.MCPURL
}

// recordMCP notes each MCP request when it arrives, and its status when
// the answer's header is written: by the time the client reads an answer,
// its request is in MCPRequests.
func (as *Server) recordMCP(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		method := r.Method
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			var msg struct{ Method string }
			_ = json.Unmarshal(body, &msg)
			method = msg.Method
		}
		as.mu.Lock()
		i := len(as.requests)
		as.requests = append(as.requests, MCPRequest{Method: method, Bearer: bearerToken(r)})
		as.mu.Unlock()
		h.ServeHTTP(&statusRecorder{ResponseWriter: w, as: as, i: i}, r)
	})
}

// statusRecorder notes the status of request i of as.
type statusRecorder struct {
	http.ResponseWriter
	as    *Server
	i     int
	wrote bool
}

// note records code, the status of the first header written.
func (r *statusRecorder) note(code int) {
	if r.wrote {
		return
	}
	r.wrote = true
	r.as.mu.Lock()
	r.as.requests[r.i].Status = code
	r.as.mu.Unlock()
}

func (r *statusRecorder) WriteHeader(code int) {
	r.note(code)
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Write(p []byte) (int, error) {
	r.note(http.StatusOK) // net/http writes that header first
	return r.ResponseWriter.Write(p)
}

func (r *statusRecorder) Flush() {
	r.note(http.StatusOK)
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// stepUp answers a tools/call whose token lacks writeScope with 403
// insufficient_scope, naming the scopes needed.
func (as *Server) stepUp(next http.Handler, metadataURL string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if as.setup.WriteScope == "" || r.Method != http.MethodPost {
			next.ServeHTTP(w, r)
			return
		}
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(strings.NewReader(string(body)))
		var msg struct{ Method string }
		_ = json.Unmarshal(body, &msg)
		info := auth.TokenInfoFromContext(r.Context())
		if msg.Method != "tools/call" || info == nil || slices.Contains(info.Scopes, as.setup.WriteScope) {
			next.ServeHTTP(w, r)
			return
		}
		need := append(slices.Clone(as.setup.ChallengeScopes), as.setup.WriteScope)
		params := fmt.Sprintf(`Bearer error="insufficient_scope", scope=%q`, strings.Join(need, " "))
		if metadataURL != "" {
			params += fmt.Sprintf(", resource_metadata=%q", metadataURL)
		}
		w.Header().Set("WWW-Authenticate", params)
		http.Error(w, "insufficient scope", http.StatusForbidden)
	})
}

// verify is the MCP server's token check.
func (as *Server) verify(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
	as.mu.Lock()
	defer as.mu.Unlock()
	g, ok := as.access[token]
	if !ok {
		return nil, auth.ErrInvalidToken
	}
	return &auth.TokenInfo{Scopes: g.scopes, Expiration: g.expiry}, nil
}

func (as *Server) prmHandler(resource string) http.Handler {
	return auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
		Resource:             resource,
		AuthorizationServers: []string{as.Issuer},
		ScopesSupported:      as.setup.ScopesSupported,
	})
}

func (as *Server) mountAS(mux *http.ServeMux) {
	endpoint := func(name string) string { return as.Issuer + "/" + name }
	meta := map[string]any{
		"issuer":                                as.Issuer,
		"authorization_endpoint":                endpoint("authorize"),
		"token_endpoint":                        endpoint("token"),
		"response_types_supported":              []string{"code"},
		"grant_types_supported":                 []string{"authorization_code", "refresh_token"},
		"token_endpoint_auth_methods_supported": as.setup.AuthMethods,
		"code_challenge_methods_supported":      []string{"S256"},
	}
	if !as.setup.NoDCR {
		meta["registration_endpoint"] = endpoint("register")
	}
	if !as.setup.NoRevocation {
		meta["revocation_endpoint"] = endpoint("revoke")
		meta["revocation_endpoint_auth_methods_supported"] = as.setup.AuthMethods
	}
	if as.setup.CIMD {
		meta["client_id_metadata_document_supported"] = true
	}
	serveMeta := func(w http.ResponseWriter, r *http.Request) {
		as.note("metadata " + r.URL.Path)
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(meta)
	}
	switch as.setup.ASMeta {
	case "oauth":
		mux.HandleFunc("GET /.well-known/oauth-authorization-server"+as.setup.ASPath, serveMeta)
	case "oidc":
		mux.HandleFunc("GET /.well-known/openid-configuration"+as.setup.ASPath, serveMeta)
	}
	mux.HandleFunc("GET "+as.setup.ASPath+"/authorize", as.authorize)
	mux.HandleFunc("POST "+as.setup.ASPath+"/token", as.token)
	if !as.setup.NoDCR {
		mux.HandleFunc("POST "+as.setup.ASPath+"/register", as.register)
	}
	if !as.setup.NoRevocation {
		mux.HandleFunc("POST "+as.setup.ASPath+"/revoke", as.revoke)
	}
}

func (as *Server) note(event string) {
	as.mu.Lock()
	as.events = append(as.events, event)
	as.mu.Unlock()
}

// secret returns a new random secret with prefix, and remembers it.
func (as *Server) secret(prefix string) string {
	s := prefix + "-" + rand.Text()
	as.issued = append(as.issued, s)
	return s
}

func (as *Server) register(w http.ResponseWriter, r *http.Request) {
	var md oauthex.ClientRegistrationMetadata
	if err := json.NewDecoder(r.Body).Decode(&md); err != nil || len(md.RedirectURIs) == 0 {
		http.Error(w, `{"error":"invalid_client_metadata"}`, http.StatusBadRequest)
		return
	}
	as.mu.Lock()
	method := md.TokenEndpointAuthMethod
	if method == "" || !slices.Contains(as.setup.AuthMethods, method) {
		method = as.setup.AuthMethods[0]
	}
	// A client id is public; its secret is not.
	c := &testClient{id: "client-" + rand.Text(), method: method, redirectURIs: md.RedirectURIs}
	var expires int64 // never
	if method != "none" {
		c.secret = as.secret("client-secret")
		if as.setup.ClientSecretTTL > 0 {
			c.secretExpiry = time.Now().Add(as.setup.ClientSecretTTL)
			expires = c.secretExpiry.Unix()
		}
	}
	as.clients[c.id] = c
	as.events = append(as.events, "register grant_types="+strings.Join(md.GrantTypes, ","))
	as.mu.Unlock()
	answer := map[string]any{
		"client_id": c.id, "token_endpoint_auth_method": c.method,
		"redirect_uris": c.redirectURIs, "client_id_issued_at": time.Now().Unix(),
	}
	if c.secret != "" {
		answer["client_secret"] = c.secret
		answer["client_secret_expires_at"] = expires
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusCreated)
	json.NewEncoder(w).Encode(answer)
}

func (as *Server) authorize(w http.ResponseWriter, r *http.Request) {
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
	if !known && as.setup.CIMD && strings.HasPrefix(clientID, "https://") {
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
func (as *Server) clientAuth(r *http.Request) (*testClient, string, string) {
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
	reject := as.rejectClients
	as.mu.Unlock()
	switch {
	case !ok:
		return nil, "", "unknown client"
	case reject:
		return nil, "", "client rejected"
	case c.method != method:
		return nil, "", fmt.Sprintf("client registered for %s authenticated with %s", c.method, method)
	case c.secret != secret:
		return nil, "", "wrong client secret"
	case !c.secretExpiry.IsZero() && time.Now().After(c.secretExpiry):
		return nil, "", "client secret expired"
	}
	return c, method, ""
}

// clientError answers a request whose client authentication failed:
// invalid_client, 401 (RFC 6749, 5.2).
func (as *Server) clientError(w http.ResponseWriter, what, problem string) {
	as.note(what + " refused: " + problem)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusUnauthorized)
	json.NewEncoder(w).Encode(map[string]string{"error": "invalid_client", "error_description": problem})
}

func (as *Server) token(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		tokenError(w, "invalid_request", "bad form")
		return
	}
	c, method, problem := as.clientAuth(r)
	if problem != "" {
		as.clientError(w, "token", problem)
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
	g.scopes = slices.DeleteFunc(slices.Clone(g.scopes), func(s string) bool { return s == as.setup.NeverGrant })
	g.expiry = time.Now().Add(as.setup.AccessTTL)
	at, rt := as.secret("access"), as.secret("refresh")
	as.refreshed[at] = f.Get("grant_type") == "refresh_token"
	as.access[at] = &g
	as.refresh[rt] = &g
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	json.NewEncoder(w).Encode(map[string]any{
		"access_token": at, "token_type": "Bearer", "refresh_token": rt,
		"expires_in": int(as.setup.AccessTTL / time.Second), "scope": strings.Join(g.scopes, " "),
	})
}

// revoke is the revocation endpoint (RFC 7009): the client's own refresh
// or access token stops working; a token it does not know is no error.
func (as *Server) revoke(w http.ResponseWriter, r *http.Request) {
	as.mu.Lock()
	down := as.revokeDown
	as.mu.Unlock()
	if down {
		as.note("revoke refused: unavailable")
		http.Error(w, "down for maintenance", http.StatusServiceUnavailable)
		return
	}
	if err := r.ParseForm(); err != nil || r.PostForm.Get("token") == "" {
		tokenError(w, "invalid_request", "no token")
		return
	}
	c, method, problem := as.clientAuth(r)
	if problem != "" {
		as.clientError(w, "revoke", problem)
		return
	}
	tok := r.PostForm.Get("token")
	as.mu.Lock()
	defer as.mu.Unlock()
	kind, g := "unknown", (*testGrant)(nil)
	if rg, ok := as.refresh[tok]; ok {
		kind, g = "refresh", rg
	} else if ag, ok := as.access[tok]; ok {
		kind, g = "access", ag
	}
	if g != nil && g.client != c.id {
		as.events = append(as.events, "revoke refused: a token of another client")
		tokenError(w, "invalid_request", "the token was issued to another client")
		return
	}
	delete(as.refresh, tok)
	delete(as.access, tok)
	as.events = append(as.events, fmt.Sprintf("revoke %s hint=%s method=%s", kind, r.PostForm.Get("token_type_hint"), method))
	w.WriteHeader(http.StatusOK)
}

func tokenError(w http.ResponseWriter, code, description string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	json.NewEncoder(w).Encode(map[string]string{"error": code, "error_description": description})
}

// SetDeny makes the user deny (or grant) consent.
func (as *Server) SetDeny(deny bool) {
	as.mu.Lock()
	as.deny = deny
	as.mu.Unlock()
}

// ExpireAccessTokens makes every access token issued so far expired.
func (as *Server) ExpireAccessTokens() {
	as.mu.Lock()
	for _, g := range as.access {
		g.expiry = time.Now().Add(-time.Hour)
	}
	as.mu.Unlock()
}

// RevokeRefreshTokens forgets every refresh token: they expired.
func (as *Server) RevokeRefreshTokens() {
	as.mu.Lock()
	clear(as.refresh)
	as.mu.Unlock()
}

// SetRevocationDown makes the revocation endpoint answer 503 (or work
// again).
func (as *Server) SetRevocationDown(down bool) {
	as.mu.Lock()
	as.revokeDown = down
	as.mu.Unlock()
}

// ExpireClientSecrets makes the secret of every client registered so far
// expired at the server: its token and revocation requests get
// invalid_client. Its client id still opens the authorization page.
func (as *Server) ExpireClientSecrets() {
	as.mu.Lock()
	for _, c := range as.clients {
		if c.secret != "" {
			c.secretExpiry = time.Now().Add(-time.Hour)
		}
	}
	as.mu.Unlock()
}

// SetRejectClients makes the token and revocation endpoints refuse every
// client with invalid_client (or accept them again).
func (as *Server) SetRejectClients(reject bool) {
	as.mu.Lock()
	as.rejectClients = reject
	as.mu.Unlock()
}

// ForgetClients deletes every client registered dynamically: the
// authorization page refuses their ids, as a server does that clears out
// registrations.
func (as *Server) ForgetClients() {
	as.mu.Lock()
	for id := range as.clients {
		if id != as.setup.PreID {
			delete(as.clients, id)
		}
	}
	as.mu.Unlock()
}

// Events returns what the servers saw, in order, that starts with prefix:
// "metadata <path>", "register grant_types=<types>", "authorize
// client=<id> scope=<quoted> resource=<url>", "token code method=<client
// auth> pkce=ok resource=<url>", "refresh method=<client auth>
// resource=<url>", "revoke <refresh|access|unknown> hint=<token_type_hint>
// method=<client auth>", and "… refused: <why>" for what a strict server
// refuses.
func (as *Server) Events(prefix string) []string {
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

// Secrets returns every secret the server handed out.
func (as *Server) Secrets() []string {
	as.mu.Lock()
	defer as.mu.Unlock()
	return slices.Clone(as.issued)
}

// Tokens returns every access and refresh token the server issued, the
// secrets of the user's sign-ins (Secrets also has codes and client
// secrets).
func (as *Server) Tokens() []string {
	as.mu.Lock()
	defer as.mu.Unlock()
	var out []string
	for _, s := range as.issued {
		if strings.HasPrefix(s, "access-") || strings.HasPrefix(s, "refresh-") {
			out = append(out, s)
		}
	}
	return out
}

// LastAccessToken returns the access token issued last.
func (as *Server) LastAccessToken() string {
	as.mu.Lock()
	defer as.mu.Unlock()
	for i := len(as.issued) - 1; i >= 0; i-- {
		if strings.HasPrefix(as.issued[i], "access-") {
			return as.issued[i]
		}
	}
	return ""
}

// Refreshed reports whether the access token was issued for a refresh
// token, not for an authorization code.
func (as *Server) Refreshed(accessToken string) bool {
	as.mu.Lock()
	defer as.mu.Unlock()
	return as.refreshed[accessToken]
}

// MCPRequest is a request the MCP server received.
type MCPRequest struct {
	// Method is the JSON-RPC method of a POST ("" for a response), else
	// the HTTP method (GET, DELETE).
	Method string
	Bearer string // the bearer token it carried, "" for none
	Status int    // the status of the answer, 0 until its header is written
}

// MCPRequests returns the MCP requests in the order they arrived.
func (as *Server) MCPRequests() []MCPRequest {
	as.mu.Lock()
	defer as.mu.Unlock()
	return slices.Clone(as.requests)
}

// bearerToken returns the bearer token req carries, or "".
func bearerToken(req *http.Request) string {
	scheme, tok, ok := strings.Cut(req.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "bearer") {
		return ""
	}
	return tok
}
