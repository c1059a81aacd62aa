package oauthtest

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// The authorization server's endpoints: registration, authorization,
// token and revocation.

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
	as.events = append(as.events, "register grant_types="+strings.Join(md.GrantTypes, ",")+" application_type="+md.ApplicationType)
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
		case as.codeError != "":
			as.events = append(as.events, "token refused: "+as.codeError)
			tokenError(w, as.codeError, as.codeErrorText)
			return
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
