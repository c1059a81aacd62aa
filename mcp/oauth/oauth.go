package oauth

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

// ErrNeedsAuth means the server needs the user to sign in before FreeCode
// can connect to it: FreeCode holds no token for it, the stored one was
// refused and cannot be refreshed, the server asks for more access, or a
// sign-in did not complete. A connect that fails with it leaves the Conn
// in mcp.StateNeedsAuth, and nothing retries it until someone signs in
// (mcp.Conn.Login).
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

// Reason returns why err says the user must sign in, without the layers
// that carried it ("sign-in required: the server asks for more access
// (scope …) …"), or "" when err is no ErrNeedsAuth.
func Reason(err error) string {
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

// Options configure the OAuth sign-in of remote servers. A nil *Options
// means defaults.
type Options struct {
	// Tokens is where tokens are kept between runs. Nil means
	// DefaultStore, opened when a server first asks for a token.
	Tokens *tokenstore.Store
	// OpenURL, if set, lets a live session ask the user to sign in again
	// when the server demands more access (403 insufficient_scope);
	// without it such a server goes to mcp.StateNeedsAuth. mcp.Conn.Login
	// uses it when given no opener of its own. A connect never opens a
	// page unasked.
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

// DefaultStore returns the store of the user's OAuth tokens: the OS
// keychain where one answers, else tokens.json in config.SecretsDir
// (~/.freecode/auth, whatever config file runs: the tokens are the user's,
// never a repository's), mode 0600 in a 0700 directory.
// FREECODE_TOKEN_STORE=file keeps tokens in the file only.
func DefaultStore() (*tokenstore.Store, error) {
	dir, err := config.SecretsDir()
	if err != nil {
		return nil, err
	}
	return tokenstore.Open(dir, &tokenstore.Options{
		Keyring:        os.Getenv("FREECODE_TOKEN_STORE") != "file",
		KeyringService: "FreeCode MCP sign-in",
	}), nil
}

// Flow is the OAuth side of one connect attempt of a remote server and of
// the session it brings up: the transport's auth.OAuthHandler (for the
// legacy SSE transport, which takes none, see Send). Its methods are safe
// for concurrent use, and those that are not the handler's are safe on a
// nil *Flow (no sign-in); one authorization runs at a time.
//
// A Flow never dials by itself: Bind gives it the HTTP client of its
// requests to the authorization server, which the caller builds under its
// URL policy and TLS settings.
type Flow struct {
	srv    config.Server // expanded
	key    string        // the token store's key of the entry
	opts   Options
	store  func() (*tokenstore.Store, error)
	logger *slog.Logger
	stepUp func(ctx context.Context) OpenURLFunc // FlowConfig.StepUp
	// onRedactor installs the session's redactor, which hides base and
	// every secret the flow learns.
	onRedactor func(*urlpolicy.Redactor)
	base       []string
	red        atomic.Pointer[urlpolicy.Redactor]

	// client carries every auth request; Bind sets it.
	client *http.Client

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
	stepUps *StepUps
	needs   *authError // why the user must sign in, once known
	// resource is the resource parameter of the last authorization
	// request: what a refresh asks for again.
	resource string
	onLost   func() // ends the live session; nil while connecting
	// onSignIn, if set, is told when an interactive sign-in begins; the
	// func it returns, when it ends.
	onSignIn func() (done func())
}

// FlowConfig is what a Flow is made of besides the server.
type FlowConfig struct {
	// Entry is the server's entry as configured, which names its tokens in
	// the store: the same name, URL and client, the same sign-in.
	Entry config.Server
	// Options are the user's (nil: defaults).
	Options *Options
	// Login, set for an interactive sign-in (mcp.Conn.Login), shows the
	// user the sign-in page on the connect's 401; nil, a 401 asks nobody.
	Login OpenURLFunc
	// StepUps counts the sign-ins for more access across the Flows of one
	// server; nil counts them for this Flow only.
	StepUps *StepUps
	// StepUp, if set, says how the person behind the request of ctx is
	// shown the sign-in page when the server refuses that request with
	// 403 insufficient_scope (mcp.Conn asks its call's Asker). A nil
	// func, or a nil answer, leaves it to Options.OpenURL.
	StepUp func(ctx context.Context) OpenURLFunc
	// Secrets are the session's other secrets, hidden with the flow's own
	// in the redactor given to OnRedactor.
	Secrets []string
	// OnRedactor, if set, is handed the session's redactor each time the
	// flow learns a secret (a token, a client secret), so that whatever
	// the session logs or shows from then on hides it.
	OnRedactor func(*urlpolicy.Redactor)
	// OnSignIn, if set, is called when a sign-in in the browser begins,
	// and the func it returns when it ends: the time the user takes is
	// no server's answer being late (the connect's protocol discovery
	// does not count it).
	OnSignIn func() (done func())
	Logger   *slog.Logger
}

// NewFlow returns the flow of one connect of the remote server srv, its
// entry expanded (its ${env:…} values filled in).
func NewFlow(srv config.Server, cfg FlowConfig) *Flow {
	f := &Flow{
		srv: srv, key: signInKey(cfg.Entry), login: cfg.Login,
		logger: cfg.Logger, stepUps: cfg.StepUps, stepUp: cfg.StepUp,
		onRedactor: cfg.OnRedactor, base: cfg.Secrets, onSignIn: cfg.OnSignIn,
	}
	if cfg.Options != nil {
		f.opts = *cfg.Options
	}
	f.store = func() (*tokenstore.Store, error) { return optionsStore(&f.opts) }
	if f.logger == nil {
		f.logger = slog.New(slog.DiscardHandler)
	}
	if f.stepUps == nil {
		f.stepUps = &StepUps{}
	}
	if f.onRedactor == nil {
		f.onRedactor = func(*urlpolicy.Redactor) {}
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

// Bind gives the flow the HTTP client of its auth requests, before the
// connect's first request: the server's URL policy at dial time, its TLS
// settings (with the system roots kept, as an authorization server usually
// lives elsewhere), no proxy. Its idle connections are the flow's to close
// (CloseIdle).
func (f *Flow) Bind(client *http.Client) { f.client = client }

// CloseIdle closes the auth client's idle connections: the session ended.
func (f *Flow) CloseIdle() {
	if f != nil && f.client != nil {
		f.client.CloseIdleConnections()
	}
}

// ConnectTimeout is the bound of a connect whose own timeout is d: a
// sign-in waits for the user, up to Options.LoginWait more.
func (f *Flow) ConnectTimeout(d time.Duration) time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.login != nil {
		return d + f.opts.LoginWait
	}
	return d
}

// Connected ends the sign-in part of the flow, once the session is up:
// from now on a 401 asks nobody, and sign-in trouble (a refresh refused, a
// sign-in deleted elsewhere) ends the session through lost, so that its
// Conn reconnects and finds NeedsAuth.
func (f *Flow) Connected(lost func()) {
	if f == nil {
		return
	}
	f.mu.Lock()
	f.login = nil
	f.onLost = lost
	f.mu.Unlock()
}

// NeedsAuth returns why the user must sign in, an ErrNeedsAuth, or nil.
func (f *Flow) NeedsAuth() error {
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

// Explain returns err, or the sign-in trouble behind it: the SDK reports a
// refused request without saying that a sign-in is what is missing, or
// buried under what it was sending.
func (f *Flow) Explain(err error) error {
	if err == nil {
		return nil
	}
	if n := f.NeedsAuth(); n != nil {
		return n
	}
	return err
}

// fail records that the user must sign in, ends a live session (the Conn
// then finds needsAuth on its reconnect) and returns the error.
func (f *Flow) fail(reason string, cause error) error {
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
func (f *Flow) addSecrets(secrets ...string) {
	f.mu.Lock()
	for _, s := range secrets {
		if s != "" && !slices.Contains(f.secrets, s) {
			f.secrets = append(f.secrets, s)
		}
	}
	r := urlpolicy.NewRedactor(append(slices.Clone(f.base), f.secrets...)...)
	f.red.Store(r)
	f.mu.Unlock()
	f.onRedactor(r)
}

// Redactor returns the redactor of every secret known so far, the
// session's others included.
func (f *Flow) Redactor() *urlpolicy.Redactor { return f.red.Load() }

// TokenSource is auth.OAuthHandler's: nil until a token is known, so the
// first request goes out without one and the server's 401 says where to
// sign in.
func (f *Flow) TokenSource(context.Context) (oauth2.TokenSource, error) {
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
func (f *Flow) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
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
		if open == nil && f.stepUp != nil {
			open = f.stepUp(ctx)
		}
		if open == nil {
			open = f.opts.OpenURL
		}
		scopes := challengeScopes(challenges)
		asked := askedFor(scopes)
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
	if f.onSignIn != nil {
		done := f.onSignIn()
		defer done()
	}
	if err := f.authorizeInteractive(ctx, req, resp, open, stepUp); err != nil {
		return f.fail("the sign-in did not complete", err)
	}
	f.mu.Lock()
	f.needs = nil
	f.mu.Unlock()
	return nil
}

// Send is the OAuth of a transport that takes no OAuthHandler, the legacy
// HTTP+SSE one: it sends r through send with the flow's token, and on a
// 401 or 403 authorizes (as the Streamable HTTP transport does) and sends
// it again, once. The caller sends every request to the server's origin
// through it, and no other.
func (f *Flow) Send(r *http.Request, send func(*http.Request) (*http.Response, error)) (*http.Response, error) {
	setBearer := func(r *http.Request) {
		ts, _ := f.TokenSource(r.Context())
		if ts == nil {
			return
		}
		// Without a token the server's 401 says what to do.
		if tok, err := ts.Token(); err == nil {
			r.Header.Set("Authorization", "Bearer "+tok.AccessToken)
		}
	}
	setBearer(r)
	resp, err := send(r)
	if err != nil || (resp.StatusCode != http.StatusUnauthorized && resp.StatusCode != http.StatusForbidden) {
		return resp, err
	}
	if r.Body != nil && r.GetBody == nil {
		return resp, nil // cannot send it again
	}
	f.Observe(r, resp)
	if err := f.Authorize(r.Context(), r, resp); err != nil {
		return nil, err
	}
	again := r.Clone(r.Context())
	if r.GetBody != nil {
		if again.Body, err = r.GetBody(); err != nil {
			return nil, err
		}
	}
	again.Header.Del("Authorization")
	setBearer(again)
	return send(again)
}

// Observe notes a response of the server: a 401 or a 403
// insufficient_scope answering the token the flow holds means the user
// must act. After a sign-in (or the stored token tried) the transport
// sends the request once more and reports that answer without calling
// Authorize again: a 401 then means the token is refused, and a 403
// insufficient_scope that the access just granted is not what the server
// asks for, which no attempt without the user can mend. When the answer
// was the first to the request, Authorize comes next and overrides what
// Observe noted. The caller shows it every response of the server's
// origin.
func (f *Flow) Observe(req *http.Request, resp *http.Response) {
	if resp.StatusCode != http.StatusUnauthorized && resp.StatusCode != http.StatusForbidden {
		return
	}
	f.mu.Lock()
	src, needs := f.src, f.needs
	f.mu.Unlock()
	if needs != nil || src == nil || bearerToken(req) != src.access() {
		return
	}
	var reason string
	if resp.StatusCode == http.StatusForbidden {
		challenges, _ := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
		if challengeError(challenges) != "insufficient_scope" {
			return // the server's answer, not a sign-in's
		}
		reason = "the server asks for " + askedFor(challengeScopes(challenges)) + " than this sign-in gave (insufficient_scope), and a sign-in for it did not bring it: sign in again and grant it, or ask the server's administrator for it"
	} else {
		reason = "the server refused the stored token"
		if why := src.whyDead(); why != "" {
			reason = why
		}
	}
	f.mu.Lock()
	f.needs = &authError{reason: reason}
	f.mu.Unlock()
}

// askedFor says what a 403 insufficient_scope naming scopes (sorted,
// space-separated, "" when it names none) asks for.
func askedFor(scopes string) string {
	if scopes == "" {
		return "more access"
	}
	return "more access (scope " + strconv.Quote(scopes) + ")"
}

// StepUps counts a server's sign-ins for more access by the scopes
// demanded: a server that keeps demanding what the authorization server
// does not grant is not asked for again and again, not even across the
// reconnects its refusals cause (each with a Flow of its own). The zero
// value is ready to use.
type StepUps struct {
	mu sync.Mutex
	n  map[string]int
}

// add counts one more sign-in for scopes and returns the count.
func (c *StepUps) add(scopes string) int {
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

// maxDrain bounds what is read of a response's body before it is closed,
// to keep its connection for the next request.
const maxDrain = 64 << 10

// drainClose reads a little of resp's body, so its connection can be
// reused, and closes it.
func drainClose(resp *http.Response) {
	io.CopyN(io.Discard, resp.Body, maxDrain)
	resp.Body.Close()
}

// Check that a Flow is what the transport takes.
var _ auth.OAuthHandler = (*Flow)(nil)
