package oauth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
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
