package oauth

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"

	"github.com/freecode/freecode/internal/tokenstore"
)

// A client FreeCode registered dynamically (RFC 7591) is kept beside the
// tokens and used again by the next sign-in: an authorization server keeps
// every registration it is sent, so registering at each sign-in would
// leave it one more orphan each time.
//
// The go-sdk's authorization handler reads the authorization server's
// metadata and registers through the HTTP client it is given. The flow
// gives it one whose transport is a clientKeeper, which watches those two
// exchanges: it notes the issuer of the metadata the handler read, and
// answers the handler's registration request with the kept registration
// when that one fits (the same issuer and registration endpoint, the same
// redirect URI, a secret that does not lapse during the sign-in); else the
// request goes to the server and its answer is kept. Either way the handler
// goes on as after any registration, and authenticates to the token
// endpoint the way the registration says.
//
// A kept registration is dropped when the authorization server rejects it
// (invalid_client at the token endpoint, or in the browser's redirect; the
// sign-in then registers anew, once), or when a sign-in with it never got
// the browser back: an authorization page that no longer knows the client
// shows the user an error and sends nobody back. Signing out keeps it: it
// names FreeCode to the server, not the user.

// clientRecord is what the token store keeps of a dynamic registration.
type clientRecord struct {
	Server string `json:"server"` // the entry's name, for a person reading the file
	// Issuer is the authorization server's, as its metadata names it; ""
	// for a server that publishes no metadata (the 2025-03-26 defaults).
	Issuer               string `json:"issuer,omitempty"`
	RegistrationEndpoint string `json:"registrationEndpoint"`
	RedirectURI          string `json:"redirectUri"`
	// Registration is the server's answer as it came: client_id,
	// client_secret and its client_secret_expires_at, the
	// token_endpoint_auth_method.
	Registration *oauthex.ClientRegistrationResponse `json:"registration"`
}

// clientKey names, in the token store, the registration of the entry
// whose tokens are under signIn.
func clientKey(signIn string) string { return signIn + "/client" }

// port returns the port of the registration's loopback redirect URI, or 0.
func (r *clientRecord) port() int {
	u, err := url.Parse(r.RedirectURI)
	if err != nil || u.Scheme != "http" || u.Hostname() != "127.0.0.1" {
		return 0
	}
	p, _ := strconv.Atoi(u.Port())
	return p
}

// clientID returns the registration's client id, "" for none.
func (r *clientRecord) clientID() string {
	if r == nil || r.Registration == nil {
		return ""
	}
	return r.Registration.ClientID
}

// loadClient returns the kept registration of the flow's entry, or nil.
func (f *Flow) loadClient(ctx context.Context) *clientRecord {
	store, err := f.store()
	if err != nil {
		return nil // the tokens' own reading says why
	}
	raw, err := store.Get(ctx, clientKey(f.key))
	if err != nil {
		if !errors.Is(err, tokenstore.ErrNotFound) {
			f.logger.Warn("reading the kept client registration; registering anew", "error", err)
		}
		return nil
	}
	var rec clientRecord
	if err := json.Unmarshal(raw, &rec); err != nil || rec.clientID() == "" {
		f.logger.Warn("the kept client registration does not parse; registering anew")
		return nil
	}
	f.addSecrets(rec.Registration.ClientSecret)
	return &rec
}

// saveClient keeps rec for the next sign-in. A failure is logged: the
// next sign-in registers anew.
func (f *Flow) saveClient(rec *clientRecord) {
	rec.Server = f.srv.Name
	b, err := json.Marshal(rec)
	if err == nil {
		var store *tokenstore.Store
		if store, err = f.store(); err == nil {
			_, err = store.Put(context.Background(), clientKey(f.key), b)
		}
	}
	if err != nil {
		f.logger.Warn("keeping the client registration; the next sign-in registers anew", "error", err)
	}
}

// forgetClient drops the kept registration of the entry whose tokens are
// under signIn if it is the client id's: one that replaced it stays.
func forgetClient(ctx context.Context, store *tokenstore.Store, signIn, id string) error {
	raw, err := store.Get(ctx, clientKey(signIn))
	if errors.Is(err, tokenstore.ErrNotFound) {
		return nil
	}
	if err == nil {
		var rec clientRecord
		if json.Unmarshal(raw, &rec) == nil && rec.clientID() != id {
			return nil
		}
	}
	return store.Delete(ctx, clientKey(signIn))
}

// dropClient is forgetClient for the flow's entry, with a failure logged.
func (f *Flow) dropClient(id, why string) {
	store, err := f.store()
	if err == nil {
		err = forgetClient(context.Background(), store, f.key, id)
	}
	if err != nil {
		f.logger.Warn("dropping the kept client registration", "error", err)
		return
	}
	f.logger.Info("dropped the kept client registration: the next sign-in registers anew", "why", why)
}

// clientRejected reports whether err is the authorization server refusing
// the client itself (invalid_client), at the token endpoint or in the
// browser's redirect.
func clientRejected(err error) bool {
	var re *oauth2.RetrieveError
	if errors.As(err, &re) && re.ErrorCode == "invalid_client" {
		return true
	}
	var ae *authorizationError
	return errors.As(err, &ae) && ae.code == "invalid_client"
}

// clientKeeper is the transport of the go-sdk handler's requests during one
// authorization (see the top of this file).
type clientKeeper struct {
	base        http.RoundTripper
	logger      *slog.Logger
	redirectURI string
	kept        *clientRecord // the registration to use again; nil for none
	// lapse is how long a kept secret must still last: the sign-in's wait.
	lapse      time.Duration
	addSecrets func(...string)

	// mu guards the fields below.
	mu     sync.Mutex
	issuer string        // of the metadata the handler read last
	used   *clientRecord // the registration the handler got; nil if none
	reused bool          // used is kept
}

// maxRegistrationBytes bounds what is read of a registration's answer, as
// the go-sdk bounds it.
const maxRegistrationBytes = 1 << 20

func (k *clientKeeper) RoundTrip(req *http.Request) (*http.Response, error) {
	switch {
	case req.Method == http.MethodGet:
		resp, err := k.base.RoundTrip(req)
		if err == nil && resp.StatusCode == http.StatusOK && isJSON(resp.Header) {
			k.noteMetadata(peekBody(resp, maxRegistrationBytes))
		}
		return resp, err
	case req.Method == http.MethodPost && isJSON(req.Header):
		// The handler's one JSON POST: token requests are forms.
		return k.register(req)
	}
	return k.base.RoundTrip(req)
}

// noteMetadata notes the issuer of body if it is an authorization server's
// metadata (RFC 8414): the handler reads no other document with an issuer
// and a token endpoint, and goes on with the first it reads whole.
func (k *clientKeeper) noteMetadata(body []byte) {
	var meta struct {
		Issuer        string `json:"issuer"`
		TokenEndpoint string `json:"token_endpoint"`
	}
	if json.Unmarshal(body, &meta) != nil || meta.Issuer == "" || meta.TokenEndpoint == "" {
		return
	}
	k.mu.Lock()
	k.issuer = meta.Issuer
	k.mu.Unlock()
}

// register answers the handler's registration request: from the kept
// registration if it fits, else from the server, whose answer is noted.
func (k *clientKeeper) register(req *http.Request) (*http.Response, error) {
	endpoint := req.URL.String()
	k.mu.Lock()
	issuer := k.issuer
	misfit := k.misfit(issuer, endpoint)
	if misfit == "" {
		k.used, k.reused = k.kept, true
	}
	k.mu.Unlock()
	if misfit == "" {
		body, err := json.Marshal(k.kept.Registration)
		if err != nil {
			return nil, err
		}
		if req.Body != nil {
			req.Body.Close()
		}
		k.logger.Debug("using the kept client registration")
		return &http.Response{
			Status: "201 Created", StatusCode: http.StatusCreated,
			Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
			Header:        http.Header{"Content-Type": {"application/json"}},
			Body:          io.NopCloser(bytes.NewReader(body)),
			ContentLength: int64(len(body)),
			Request:       req,
		}, nil
	}
	if k.kept != nil {
		k.logger.Info("registering anew: the kept client registration does not fit", "why", misfit)
	}
	resp, err := k.base.RoundTrip(req)
	if err != nil || (resp.StatusCode != http.StatusCreated && resp.StatusCode != http.StatusOK) {
		return resp, err
	}
	var reg oauthex.ClientRegistrationResponse
	if json.Unmarshal(peekBody(resp, maxRegistrationBytes), &reg) == nil && reg.ClientID != "" {
		k.addSecrets(reg.ClientSecret)
		k.mu.Lock()
		k.used = &clientRecord{Issuer: issuer, RegistrationEndpoint: endpoint, RedirectURI: k.redirectURI, Registration: &reg}
		k.mu.Unlock()
	}
	return resp, nil
}

// misfit returns why the kept registration may not serve a registration
// at endpoint of the authorization server issuer, "" if it may. The
// caller holds k.mu.
func (k *clientKeeper) misfit(issuer, endpoint string) string {
	r := k.kept
	switch {
	case r == nil:
		return "none kept"
	case strings.TrimSuffix(r.Issuer, "/") != strings.TrimSuffix(issuer, "/"):
		return "another authorization server"
	case r.RegistrationEndpoint != endpoint:
		return "another registration endpoint"
	case r.RedirectURI != k.redirectURI:
		return "another redirect URI"
	}
	if exp := r.Registration.ClientSecretExpiresAt; !exp.IsZero() && time.Until(exp) < k.lapse {
		return "its client secret expires"
	}
	return ""
}

// outcome returns the registration the handler got (nil if it registered
// none), whether it was the kept one, and the issuer of the metadata it
// read ("" if none).
func (k *clientKeeper) outcome() (used *clientRecord, reused bool, issuer string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.used, k.reused, k.issuer
}

// isJSON reports whether h says its body is JSON.
func isJSON(h http.Header) bool {
	mt, _, err := mime.ParseMediaType(h.Get("Content-Type"))
	return err == nil && mt == "application/json"
}

// peekBody returns up to limit bytes of resp's body and leaves the body
// whole for whoever reads it next.
func peekBody(resp *http.Response, limit int64) []byte {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, limit))
	resp.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(b), resp.Body), resp.Body}
	return b
}

// listenFor listens for the browser's redirect: on the configured
// callbackPort, else on the port of the kept registration, whose redirect
// URI it is part of, else (or if that port is taken) on any free port.
func (f *Flow) listenFor(kept *clientRecord) (*callbackServer, error) {
	port := 0
	if o := f.srv.OAuth; o != nil {
		port = o.CallbackPort
	}
	if port == 0 && kept != nil {
		if p := kept.port(); p != 0 {
			cb, err := listenCallback(p, f.logger)
			if err == nil {
				return cb, nil
			}
			f.logger.Info("the kept client registration's redirect port is taken: registering anew for another", "port", p)
		}
	}
	return listenCallback(port, f.logger)
}
