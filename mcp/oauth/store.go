package oauth

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"golang.org/x/oauth2"

	"github.com/freecode/freecode/config"
	"github.com/freecode/freecode/internal/tokenstore"
	"github.com/freecode/freecode/internal/urlpolicy"
)

// tokenRecord is what the token store keeps for one server entry: the
// token, and what refreshing it takes.
type tokenRecord struct {
	Server string `json:"server"` // the entry's name, for a person reading the file
	URL    string `json:"url"`    // redacted

	ClientID string `json:"clientId"`
	// ClientSecret is a dynamically registered client's; a configured
	// one stays in the config, which may take it from the environment.
	ClientSecret string `json:"clientSecret,omitempty"`
	// Issuer is the authorization server's, as its metadata names it:
	// where signing out finds the revocation endpoint. "" for a server
	// that publishes no metadata.
	Issuer    string   `json:"issuer,omitempty"`
	TokenURL  string   `json:"tokenUrl"`
	AuthStyle int      `json:"authStyle,omitempty"` // oauth2.AuthStyle
	Resource  string   `json:"resource,omitempty"`
	Scopes    []string `json:"scopes,omitempty"` // granted

	AccessToken  string    `json:"accessToken"`
	TokenType    string    `json:"tokenType,omitempty"`
	RefreshToken string    `json:"refreshToken,omitempty"`
	Expiry       time.Time `json:"expiry,omitzero"`
}

// signInKey names an entry's tokens in the store: by the entry's identity
// as configured (name, URL, client), so a server that is renamed, moved or
// given another client signs in anew instead of being sent a token meant
// for something else.
func signInKey(srv config.Server) string {
	var clientID, metadataURL string
	if srv.OAuth != nil {
		clientID, metadataURL = srv.OAuth.ClientID, srv.OAuth.ClientMetadataURL
	}
	sum := sha256.Sum256([]byte(strings.Join([]string{srv.Name, srv.URL, clientID, metadataURL}, "\x00")))
	return "mcp/" + srv.Name + "/" + hex.EncodeToString(sum[:12])
}

// token returns the record's token.
func (r *tokenRecord) token() *oauth2.Token {
	return &oauth2.Token{AccessToken: r.AccessToken, TokenType: r.TokenType, RefreshToken: r.RefreshToken, Expiry: r.Expiry}
}

// setToken takes tok, as the token endpoint answered: a refresh that
// returns no refresh token keeps the old one (oauth2 does that), and
// scopes are what the server says it granted, else what was asked.
func (r *tokenRecord) setToken(tok *oauth2.Token, asked []string) {
	r.AccessToken, r.TokenType, r.RefreshToken, r.Expiry = tok.AccessToken, tok.TokenType, tok.RefreshToken, tok.Expiry
	r.Scopes = asked
	if s, ok := tok.Extra("scope").(string); ok && s != "" {
		r.Scopes = strings.Fields(s)
	}
}

// config returns the oauth2 configuration that refreshes the record's
// token. A configured client's secret comes from the entry.
func (f *Flow) recordConfig(r *tokenRecord) *oauth2.Config {
	cfg := &oauth2.Config{
		ClientID:     r.ClientID,
		ClientSecret: r.ClientSecret,
		Endpoint:     oauth2.Endpoint{TokenURL: r.TokenURL, AuthStyle: oauth2.AuthStyle(r.AuthStyle)},
		Scopes:       r.Scopes,
	}
	if o := f.srv.OAuth; o != nil && o.ClientID != "" && o.ClientID == r.ClientID {
		cfg.ClientSecret = o.ClientSecret
	}
	return cfg
}

// loadStored returns a token source over the stored record, or nil if
// there is none.
func (f *Flow) loadStored(ctx context.Context) (*tokenSource, error) {
	rec, err := f.reread(ctx)
	if rec == nil || err != nil {
		return nil, err
	}
	return f.newSource(rec), nil
}

// reread returns the stored record, or nil if there is none.
func (f *Flow) reread(ctx context.Context) (*tokenRecord, error) {
	store, err := f.store()
	if err != nil {
		return nil, err
	}
	raw, err := store.Get(ctx, f.key)
	if errors.Is(err, tokenstore.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var rec tokenRecord
	if err := json.Unmarshal(raw, &rec); err != nil {
		return nil, fmt.Errorf("the stored sign-in does not parse: %v", err) // json quotes no input
	}
	if rec.ClientID == "" || rec.TokenURL == "" || (rec.AccessToken == "" && rec.RefreshToken == "") {
		return nil, errors.New("the stored sign-in is incomplete")
	}
	f.mu.Lock()
	f.saved = true
	f.mu.Unlock()
	f.addSecrets(rec.AccessToken, rec.RefreshToken, rec.ClientSecret)
	return &rec, nil
}

// stored reports whether the store held the flow's sign-in at some point:
// then its absence means someone signed out.
func (f *Flow) stored() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.saved
}

// save stores rec. A failure is logged: the session has its token, only
// the next run will have to sign in again.
func (f *Flow) save(rec *tokenRecord) {
	b, err := json.Marshal(rec)
	if err == nil {
		var store *tokenstore.Store
		if store, err = f.store(); err == nil {
			var where string
			where, err = store.Put(context.Background(), f.key, b)
			if err == nil {
				f.mu.Lock()
				f.saved = true
				f.mu.Unlock()
				f.logger.Debug("stored the sign-in", "in", where)
			}
		}
	}
	if err != nil {
		f.logger.Warn("storing the sign-in; the next run will ask again", "error", err)
	}
}

// newTokenSource is the go-sdk's hook after an authorization code was
// exchanged for a token: the token is kept, stored and from then on
// refreshed by a tokenSource. issuer is the authorization server's.
func (f *Flow) newTokenSource(_ context.Context, cfg *oauth2.Config, tok *oauth2.Token, issuer string) (oauth2.TokenSource, error) {
	f.addSecrets(tok.AccessToken, tok.RefreshToken, cfg.ClientSecret)
	f.mu.Lock()
	resource := f.resource
	f.mu.Unlock()
	rec := &tokenRecord{
		Server: f.srv.Name, URL: urlpolicy.RedactURL(f.srv.URL),
		ClientID: cfg.ClientID, Issuer: issuer, TokenURL: cfg.Endpoint.TokenURL, AuthStyle: int(cfg.Endpoint.AuthStyle),
		Resource: resource,
	}
	if o := f.srv.OAuth; o == nil || o.ClientID != cfg.ClientID {
		rec.ClientSecret = cfg.ClientSecret // registered on the fly: nowhere else to find it
	}
	rec.setToken(tok, cfg.Scopes)
	src := f.newSource(rec)
	f.save(rec)
	f.mu.Lock()
	f.src = src
	f.loaded = true // the store holds what the flow has now
	f.mu.Unlock()
	return src, nil
}

// newSource returns a token source over rec.
func (f *Flow) newSource(rec *tokenRecord) *tokenSource {
	return &tokenSource{f: f, cfg: f.recordConfig(rec), rec: rec}
}

// tokenSource hands out the record's token, refreshing it refreshMargin
// before it expires and storing the new one.
type tokenSource struct {
	f   *Flow
	cfg *oauth2.Config

	// mu guards the fields below.
	mu   sync.Mutex
	rec  *tokenRecord
	dead error // the authorization server refused to refresh; nil while usable
	// deadReason says why dead, for the user.
	deadReason string
}

// Token is oauth2.TokenSource's. An error of type *oauth2.RetrieveError
// with code invalid_grant makes the transport send the request without a
// token, and the server's 401 then reaches Authorize.
func (s *tokenSource) Token() (*oauth2.Token, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fresh() {
		return s.rec.token(), nil
	}
	if s.dead != nil {
		// Refreshing was refused: the token serves until it lapses.
		if s.usable() {
			return s.rec.token(), nil
		}
		return nil, s.dead
	}
	// Another FreeCode process (the CLI beside the sidecar) may have
	// refreshed it already, and a refresh token may be good for one use;
	// or signed out, and then this one must not bring the sign-in back.
	rec, err := s.f.reread(context.Background())
	switch {
	case err == nil && rec == nil && s.f.stored():
		s.dead = &oauth2.RetrieveError{ErrorCode: "invalid_grant", ErrorDescription: "signed out"}
		s.deadReason = signedOutReason
		s.rec.AccessToken = "" // not even until it lapses
		s.f.logger.Info("the sign-in was deleted (signed out): not refreshing it")
		return nil, s.dead
	case err == nil && rec != nil && rec.AccessToken != s.rec.AccessToken:
		s.rec, s.cfg = rec, s.f.recordConfig(rec)
		if s.fresh() {
			return s.rec.token(), nil
		}
	}
	if s.rec.RefreshToken == "" {
		if s.usable() {
			return s.rec.token(), nil
		}
		s.dead = &oauth2.RetrieveError{ErrorCode: "invalid_grant", ErrorDescription: "the access token expired and there is no refresh token"}
		s.deadReason = "the stored sign-in expired and cannot be renewed (no refresh token)"
		return nil, s.dead
	}
	// A token with no access token is refreshed at once.
	tok, err := s.cfg.TokenSource(s.f.refreshContext(s.rec.Resource), &oauth2.Token{RefreshToken: s.rec.RefreshToken}).Token()
	if err != nil {
		err = s.f.Redactor().Error(err)
		var re *oauth2.RetrieveError
		switch {
		case errors.As(err, &re) && re.ErrorCode == "invalid_grant":
			s.f.logger.Warn("the authorization server refused to refresh the token", "error", err)
			s.dead, s.deadReason = re, expiredReason
		case errors.As(err, &re) && re.ErrorCode == "invalid_client":
			// The client itself is refused: no refresh will do. As
			// invalid_grant, the request goes out without a token.
			s.f.logger.Warn("the authorization server refused FreeCode's client", "error", err)
			s.dead = &oauth2.RetrieveError{ErrorCode: "invalid_grant", ErrorDescription: "the client was refused (invalid_client)"}
			s.deadReason = clientRefusedReason
			s.f.dropClient(s.rec.ClientID, "the authorization server rejected it (invalid_client)")
		}
		if s.usable() {
			return s.rec.token(), nil
		}
		return nil, err
	}
	s.f.addSecrets(tok.AccessToken, tok.RefreshToken)
	s.rec.setToken(tok, s.rec.Scopes)
	s.f.save(s.rec)
	s.f.logger.Debug("refreshed the OAuth token", "expiry", tok.Expiry)
	return s.rec.token(), nil
}

// fresh reports whether the token is good for more than refreshMargin.
func (s *tokenSource) fresh() bool {
	return s.rec.AccessToken != "" && (s.rec.Expiry.IsZero() || time.Until(s.rec.Expiry) > refreshMargin)
}

// usable reports whether the token has not expired yet.
func (s *tokenSource) usable() bool {
	return s.rec.AccessToken != "" && (s.rec.Expiry.IsZero() || time.Now().Before(s.rec.Expiry))
}

// access returns the access token Token hands out, "" once it lapsed and
// refreshing it was refused.
func (s *tokenSource) access() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.dead != nil && !s.usable() {
		return ""
	}
	return s.rec.AccessToken
}

// whyDead returns why the token cannot be renewed, or "".
func (s *tokenSource) whyDead() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.deadReason
}

// scopes returns the scopes granted so far.
func (s *tokenSource) scopes() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rec.Scopes
}

// refreshContext returns the context oauth2 refreshes in: the flow's HTTP
// client, with the resource parameter added to the request.
func (f *Flow) refreshContext(resource string) context.Context {
	c := *f.client
	c.Transport = &resourceParam{base: f.client.Transport, resource: resource}
	return context.WithValue(context.Background(), oauth2.HTTPClient, &c)
}

// resourceParam adds the resource parameter (RFC 8707) to a refresh
// request: the MCP authorization spec wants it in every token request, and
// oauth2 has no option for it on a refresh.
type resourceParam struct {
	base     http.RoundTripper
	resource string
}

func (t *resourceParam) RoundTrip(req *http.Request) (*http.Response, error) {
	if t.resource == "" || req.Method != http.MethodPost || req.Body == nil {
		return t.base.RoundTrip(req)
	}
	body, err := io.ReadAll(io.LimitReader(req.Body, 1<<20))
	req.Body.Close()
	if err != nil {
		return nil, err
	}
	if form, err := url.ParseQuery(string(body)); err == nil && form.Get("grant_type") == "refresh_token" && !form.Has("resource") {
		form.Set("resource", t.resource)
		body = []byte(form.Encode())
	}
	r := req.Clone(req.Context())
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
	r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	return t.base.RoundTrip(r)
}

// optionsStore returns opts.Tokens, else DefaultStore.
func optionsStore(opts *Options) (*tokenstore.Store, error) {
	if opts != nil && opts.Tokens != nil {
		return opts.Tokens, nil
	}
	return DefaultStore()
}

// TokenLocation returns where the tokens of the remote server srv, an
// entry as configured, are kept: tokenstore.InKeyring or
// tokenstore.InFile (opts.Tokens, else DefaultStore), or an error
// wrapping tokenstore.ErrNotFound when FreeCode holds no sign-in for it.
func TokenLocation(ctx context.Context, srv config.Server, opts *Options) (string, error) {
	store, err := optionsStore(opts)
	if err != nil {
		return "", err
	}
	return store.Where(ctx, signInKey(srv))
}

// DeleteTokens forgets the sign-in of the remote server srv, an entry as
// configured: its tokens leave the token store (opts.Tokens, else
// DefaultStore), and the authorization server is not told (SignOut
// also has them revoked). It reports whether there were any. A FreeCode
// process connected with those tokens finds them gone at its next refresh
// and goes to StateNeedsAuth.
func DeleteTokens(ctx context.Context, srv config.Server, opts *Options) (bool, error) {
	store, err := optionsStore(opts)
	if err != nil {
		return false, err
	}
	key := signInKey(srv)
	_, err = store.Get(ctx, key)
	had := err == nil
	if err := store.Delete(ctx, key); err != nil {
		return had, fmt.Errorf("forgetting the sign-in of %s: %w", srv.Name, err)
	}
	return had, nil
}
