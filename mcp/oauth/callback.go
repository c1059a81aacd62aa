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
	"strconv"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
)

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
