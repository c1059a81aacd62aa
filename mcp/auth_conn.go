package mcp

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"

	"github.com/freecode/freecode/config"
)

// Login connects the remote server like Start, except that when the server
// asks for an OAuth sign-in, the user is shown the authorization server's
// page through open (nil means AuthOptions.OpenURL, else OpenBrowser) and
// the Conn waits, within ctx and AuthOptions.LoginWait, for the browser to
// come back to a loopback callback on 127.0.0.1. Tokens already stored are
// not used: Login signs in anew, and on success stores the new tokens in
// their place. A server that does not ask for a sign-in just connects.
//
// The Conn must not have been started. A sign-in that does not complete
// (access denied, no answer in time) leaves the Conn in StateNeedsAuth
// and the error wraps ErrNeedsAuth.
func (c *Conn) Login(ctx context.Context, open OpenURLFunc) error {
	if c.srv.Type != config.TypeRemote {
		return fmt.Errorf("signing in to %s: a local server has no sign-in", c.srv.Name)
	}
	if open == nil && c.opts.Auth != nil {
		open = c.opts.Auth.OpenURL
	}
	if open == nil {
		open = OpenBrowser
	}
	return c.start(withoutAnswerer(ctx), open)
}

// failState is the state a connect failure leaves the Conn in.
func failState(err error) State {
	if errors.Is(err, ErrNeedsAuth) {
		return StateNeedsAuth
	}
	return StateFailed
}

// Login signs in to the named remote server and connects it (see
// Conn.Login): the server's current connection, if any, is replaced by a
// new one that signs in. It returns the server's status once connected,
// or once the sign-in failed (StateNeedsAuth).
func (m *Manager) Login(ctx context.Context, name string, open OpenURLFunc) (Status, error) {
	e, err := m.entry(name)
	if err != nil {
		return Status{}, err
	}
	if e.cfg.Type != config.TypeRemote {
		return Status{}, fmt.Errorf("signing in to %s: a local server has no sign-in", name)
	}
	m.stopEntry(e, "stopped") // cancels a start in progress
	e.opMu.Lock()
	defer e.opMu.Unlock()
	m.stopEntry(e, "stopped")
	c, err := m.freshConn(e)
	if err != nil {
		return c.Status(), err
	}
	err = c.Login(ctx, open)
	return c.Status(), err
}

// Logout signs out of the named remote server: it is disconnected
// (StateStopped), its stored tokens are deleted, even if it was not
// running, and the authorization server is asked to revoke them (see
// SignOut). Tokens that were not revoked are logged, and a failure to
// revoke them is the status's LastError; the error is the token store's.
func (m *Manager) Logout(ctx context.Context, name string) (Status, error) {
	e, err := m.entry(name)
	if err != nil {
		return Status{}, err
	}
	st, err := m.Stop(ctx, name)
	if err != nil {
		return st, err
	}
	m.mu.Lock()
	srv, c := e.cfg, e.conn
	m.mu.Unlock()
	res, err := SignOut(ctx, srv, c.lookupEnv(), m.opts.Auth)
	switch {
	case !res.Had || res.Revoked:
		if res.Revoked {
			m.logger.Info("signed out: the authorization server revoked the tokens", "server", name)
		}
	case errors.Is(res.RevokeErr, ErrNoRevocation):
		m.logger.Info("signed out: the tokens were deleted; the authorization server cannot revoke them, so they stay valid there until they expire",
			"server", name, "why", res.RevokeErr)
	default:
		m.logger.Warn("signed out: the tokens were deleted, but revoking them failed, so they stay valid at the authorization server until they expire",
			"server", name, "error", res.RevokeErr)
		st = c.noteStopped("signed out, but the authorization server did not revoke the tokens: " + res.RevokeErr.Error())
	}
	return st, err
}

// noteStopped makes msg the LastError of the stopped Conn, and returns
// (and emits) its status; a Conn started again meanwhile is left alone.
func (c *Conn) noteStopped(msg string) Status {
	c.mu.Lock()
	if c.state != StateStopped {
		defer c.mu.Unlock()
		return c.statusLocked()
	}
	c.lastError = msg
	st := c.statusLocked()
	c.mu.Unlock()
	c.emitStatus(st)
	return st
}

// authTLSConfig is the TLS configuration of auth requests: the server's
// client certificate, and its caBundle added to the system roots rather
// than replacing them, since the authorization server is often run by
// someone else than the MCP server.
func authTLSConfig(srv config.Server) (*tls.Config, error) {
	conf, err := remoteTLSConfig(srv)
	if err != nil {
		return nil, err
	}
	if srv.CABundle != "" {
		pool, err := x509.SystemCertPool()
		if err != nil || pool == nil {
			pool = x509.NewCertPool()
		}
		bundle, err := readPEMFile("caBundle", srv.CABundle)
		if err != nil {
			return nil, err
		}
		pool.AppendCertsFromPEM(bundle)
		conf.RootCAs = pool
	}
	return conf, nil
}

// legacyAuth is the OAuth of the legacy HTTP+SSE transport, which the
// go-sdk gives no OAuthHandler: the remote round tripper sends the flow's
// token with every request to the server's origin, and on a 401 or 403
// authorizes (as the Streamable HTTP transport does) and sends the request
// again, once.
func (rt *remoteRoundTripper) legacyAuth(r *http.Request, send func(*http.Request) (*http.Response, error)) (*http.Response, error) {
	f := rt.rc.auth
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
	f.observe(r, resp)
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
