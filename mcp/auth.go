package mcp

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"

	"github.com/freecode/freecode/config"
	"github.com/freecode/freecode/internal/tokenstore"
	"github.com/freecode/freecode/internal/urlpolicy"
)

// A remote server may need an OAuth sign-in (the MCP authorization spec,
// 2025-11-25). The go-sdk does the protocol: discovery of the protected
// resource's and the authorization server's metadata, client registration,
// the authorization code flow with PKCE and the resource parameter. What
// FreeCode adds around it lives in the auth*.go files:
//   - an oauthFlow per connect attempt, the OAuthHandler the Streamable
//     HTTP transport asks for tokens and calls on a 401 or a 403;
//   - tokens kept between runs (internal/tokenstore: the OS keychain or a
//     0600 file) and refreshed before they expire, and a dynamically
//     registered client kept beside them (auth_client.go);
//   - signing out, which revokes the tokens (auth_revoke.go);
//   - the interactive part, only when the user asked for it (Login) or a
//     live session needs more scopes and someone can answer: the browser,
//     a loopback callback on 127.0.0.1, a bounded wait;
//   - every auth request through the URL policy, and every token, code and
//     client secret in the redactor of the session, so that no log, status
//     or error shows one.

// ErrNeedsAuth means the server needs the user to sign in before FreeCode
// can connect to it: FreeCode holds no token for it, the stored one was
// refused and cannot be refreshed, the server asks for more access, or a
// sign-in did not complete. A connect that fails with it leaves the Conn
// in StateNeedsAuth, and nothing retries it until someone signs in (Login).
// A call that fails with it was refused by the server's HTTP side before
// the server ran it.
var ErrNeedsAuth = errors.New("sign-in required")

// authError is an ErrNeedsAuth with the reason.
type authError struct {
	reason string
	cause  error // may be nil
}

func (e *authError) Error() string {
	if e.cause != nil {
		return ErrNeedsAuth.Error() + ": " + e.reason + ": " + e.cause.Error()
	}
	return ErrNeedsAuth.Error() + ": " + e.reason
}

func (e *authError) Unwrap() []error { return []error{ErrNeedsAuth, e.cause} }

// SignInReason returns why err says the user must sign in, without the
// layers that carried it ("sign-in required: the server asks for more
// access (scope …) …"), or "" when err is no ErrNeedsAuth.
func SignInReason(err error) string {
	var ae *authError
	switch {
	case errors.As(err, &ae):
		return ae.Error()
	case errors.Is(err, ErrNeedsAuth):
		return ErrNeedsAuth.Error()
	}
	return ""
}

// OpenURLFunc shows the user a web page, here the authorization server's
// sign-in page. It returns once the page is handed over (a browser
// started, an editor asked to open it), not when the user is done; an
// error means nothing could show it, and the URL is then logged for the
// user to open by hand.
type OpenURLFunc func(ctx context.Context, url string) error

// AuthOptions configure the OAuth sign-in of remote servers. A nil
// *AuthOptions means defaults.
type AuthOptions struct {
	// Tokens is where tokens are kept between runs. Nil means
	// DefaultTokenStore, opened when a server first asks for a token.
	Tokens *tokenstore.Store
	// OpenURL, if set, lets a live session ask the user to sign in again
	// when the server demands more access (403 insufficient_scope);
	// without it such a server goes to StateNeedsAuth. Login uses it when
	// given no opener of its own. A connect never opens a page unasked.
	OpenURL OpenURLFunc
	// LoginWait bounds the wait for the browser to come back to the
	// loopback callback (default 5 minutes).
	LoginWait time.Duration
}

// defaultLoginWait is how long a sign-in waits for the user.
const defaultLoginWait = 5 * time.Minute

// maxStepUps bounds the sign-ins for more access that one connection
// makes: a server that keeps answering insufficient_scope gets three
// authorization requests in all, the first sign-in included.
const maxStepUps = 2

// refreshMargin is how long before its expiry a token is refreshed: a
// request never goes out with a token about to lapse on its way.
const refreshMargin = time.Minute

// DefaultTokenStore returns the store of the user's OAuth tokens: the OS
// keychain where one answers, else tokens.json in config.SecretsDir
// (~/.freecode/auth, whatever config file runs: the tokens are the user's,
// never a repository's), mode 0600 in a 0700 directory.
// FREECODE_TOKEN_STORE=file keeps tokens in the file only.
func DefaultTokenStore() (*tokenstore.Store, error) {
	dir, err := config.SecretsDir()
	if err != nil {
		return nil, err
	}
	return tokenstore.Open(dir, &tokenstore.Options{
		Keyring:        os.Getenv("FREECODE_TOKEN_STORE") != "file",
		KeyringService: "FreeCode MCP sign-in",
	}), nil
}

// oauthFlow is the OAuth side of one connect attempt and of the session it
// brings up: the transport's auth.OAuthHandler. Its methods are safe for
// concurrent use; one authorization runs at a time.
type oauthFlow struct {
	srv    config.Server // expanded
	key    string        // the token store's key of the entry
	opts   AuthOptions
	store  func() (*tokenstore.Store, error)
	logger *slog.Logger
	// setRedactor installs the session's redactor, which hides base and
	// every secret the flow learns.
	setRedactor func(*urlpolicy.Redactor)
	base        []string
	red         atomic.Pointer[urlpolicy.Redactor]

	// client and transport carry every auth request; bind sets them.
	client    *http.Client
	transport *http.Transport

	authMu sync.Mutex // one authorization at a time

	// mu guards the fields below.
	mu sync.Mutex
	// login, while Login's connect runs, shows the user the sign-in page
	// for a 401; nil otherwise, when a 401 asks nobody.
	login   OpenURLFunc
	secrets []string
	src     *tokenSource // nil until a token is known
	loaded  bool         // the store was read (it is read once, on the first 401)
	saved   bool         // the store held the flow's sign-in
	stepUps *stepUpCounts
	needs   *authError // why the user must sign in, once known
	// resource is the resource parameter of the last authorization
	// request: what a refresh asks for again.
	resource string
	onLost   func() // ends the live session; nil while connecting
}

// newOAuthFlow returns the flow of one connect of the remote server srv
// (expanded; c.srv is the entry as configured, which names its tokens).
// base are the session's other secrets. login is non-nil for Login.
func (c *Conn) newOAuthFlow(srv config.Server, base []string, login OpenURLFunc) *oauthFlow {
	f := &oauthFlow{
		srv: srv, key: signInKey(c.srv), login: login,
		store: c.tokenStore, logger: c.logger, stepUps: &c.stepUps,
		setRedactor: func(r *urlpolicy.Redactor) { c.redactor.Store(r) },
		base:        base,
	}
	if c.opts.Auth != nil {
		f.opts = *c.opts.Auth
	}
	if f.opts.LoginWait <= 0 {
		f.opts.LoginWait = defaultLoginWait
	}
	var own []string
	if srv.OAuth != nil {
		own = append(own, srv.OAuth.ClientSecret)
	}
	f.addSecrets(own...)
	return f
}

// tokenStore returns the Conn's token store.
func (c *Conn) tokenStore() (*tokenstore.Store, error) {
	if c.opts.Auth != nil && c.opts.Auth.Tokens != nil {
		return c.opts.Auth.Tokens, nil
	}
	return DefaultTokenStore()
}

// bind gives the flow the HTTP client of its auth requests: the server's
// URL policy at dial time, its TLS settings (with the system roots kept, as
// an authorization server usually lives elsewhere), no proxy.
func (f *oauthFlow) bind(rc *remoteClient) error {
	client, transport, err := newAuthClient(f.srv, rc.timeout)
	if err != nil {
		return err
	}
	f.client, f.transport = client, transport
	return nil
}

// closeIdle closes the auth client's idle connections: the session ended.
func (f *oauthFlow) closeIdle() {
	if f != nil && f.transport != nil {
		f.transport.CloseIdleConnections()
	}
}

// connectTimeout is the bound of the connect: a sign-in waits for the user.
func (f *oauthFlow) connectTimeout(d time.Duration) time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.login != nil {
		return d + f.opts.LoginWait
	}
	return d
}

// connected ends the sign-in part of the flow: from now on a 401 asks
// nobody, and sign-in trouble ends the session through lost.
func (f *oauthFlow) connected(lost func()) {
	if f == nil {
		return
	}
	f.mu.Lock()
	f.login = nil
	f.onLost = lost
	f.mu.Unlock()
}

// needsAuth returns why the user must sign in, or nil.
func (f *oauthFlow) needsAuth() error {
	if f == nil {
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.needs == nil {
		return nil
	}
	return f.needs
}

// explain returns err, or the sign-in trouble behind it: the SDK reports a
// refused request without saying that a sign-in is what is missing, or
// buried under what it was sending.
func (f *oauthFlow) explain(err error) error {
	if err == nil {
		return nil
	}
	if n := f.needsAuth(); n != nil {
		return n
	}
	return err
}

// fail records that the user must sign in, ends a live session (the Conn
// then finds needsAuth on its reconnect) and returns the error.
func (f *oauthFlow) fail(reason string, cause error) error {
	e := &authError{reason: reason, cause: cause}
	f.mu.Lock()
	f.needs = e
	lost := f.onLost
	f.mu.Unlock()
	f.logger.Warn("MCP server needs sign-in", "error", e)
	if lost != nil {
		lost()
	}
	return e
}

// addSecrets hides more values in the session's logs, status and errors.
func (f *oauthFlow) addSecrets(secrets ...string) {
	f.mu.Lock()
	for _, s := range secrets {
		if s != "" && !slices.Contains(f.secrets, s) {
			f.secrets = append(f.secrets, s)
		}
	}
	r := urlpolicy.NewRedactor(append(slices.Clone(f.base), f.secrets...)...)
	f.red.Store(r)
	f.mu.Unlock()
	f.setRedactor(r)
}

// redactor returns the redactor of every secret known so far.
func (f *oauthFlow) redactor() *urlpolicy.Redactor { return f.red.Load() }

// TokenSource is auth.OAuthHandler's: nil until a token is known, so the
// first request goes out without one and the server's 401 says where to
// sign in.
func (f *oauthFlow) TokenSource(context.Context) (oauth2.TokenSource, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.src == nil {
		return nil, nil
	}
	return f.src, nil
}

// Authorize is auth.OAuthHandler's, called by the transport on a 401 or a
// 403. A nil return makes the transport send the request again, once.
//
// On a 401 the first time, the stored tokens are read (the store is never
// touched for a server that does not ask). Without usable tokens the user
// must act: during Login the browser is opened, otherwise the flow records
// ErrNeedsAuth. A 403 insufficient_scope asks for more access the same way
// (bounded by maxStepUps); any other 403 is the server's answer.
func (f *oauthFlow) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	challenges, _ := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
	stepUp := resp.StatusCode == http.StatusForbidden
	if stepUp && challengeError(challenges) != "insufficient_scope" {
		drainClose(resp)
		return nil
	}
	f.authMu.Lock()
	defer f.authMu.Unlock()

	f.mu.Lock()
	src, loaded, open := f.src, f.loaded, f.login
	f.mu.Unlock()
	sent := bearerToken(req)
	if src != nil && sent != src.access() {
		// Another request got a new token while this one waited.
		drainClose(resp)
		return nil
	}
	if !stepUp && open == nil && !loaded {
		f.mu.Lock()
		f.loaded = true
		f.mu.Unlock()
		stored, err := f.loadStored(ctx)
		if err != nil {
			f.logger.Warn("reading the stored sign-in", "error", err)
		}
		if stored != nil {
			f.mu.Lock()
			f.src = stored
			f.mu.Unlock()
			drainClose(resp)
			return nil
		}
	}
	if stepUp {
		if open == nil {
			open = f.opts.OpenURL
		}
		scopes := challengeScopes(challenges)
		asked := "more access"
		if scopes != "" {
			asked = "more access (scope " + strconv.Quote(scopes) + ")"
		}
		if open == nil {
			drainClose(resp)
			return f.fail("the server asks for "+asked+" than this sign-in gave (insufficient_scope), and nobody can be asked here to sign in for it", nil)
		}
		if n := f.stepUps.add(scopes); n > maxStepUps {
			drainClose(resp)
			return f.fail("the server still asks for "+asked+" (insufficient_scope) after "+strconv.Itoa(maxStepUps)+" sign-ins for it", nil)
		}
	}
	if open == nil {
		drainClose(resp)
		if src == nil {
			return f.fail("the server asks for an OAuth sign-in and FreeCode holds no token for it", nil)
		}
		if why := src.whyDead(); why != "" {
			return f.fail(why, nil)
		}
		return f.fail("the server refused the stored token", nil)
	}
	if err := f.authorizeInteractive(ctx, req, resp, open, stepUp); err != nil {
		return f.fail("the sign-in did not complete", err)
	}
	f.mu.Lock()
	f.needs = nil
	f.mu.Unlock()
	return nil
}

// observe notes a 401 answering the token the flow holds: after the stored
// token was tried, the transport retries once and reports the second 401
// without calling Authorize again.
func (f *oauthFlow) observe(req *http.Request, resp *http.Response) {
	if resp.StatusCode != http.StatusUnauthorized {
		return
	}
	f.mu.Lock()
	src, needs := f.src, f.needs
	f.mu.Unlock()
	if needs == nil && src != nil && bearerToken(req) == src.access() {
		reason := "the server refused the stored token"
		if why := src.whyDead(); why != "" {
			reason = why
		}
		f.mu.Lock()
		f.needs = &authError{reason: reason}
		f.mu.Unlock()
	}
}

// stepUpCounts counts a Conn's sign-ins for more access by the scopes
// demanded: a server that keeps demanding what the authorization server
// does not grant is not asked for again and again, not even across the
// reconnects its refusals cause. The zero value is ready to use.
type stepUpCounts struct {
	mu sync.Mutex
	n  map[string]int
}

// add counts one more sign-in for scopes and returns the count.
func (c *stepUpCounts) add(scopes string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[string]int{}
	}
	c.n[scopes]++
	return c.n[scopes]
}

// challengeScopes returns the scope parameter of the Bearer challenge, its
// scopes sorted.
func challengeScopes(cs []oauthex.Challenge) string {
	for _, c := range cs {
		if c.Scheme == "bearer" {
			s := strings.Fields(c.Params["scope"])
			slices.Sort(s)
			return strings.Join(s, " ")
		}
	}
	return ""
}

// Why a stored sign-in is over.
const (
	expiredReason       = "the stored sign-in expired and the authorization server refused to renew it"
	signedOutReason     = "signed out: the stored sign-in was deleted"
	clientRefusedReason = "the authorization server no longer accepts FreeCode's client (invalid_client)"
)

// challengeError returns the error parameter of the Bearer challenge.
func challengeError(cs []oauthex.Challenge) string {
	for _, c := range cs {
		if c.Scheme == "bearer" && c.Params["error"] != "" {
			return c.Params["error"]
		}
	}
	return ""
}

// bearerToken returns the bearer token req carries, or "".
func bearerToken(req *http.Request) string {
	scheme, tok, ok := strings.Cut(req.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "bearer") {
		return ""
	}
	return tok
}

// drainClose reads a little of resp's body, so its connection can be
// reused, and closes it.
func drainClose(resp *http.Response) {
	io.CopyN(io.Discard, resp.Body, maxDrain)
	resp.Body.Close()
}

// Check that oauthFlow is what the transport takes.
var _ auth.OAuthHandler = (*oauthFlow)(nil)
