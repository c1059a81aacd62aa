package oauthtest

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"
)

// What a test sets on the servers, and what it reads back: the MCP
// requests as they arrived, the events and the secrets handed out.

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

// SetDeny makes the user deny (or grant) consent.
func (as *Server) SetDeny(deny bool) {
	as.mu.Lock()
	as.deny = deny
	as.mu.Unlock()
}

// SetCodeError makes the token endpoint refuse every authorization code
// with the error code and its description (RFC 6749, 5.2), such as
// invalid_target: the browser comes back with a code, and its exchange
// fails. "" accepts codes again.
func (as *Server) SetCodeError(code, description string) {
	as.mu.Lock()
	as.codeError, as.codeErrorText = code, description
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
// "metadata <path>", "register grant_types=<types> application_type=<type>", "authorize
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
