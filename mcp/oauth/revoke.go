package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"

	"github.com/freecode/freecode/config"
	"github.com/freecode/freecode/internal/tokenstore"
	"github.com/freecode/freecode/internal/urlpolicy"
)

// Signing out deletes the stored tokens, then asks the authorization server
// to revoke them (RFC 7009), so that a copy of them elsewhere (a backup, a
// process that read them) is worth nothing either. The tokens are deleted
// first: from then on no FreeCode process refreshes them, so the ones
// revoked are the last ones. Revoking is best effort, bounded by
// revokeWait: whatever stops it, the tokens are gone from FreeCode, and
// the result says why they may still be valid at the server.

// ErrNoRevocation means the authorization server offers no token
// revocation: its metadata names no revocation_endpoint, or it publishes
// no metadata. Tokens it issued stay valid there until they expire.
var ErrNoRevocation = errors.New("the authorization server offers no token revocation")

// revokeWait bounds a sign-out's talk with the authorization server: its
// metadata and both revocation requests.
const revokeWait = 15 * time.Second

// SignOutResult is what SignOut did.
type SignOutResult struct {
	// Had reports whether FreeCode held a sign-in for the server.
	Had bool
	// Revoked reports whether the authorization server revoked the
	// tokens.
	Revoked bool
	// RevokeErr, when FreeCode held a sign-in and it was not revoked, says
	// why: it wraps ErrNoRevocation when the server offers no revocation,
	// else it is what failed. The tokens were deleted all the same. It
	// holds no token or secret.
	RevokeErr error
}

// SignOut forgets the sign-in of the remote server srv, an entry as
// configured: its tokens leave the token store (opts.Tokens, else
// DefaultStore), and the authorization server is asked to revoke them,
// through a client of newClient's. lookup expands the ${env:NAME} of a
// configured client secret (nil: os.LookupEnv). mcp.SignOut is this with
// the MCP client's HTTP client for srv.
//
// The error is about the store only; a failure to revoke is in the
// result's RevokeErr. A kept client registration stays for the next
// sign-in, unless the authorization server rejected the client.
func SignOut(ctx context.Context, srv config.Server, lookup func(string) (string, bool), opts *Options, newClient NewClient) (SignOutResult, error) {
	store, err := optionsStore(opts)
	if err != nil {
		return SignOutResult{}, err
	}
	key := signInKey(srv)
	raw, getErr := store.Get(ctx, key)
	if errors.Is(getErr, tokenstore.ErrNotFound) {
		return SignOutResult{}, nil
	}
	res := SignOutResult{Had: true}
	if err := store.Delete(ctx, key); err != nil {
		return res, fmt.Errorf("forgetting the sign-in of %s: %w", srv.Name, err)
	}
	if getErr != nil {
		res.RevokeErr = fmt.Errorf("reading the stored sign-in: %w", getErr)
		return res, nil
	}
	var rec tokenRecord
	if err := json.Unmarshal(raw, &rec); err != nil {
		res.RevokeErr = errors.New("the stored sign-in does not parse") // json quotes no input, but say less
		return res, nil
	}
	if lookup == nil {
		lookup = os.LookupEnv
	}
	rev := &revocation{srv: srv, rec: &rec, secret: rec.ClientSecret, newClient: newClient}
	if o := srv.OAuth; o != nil && o.ClientID != "" && o.ClientID == rec.ClientID {
		// A configured client's secret is the entry's, maybe ${env:NAME}.
		if rev.secret, err = config.Expand(o.ClientSecret, lookup); err != nil {
			res.RevokeErr = fmt.Errorf("oauth.clientSecret: %w", err)
			return res, nil
		}
	}
	res.RevokeErr = rev.run(ctx)
	res.Revoked = res.RevokeErr == nil
	if rev.rejected {
		res.RevokeErr = joinErrors([]error{res.RevokeErr, forgetClient(ctx, store, key, rec.ClientID)})
	}
	return res, nil
}

// revocation is the revocation of one stored sign-in's tokens.
type revocation struct {
	srv    config.Server
	rec    *tokenRecord
	secret string // the client's, "" for a public client
	// rejected is set when the server answered invalid_client: the
	// client itself is refused.
	rejected  bool
	newClient NewClient
}

// run revokes the refresh token, which at most servers ends the access
// tokens issued with it, and the access token unless it has lapsed. The
// error holds no token or secret.
func (r *revocation) run(ctx context.Context) error {
	red := urlpolicy.NewRedactor(r.rec.AccessToken, r.rec.RefreshToken, r.secret)
	if r.rec.Issuer == "" {
		return fmt.Errorf("%w: the sign-in names no authorization server metadata", ErrNoRevocation)
	}
	timeout := r.srv.Timeout
	if timeout <= 0 || timeout > revokeWait {
		timeout = revokeWait
	}
	client, err := r.newClient(timeout)
	if err != nil {
		return err
	}
	defer client.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(ctx, revokeWait)
	defer cancel()
	meta, err := auth.GetAuthServerMetadata(ctx, r.rec.Issuer, client)
	switch {
	case err != nil:
		return red.Error(fmt.Errorf("reading the authorization server's metadata: %w", err))
	case meta == nil:
		return fmt.Errorf("%w: it publishes no metadata", ErrNoRevocation)
	case meta.RevocationEndpoint == "":
		return ErrNoRevocation
	}
	endpoint, err := url.Parse(meta.RevocationEndpoint)
	if err != nil {
		return errors.New("the revocation_endpoint of the authorization server's metadata does not parse")
	}
	if err := urlpolicy.Check(endpoint); err != nil {
		return err
	}
	method := r.method(meta)
	var errs []error
	if r.rec.RefreshToken != "" {
		errs = append(errs, r.revoke(ctx, client, endpoint, method, r.rec.RefreshToken, "refresh_token"))
	}
	if r.rec.AccessToken != "" && (r.rec.Expiry.IsZero() || time.Now().Before(r.rec.Expiry)) {
		err := r.revoke(ctx, client, endpoint, method, r.rec.AccessToken, "access_token")
		var re *revokeError
		if !(errors.As(err, &re) && re.code == "unsupported_token_type" && r.rec.RefreshToken != "") {
			// A server that revokes refresh tokens only ends the access
			// tokens with them.
			errs = append(errs, err)
		}
	}
	return red.Error(joinErrors(errs))
}

// joinErrors is errors.Join on one line: the result is a status's
// lastError and a line of the CLI.
func joinErrors(errs []error) error {
	errs = slices.DeleteFunc(errs, func(err error) bool { return err == nil })
	if len(errs) == 0 {
		return nil
	}
	return &joinedError{errs: errs}
}

type joinedError struct{ errs []error }

func (e *joinedError) Error() string {
	msgs := make([]string, len(e.errs))
	for i, err := range e.errs {
		msgs[i] = err.Error()
	}
	return strings.Join(msgs, "; ")
}

func (e *joinedError) Unwrap() []error { return e.errs }

// method returns how the revocation request authenticates the client: as
// the sign-in does at the token endpoint (client_secret_basic or _post,
// none for a public client), unless the server's metadata lists the
// methods of its revocation endpoint and that one is not among them.
func (r *revocation) method(meta *oauthex.AuthServerMeta) string {
	if r.secret == "" {
		return "none"
	}
	method := "client_secret_basic" // what every server must take (RFC 6749, 2.3.1)
	switch oauth2.AuthStyle(r.rec.AuthStyle) {
	case oauth2.AuthStyleInParams:
		method = "client_secret_post"
	case oauth2.AuthStyleAutoDetect:
		// The sign-in left it to oauth2 to find out: the token
		// endpoint's list says what the server takes.
		if s := meta.TokenEndpointAuthMethodsSupported; !slices.Contains(s, method) && slices.Contains(s, "client_secret_post") {
			method = "client_secret_post"
		}
	}
	if s := meta.RevocationEndpointAuthMethodsSupported; len(s) > 0 && !slices.Contains(s, method) {
		for _, m := range []string{"client_secret_basic", "client_secret_post"} {
			if slices.Contains(s, m) {
				return m
			}
		}
	}
	return method
}

// revokeError is the authorization server's refusal of a revocation.
type revokeError struct {
	hint        string // which token
	status      int
	code        string // the OAuth error code, "" if none came
	description string
}

func (e *revokeError) Error() string {
	what := strings.ReplaceAll(e.hint, "_", " ")
	msg := fmt.Sprintf("the authorization server refused to revoke the %s (%d", what, e.status)
	if e.code != "" {
		msg += " " + e.code
	}
	msg += ")"
	if e.description != "" {
		msg += ": " + shortText(e.description)
	}
	return msg
}

// revoke sends one revocation request (RFC 7009, 2.1). The server answers
// 200 for a token it revoked and for one it did not know.
func (r *revocation) revoke(ctx context.Context, client *http.Client, endpoint *url.URL, method, token, hint string) error {
	form := url.Values{"token": {token}, "token_type_hint": {hint}}
	if method != "client_secret_basic" {
		form.Set("client_id", r.rec.ClientID)
	}
	if method == "client_secret_post" {
		form.Set("client_secret", r.secret)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint.String(), strings.NewReader(form.Encode()))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	if method == "client_secret_basic" {
		// RFC 6749, 2.3.1: both are form-encoded first, as oauth2 does.
		req.SetBasicAuth(url.QueryEscape(r.rec.ClientID), url.QueryEscape(r.secret))
	}
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("revoking the %s: %w", strings.ReplaceAll(hint, "_", " "), err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxDrain))
	if resp.StatusCode == http.StatusOK {
		return nil
	}
	e := &revokeError{hint: hint, status: resp.StatusCode}
	var answer struct {
		Error            string `json:"error"`
		ErrorDescription string `json:"error_description"`
	}
	if isJSON(resp.Header) && json.Unmarshal(body, &answer) == nil {
		e.code, e.description = answer.Error, answer.ErrorDescription
	}
	if e.code == "invalid_client" {
		r.rejected = true
	}
	return e
}

// NewClient returns the HTTP client of the requests to an authorization
// server for one remote server, each request bounded by timeout: its URL
// policy at dial time, its TLS settings with the system roots kept (an
// authorization server usually lives elsewhere), no proxy. The client's
// idle connections are its caller's to close.
type NewClient func(timeout time.Duration) (*http.Client, error)
