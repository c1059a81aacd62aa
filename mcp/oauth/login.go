package oauth

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"html/template"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"

	"github.com/freecode/freecode/config"
	"github.com/freecode/freecode/internal/browserfile"
	"github.com/freecode/freecode/mcp/proc"
)

// authorizeInteractive runs the authorization code flow through the
// go-sdk's handler, with a loopback callback for the browser to come back
// to. stepUp asks for more access on top of what was granted. A kept
// client registration the authorization server rejects is replaced by a
// new one, and the authorization asked for again, once.
func (f *Flow) authorizeInteractive(ctx context.Context, req *http.Request, resp *http.Response, open OpenURLFunc, stepUp bool) error {
	var kept *clientRecord
	if o := f.srv.OAuth; o == nil || o.ClientID == "" {
		kept = f.loadClient(ctx)
	}
	cb, err := f.listenFor(kept)
	if err != nil {
		drainClose(resp)
		return err
	}
	defer cb.close()
	// The handler reads the status and the challenges of resp, and closes
	// its body: a second attempt gets them again.
	again := &http.Response{StatusCode: resp.StatusCode, Header: resp.Header, Body: http.NoBody, Request: resp.Request}
	retry, err := f.authorizeWith(ctx, req, resp, cb, open, stepUp, kept)
	if retry {
		cb.finish(&retryError{cause: f.Redactor().Error(err)})
		_, err = f.authorizeWith(ctx, req, again, cb, open, stepUp, nil)
	}
	// The browser's page says what became of the code it brought: the
	// exchange, not the redirect, is what signs FreeCode in.
	cb.finish(f.Redactor().Error(err))
	return err
}

// retryError is the outcome a browser is told of when the authorization
// server refused the kept registration at the token endpoint: FreeCode
// registers anew and opens the sign-in again.
type retryError struct{ cause error }

func (e *retryError) Error() string {
	return "the authorization server refused FreeCode's saved registration (" + e.cause.Error() + "); FreeCode opens the sign-in again with a new one"
}

// authorizeWith is one authorization through the go-sdk's handler, which
// may use kept as its registration (see clientKeeper). It reports whether
// the authorization server rejected kept: it was dropped, and a new
// registration may try again.
func (f *Flow) authorizeWith(ctx context.Context, req *http.Request, resp *http.Response, cb *callbackServer, open OpenURLFunc, stepUp bool, kept *clientRecord) (retry bool, _ error) {
	o := f.srv.OAuth
	var granted []string
	f.mu.Lock()
	if f.src != nil {
		granted = f.src.scopes()
	}
	f.mu.Unlock()
	keeper := &clientKeeper{
		base: f.client.Transport, logger: f.logger, redirectURI: cb.redirectURL, kept: kept,
		lapse: f.opts.LoginWait, addSecrets: f.addSecrets,
	}
	client := *f.client
	client.Transport = keeper
	cfg := &auth.AuthorizationCodeHandlerConfig{
		RedirectURL: cb.redirectURL,
		AuthorizationCodeFetcher: func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
			return f.fetchCode(ctx, cb, args.URL, open)
		},
		ScopeFilter: func(discovered []string) []string {
			scopes := discovered
			if o != nil && len(o.Scopes) > 0 {
				scopes = o.Scopes
				if stepUp {
					// What the server now demands comes on top.
					scopes = union(o.Scopes, discovered)
				}
			}
			if stepUp {
				scopes = union(granted, scopes)
			}
			return scopes
		},
		RequestRefreshToken: true,
		Client:              &client,
		NewTokenSource: func(ctx context.Context, cfg *oauth2.Config, tok *oauth2.Token) (oauth2.TokenSource, error) {
			_, _, issuer := keeper.outcome()
			return f.newTokenSource(ctx, cfg, tok, issuer)
		},
	}
	switch {
	case o != nil && o.ClientID != "":
		cfg.PreregisteredClient = &oauthex.ClientCredentials{ClientID: o.ClientID}
		if o.ClientSecret != "" {
			cfg.PreregisteredClient.ClientSecretAuth = &oauthex.ClientSecretAuth{ClientSecret: o.ClientSecret}
		}
	default:
		if o != nil && o.ClientMetadataURL != "" {
			cfg.ClientIDMetadataDocumentConfig = &auth.ClientIDMetadataDocumentConfig{URL: o.ClientMetadataURL}
		}
		cfg.DynamicClientRegistrationConfig = &auth.DynamicClientRegistrationConfig{
			Metadata: &oauthex.ClientRegistrationMetadata{
				RedirectURIs:  []string{cb.redirectURL},
				ClientName:    "FreeCode",
				GrantTypes:    []string{"authorization_code", "refresh_token"},
				ResponseTypes: []string{"code"},
			},
		}
	}
	h, err := auth.NewAuthorizationCodeHandler(cfg)
	if err != nil {
		drainClose(resp)
		return false, err
	}
	// The handler closes resp's body.
	err = h.Authorize(ctx, req, resp)
	used, reused, _ := keeper.outcome()
	var unanswered *unansweredError
	switch {
	case used == nil:
	case clientRejected(err):
		f.dropClient(used.clientID(), "the authorization server rejected it (invalid_client)")
		return reused, err
	case reused && errors.As(err, &unanswered):
		f.dropClient(used.clientID(), "the browser never came back from a sign-in with it, which an authorization page that no longer knows the client does")
	case !reused:
		f.saveClient(used)
	}
	return false, err
}

// union returns a's scopes, then b's that a lacks.
func union(a, b []string) []string {
	out := slices.Clone(a)
	for _, s := range b {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// fetchCode shows the user the authorization page and waits, within ctx
// and LoginWait, for the browser to come back with a code.
func (f *Flow) fetchCode(ctx context.Context, cb *callbackServer, authURL string, open OpenURLFunc) (*auth.AuthorizationResult, error) {
	u, err := url.Parse(authURL)
	if err != nil {
		return nil, fmt.Errorf("the authorization URL does not parse")
	}
	q := u.Query()
	f.mu.Lock()
	f.resource = q.Get("resource")
	f.mu.Unlock()
	results := cb.expect(q.Get("state"))
	// A page OpenBrowser writes for this sign-in goes when it ends: the
	// browser came back, or nobody did in time.
	pages := &openedPages{}
	defer pages.remove()
	f.logger.Info("opening the sign-in page", "url", authURL)
	cb.open(context.WithValue(ctx, openedPagesKey{}, pages), open, authURL, func(err error) {
		f.logger.Warn("could not open the sign-in page: open it in a browser on this machine", "url", authURL, "error", err)
	})
	wait := time.NewTimer(f.opts.LoginWait)
	defer wait.Stop()
	select {
	case r := <-results:
		if r.err != nil {
			return nil, r.err
		}
		f.addSecrets(r.res.Code)
		return r.res, nil
	case <-wait.C:
		return nil, &unansweredError{msg: fmt.Sprintf("nobody signed in within %v", f.opts.LoginWait)}
	case <-ctx.Done():
		cause := context.Cause(ctx)
		return nil, &unansweredError{msg: "waiting for the sign-in: " + cause.Error(), cause: cause}
	}
}

// unansweredError is a sign-in the browser never came back from.
type unansweredError struct {
	msg   string
	cause error // may be nil
}

func (e *unansweredError) Error() string { return e.msg }
func (e *unansweredError) Unwrap() error { return e.cause }

// callbackServer is the loopback end of the redirect: the browser comes
// back to http://127.0.0.1:<port>/callback with the code, or an error.
//
// Whoever knows the authorization request's state could answer first: with
// an error, which would fail the sign-in, or with a code of its own, got
// by signing in to its own account with the same authorization URL, which
// would sign FreeCode in as that account and send the user's calls there.
// PKCE does not stop that: the code was issued against FreeCode's own
// challenge, and FreeCode's verifier redeems it. So the URL is never on a
// command line (OpenBrowser); the callback takes one answer per request
// (expect), with the state, and, on Linux, none over a connection from
// another local user's socket (peer.refused).
//
// The page the browser comes back to says what became of its code: the
// handler holds it until the token exchange succeeded or failed (finish),
// within callbackHold, since a code the browser brought is not a sign-in
// yet. So the sign-in page is opened in a goroutine of its own (open): an
// opener that returns only once the page loaded, as a test's stand-in
// browser does, would otherwise hold the wait for the code it brings.
type callbackServer struct {
	redirectURL string
	srv         *http.Server
	done        chan struct{} // closed when Serve returned
	logger      *slog.Logger
	closing     chan struct{} // closed by close: a held page answers at once
	// holding counts the handlers that hold their page for an outcome;
	// opens the goroutines opening the sign-in page.
	holding, opens sync.WaitGroup

	// mu guards the fields below.
	mu      sync.Mutex
	state   string // the state parameter awaited; "" when none is
	results chan callbackResult
	// outcome is where finish sends the outcome of the code the last
	// answer brought, to its handler; nil when none waits for one.
	outcome chan error
	closed  bool     // close began: no handler holds its page any more
	cancels []func() // the opening goroutines' contexts
}

type callbackResult struct {
	res *auth.AuthorizationResult
	err error
}

// listenCallback listens on 127.0.0.1:port (any free port for 0).
func listenCallback(port int, logger *slog.Logger) (*callbackServer, error) {
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		if port != 0 {
			return nil, fmt.Errorf("listening for the sign-in's redirect on 127.0.0.1:%d (oauth.callbackPort): %w", port, err)
		}
		return nil, fmt.Errorf("listening for the sign-in's redirect on 127.0.0.1: %w", err)
	}
	cb := &callbackServer{
		redirectURL: "http://" + ln.Addr().String() + "/callback",
		done:        make(chan struct{}),
		closing:     make(chan struct{}),
		logger:      logger,
	}
	cb.srv = &http.Server{Handler: http.HandlerFunc(cb.serve), ReadHeaderTimeout: 30 * time.Second, ConnContext: peerContext}
	go func() {
		_ = cb.srv.Serve(ln)
		close(cb.done)
	}()
	return cb, nil
}

// expect arms the server for one authorization request's state and
// returns where its outcome arrives.
func (cb *callbackServer) expect(state string) <-chan callbackResult {
	ch := make(chan callbackResult, 1)
	cb.mu.Lock()
	cb.state, cb.results = state, ch
	cb.mu.Unlock()
	return ch
}

// open opens the sign-in page at url with open, in its own goroutine;
// failed is told why it could not.
func (cb *callbackServer) open(ctx context.Context, open OpenURLFunc, url string, failed func(error)) {
	ctx, cancel := context.WithCancel(ctx)
	cb.mu.Lock()
	cb.cancels = append(cb.cancels, cancel)
	cb.mu.Unlock()
	cb.opens.Go(func() {
		defer cancel()
		if err := open(ctx, url); err != nil {
			failed(err)
		}
	})
}

// finish tells the handler that holds its page for the code it brought
// how the exchange of that code ended: nil, signed in. Without such a
// handler it does nothing.
func (cb *callbackServer) finish(err error) {
	cb.mu.Lock()
	out := cb.outcome
	cb.outcome = nil
	cb.mu.Unlock()
	if out != nil {
		out <- err // buffered: never blocks
	}
}

// callbackHold bounds how long the browser's page waits for the token
// exchange; the page then says that FreeCode is still at it.
const callbackHold = 30 * time.Second

// openGrace is how long close waits for an opener still running (an
// editor asked to open the page that has not answered) before it cancels
// its context.
const openGrace = 5 * time.Second

// close answers a page still held, stops the server and waits for it, and
// for the goroutines opening the sign-in page.
func (cb *callbackServer) close() {
	cb.mu.Lock()
	cb.closed = true
	cancels := cb.cancels
	cb.mu.Unlock()
	close(cb.closing)
	cb.holding.Wait() // their pages are written whole before the server closes
	cb.srv.Close()
	<-cb.done
	opened := make(chan struct{})
	go func() {
		cb.opens.Wait()
		close(opened)
	}()
	t := time.NewTimer(openGrace)
	defer t.Stop()
	select {
	case <-opened:
	case <-t.C:
		for _, cancel := range cancels {
			cancel()
		}
		<-opened
	}
}

func (cb *callbackServer) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/callback" {
		http.NotFound(w, r)
		return
	}
	if p, _ := r.Context().Value(peerKey{}).(peer); p.refused() {
		// Another local user's, or one that hid whose it was: whatever it
		// says, it neither ends nor spoils the wait.
		cb.logger.Warn("refused an answer to the sign-in's callback from another local user's connection", "uid", p.uid, "closed", p.orphan || !p.found)
		callbackPage(w, http.StatusForbidden, "This sign-in is not yours",
			"FreeCode takes the answer to its sign-in only from a browser of the user who started it.")
		return
	}
	q := r.URL.Query()
	code, errCode := q.Get("code"), q.Get("error")
	cb.mu.Lock()
	want, results := cb.state, cb.results
	ok := want != "" && q.Get("state") == want
	var outcome chan error
	if ok {
		cb.state = "" // one answer per request: a replayed link finds nobody waiting
		if code != "" && errCode == "" && !cb.closed {
			outcome = make(chan error, 1)
			cb.outcome = outcome
			cb.holding.Add(1)
			defer cb.holding.Done()
		}
	}
	cb.mu.Unlock()
	if !ok {
		// Not the sign-in FreeCode waits for: a stale tab, or another page
		// aiming at the loopback port. It neither ends nor spoils the wait.
		callbackPage(w, http.StatusBadRequest, "This sign-in link has expired",
			"FreeCode is not waiting for this sign-in. Start the sign-in again from FreeCode.")
		return
	}
	var res callbackResult
	switch {
	case errCode != "":
		res.err = &authorizationError{code: errCode, description: q.Get("error_description")}
		callbackPage(w, http.StatusOK, "Sign-in did not complete", res.err.Error()+". You can close this tab.")
	case code == "":
		res.err = errors.New("the authorization server sent the browser back without a code")
		callbackPage(w, http.StatusBadRequest, "Sign-in did not complete", "The authorization server sent no code. You can close this tab and try again.")
	default:
		res.res = &auth.AuthorizationResult{Code: code, State: q.Get("state"), Iss: q.Get("iss")}
		if outcome == nil {
			// close began: nobody exchanges the code any more.
			results <- res
			callbackPage(w, http.StatusOK, "Sign-in did not complete", "FreeCode stopped waiting for this sign-in. You can close this tab and start it again from FreeCode.")
			return
		}
	}
	results <- res
	if outcome != nil {
		cb.hold(w, r, outcome)
	}
}

// hold answers the browser once the code it brought was exchanged, or
// failed to be, within callbackHold.
func (cb *callbackServer) hold(w http.ResponseWriter, r *http.Request, outcome <-chan error) {
	t := time.NewTimer(callbackHold)
	defer t.Stop()
	var err error
	select {
	case err = <-outcome:
	case <-cb.closing:
		// finish comes before close: an outcome sent is the answer.
		select {
		case err = <-outcome:
		default:
			err = errors.New("FreeCode stopped the sign-in before it completed")
		}
	case <-t.C:
		callbackPage(w, http.StatusOK, "Finishing the sign-in",
			"FreeCode has the answer and is still exchanging it for a token. You can close this tab: FreeCode shows whether the sign-in worked.")
		return
	case <-r.Context().Done():
		return // the browser went
	}
	var retry *retryError
	switch {
	case err == nil:
		callbackPage(w, http.StatusOK, "Signed in", "FreeCode is signed in. You can close this tab and go back to it.")
	case errors.As(err, &retry):
		callbackPage(w, http.StatusOK, "Signing in again", shortText(err.Error())+".")
	default:
		callbackPage(w, http.StatusOK, "Sign-in failed", "Sign-in failed: "+shortText(err.Error())+". You can close this tab and try again from FreeCode.")
	}
}

// authorizationError is the error an authorization server sent the
// browser back with (RFC 6749, 4.1.2.1).
type authorizationError struct {
	code, description string
}

func (e *authorizationError) Error() string {
	msg := "the authorization server answered " + e.code
	if e.code == "access_denied" {
		msg = "access was denied at the authorization server (access_denied)"
	}
	if e.description != "" {
		msg += ": " + shortText(e.description)
	}
	return msg
}

// shortText returns a server's text, an error's description, cut to 200
// characters: it ends up in one line of a status or a terminal.
func shortText(s string) string {
	r := []rune(s)
	if len(r) > 200 {
		return string(r[:200]) + "…"
	}
	return s
}

var callbackTemplate = template.Must(template.New("page").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>FreeCode: {{.Title}}</title>
<style>body{font-family:system-ui,sans-serif;max-width:36em;margin:4em auto;padding:0 1em;color:#222}h1{font-size:1.4em}</style>
</head><body><h1>{{.Title}}</h1><p>{{.Message}}</p></body></html>
`))

// callbackPage answers the browser with a small page; html/template
// escapes what the authorization server wrote into it. The page goes out
// whole, its length given, before the handler returns: close may shut the
// server as soon as a held page is written.
func callbackPage(w http.ResponseWriter, status int, title, message string) {
	var page bytes.Buffer
	_ = callbackTemplate.Execute(&page, struct{ Title, Message string }{title, message})
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Length", strconv.Itoa(page.Len()))
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Referrer-Policy", "no-referrer")
	w.WriteHeader(status)
	_, _ = w.Write(page.Bytes())
	_ = http.NewResponseController(w).Flush()
}

// OpenBrowser opens an http or https URL in the user's browser without
// putting it on any command line (issue 30): the URL of a sign-in is the
// sign-in's to whoever reads it first, and every local user may read a
// browser's argv, or an opener's. So the URL goes into a page that sends
// the browser on to it (browserfile.WriteRedirect), in a file only the
// user can read in ~/.freecode/browser, and the browser is started with
// the file's file: URL: the commands of $BROWSER (separated by the path
// list separator; "%s" in one stands for the file's URL, else it is the
// last argument), else the system's opener (xdg-open, open, rundll32).
//
// The page is removed when the sign-in that opened it ends (the browser
// came back, or the wait for it ended), or, opened outside a sign-in, when
// ctx is done or after pageLife at the latest. OpenBrowser returns once a
// command started and did not fail at once; an error means none did, or
// the page could not be written, and the URL is then the caller's to show
// the user.
func OpenBrowser(ctx context.Context, rawURL string) error {
	if u, err := url.Parse(rawURL); err != nil || (u.Scheme != "https" && u.Scheme != "http") {
		return errors.New("only http and https URLs are opened")
	}
	dir, err := browserfile.DefaultDir()
	if err != nil {
		return err
	}
	path, err := browserfile.WriteRedirect(dir, rawURL)
	if err != nil {
		return fmt.Errorf("writing the page that opens it: %w", err)
	}
	if pages, ok := ctx.Value(openedPagesKey{}).(*openedPages); ok {
		pages.add(path)
	} else {
		remove := sync.OnceFunc(func() { os.Remove(path) })
		stop := context.AfterFunc(ctx, remove)
		time.AfterFunc(pageLife, func() {
			stop()
			remove()
		})
	}
	if err := OpenBrowserFile(ctx, path); err != nil {
		os.Remove(path)
		return err
	}
	return nil
}

// pageLife is how long a page OpenBrowser wrote outside a sign-in is
// kept: a browser reads it as it starts.
const pageLife = 10 * time.Minute

// openedPagesKey is the context key of a sign-in's *openedPages.
type openedPagesKey struct{}

// openedPages are the pages OpenBrowser wrote for one sign-in, which
// removes them when it ends.
type openedPages struct {
	// mu guards the fields below.
	mu      sync.Mutex
	paths   []string
	removed bool // the sign-in ended: a page written since goes at once
}

func (p *openedPages) add(path string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.removed {
		// The page is opened in a goroutine of its own: a sign-in may end
		// before it is written (the user opened the URL by hand).
		os.Remove(path)
		return
	}
	p.paths = append(p.paths, path)
}

func (p *openedPages) remove() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, path := range p.paths {
		os.Remove(path)
	}
	p.paths, p.removed = nil, true
}

// OpenBrowserFile opens a local file, by its absolute path, in the user's
// browser as OpenBrowser opens its page, the commands given its file: URL:
// how a secret reaches the browser without being in any process's argv
// (see browserfile).
func OpenBrowserFile(ctx context.Context, path string) error {
	u, err := browserfile.FileURL(path)
	if err != nil {
		return fmt.Errorf("opening %s: %w", path, err)
	}
	return openBrowser(ctx, u)
}

func openBrowser(ctx context.Context, rawURL string) error {
	var errs []error
	if b := os.Getenv("BROWSER"); b != "" {
		for _, line := range filepath.SplitList(b) {
			argv, err := config.SplitCommand(line)
			if err != nil || len(argv) == 0 {
				continue
			}
			if !slices.ContainsFunc(argv, func(a string) bool { return strings.Contains(a, "%s") }) {
				argv = append(argv, "%s")
			}
			for i, a := range argv {
				argv[i] = strings.ReplaceAll(a, "%s", rawURL)
			}
			err = startBrowser(ctx, argv)
			if err == nil {
				return nil
			}
			errs = append(errs, err)
		}
	}
	var argv []string
	switch runtime.GOOS {
	case "darwin":
		argv = []string{"open", rawURL}
	case "windows":
		argv = []string{"rundll32", "url.dll,FileProtocolHandler", rawURL}
	default:
		argv = []string{"xdg-open", rawURL}
	}
	err := startBrowser(ctx, argv)
	if err == nil {
		return nil
	}
	return errors.Join(append(errs, err)...)
}

// browserGrace is how long OpenBrowser watches a browser command for an
// early failure (xdg-open with no desktop exits at once with an error); a
// command still running then is a browser that opened.
const browserGrace = 2 * time.Second

func startBrowser(ctx context.Context, argv []string) error {
	cmd := exec.Command(argv[0], argv[1:]...)
	// What the launch leaves running is the user's browser, never a
	// server's escapee to end.
	launched := proc.ClaimLaunch()
	if err := cmd.Start(); err != nil {
		launched()
		return fmt.Errorf("%s: %w", argv[0], err)
	}
	exited := make(chan error, 1)
	go func() {
		err := cmd.Wait()
		launched()
		exited <- err
	}()
	t := time.NewTimer(browserGrace)
	defer t.Stop()
	select {
	case err := <-exited:
		if err != nil {
			return fmt.Errorf("%s: %w", argv[0], err)
		}
		return nil
	case <-t.C:
		return nil // running: the Wait goroutine reaps it whenever it ends
	case <-ctx.Done():
		return nil
	}
}
