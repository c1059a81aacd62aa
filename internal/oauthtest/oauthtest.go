// Package oauthtest is an OAuth 2.1 authorization server and an MCP
// server protected by it, in-process, for tests of FreeCode's sign-in: each
// discovery variant of the MCP authorization spec is a Setup. It also has
// the stand-in for the user's browser.
package oauthtest

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
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
	// codeError, if set, is the error the token endpoint answers every
	// code with (the exchange fails), with codeErrorText its description.
	codeError, codeErrorText string
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
	as, stop := Serve(setup, mcp)
	t.Cleanup(stop)
	return as
}

// Serve is New for a program outside go test (cmd/oauth-newest-server):
// the servers listen on loopback until stop is called.
func Serve(setup Setup, mcp http.Handler) (as *Server, stop func()) {
	var closers []func()
	stop = func() {
		for _, c := range slices.Backward(closers) {
			c()
		}
	}
	if setup.AuthMethods == nil {
		setup.AuthMethods = []string{"client_secret_basic"}
	}
	if setup.AccessTTL == 0 {
		setup.AccessTTL = time.Hour
	}
	as = &Server{setup: setup, clients: map[string]*testClient{}, codes: map[string]*testCode{},
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
	closers = append(closers, mcpSrv.Close)
	as.MCPURL = mcpSrv.URL + "/mcp"

	asMux := mcpMux
	as.base = mcpSrv.URL
	if setup.PRM != "none" {
		// The authorization server lives elsewhere, as it usually does.
		asMux = http.NewServeMux()
		asSrv := httptest.NewServer(asMux)
		closers = append(closers, asSrv.Close)
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
	return as, stop
}

// Resource returns the resource the protected resource metadata names:
// the MCP endpoint, or its origin when the metadata is at the root.
func (as *Server) Resource() string {
	if as.setup.PRM == "root" {
		return strings.TrimSuffix(as.MCPURL, "/mcp")
	}
	return as.MCPURL
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
