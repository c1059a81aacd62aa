package mcp

// A remote server's OAuth sign-in is package oauth's; this file is where
// the Conn and the Manager meet it: Login, Logout, SignOut, and the HTTP
// client of the sign-in's requests, which only this package can build
// (the URL policy's dialer, the entry's TLS settings).

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/freecode/freecode/config"
	"github.com/freecode/freecode/internal/urlpolicy"
	"github.com/freecode/freecode/mcp/oauth"
)

// Login connects the remote server like Start, except that when the server
// asks for an OAuth sign-in, the user is shown the authorization server's
// page through open (nil means oauth.Options.OpenURL, else
// oauth.OpenBrowser) and the Conn waits, within ctx and
// oauth.Options.LoginWait, for the browser to come back to a loopback
// callback on 127.0.0.1. Tokens already stored are
// not used: Login signs in anew, and on success stores the new tokens in
// their place. A server that does not ask for a sign-in just connects.
//
// The Conn must not have been started. A sign-in that does not complete
// (access denied, no answer in time) leaves the Conn in StateNeedsAuth
// and the error wraps oauth.ErrNeedsAuth.
func (c *Conn) Login(ctx context.Context, open oauth.OpenURLFunc) error {
	if c.srv.Type != config.TypeRemote {
		return fmt.Errorf("signing in to %s: a local server has no sign-in", c.srv.Name)
	}
	if open == nil && c.opts.Auth != nil {
		open = c.opts.Auth.OpenURL
	}
	if open == nil {
		open = oauth.OpenBrowser
	}
	return c.start(ctx, open)
}

// failState is the state a connect failure leaves the Conn in.
func failState(err error) State {
	if errors.Is(err, oauth.ErrNeedsAuth) {
		return StateNeedsAuth
	}
	return StateFailed
}

// Login signs in to the named remote server and connects it (see
// Conn.Login): the server's current connection, if any, is replaced by a
// new one that signs in. It returns the server's status once connected,
// or once the sign-in failed (StateNeedsAuth).
func (m *Manager) Login(ctx context.Context, name string, open oauth.OpenURLFunc) (Status, error) {
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
	case errors.Is(res.RevokeErr, oauth.ErrNoRevocation):
		m.logger.Info("signed out: the tokens were deleted; the authorization server cannot revoke them, so they stay valid there until they expire",
			"server", name, "why", res.RevokeErr)
	default:
		m.logger.Warn("signed out: the tokens were deleted, but revoking them failed, so they stay valid at the authorization server until they expire",
			"server", name, "error", res.RevokeErr)
		st = c.noteStopped("signed out, but the authorization server did not revoke the tokens: " + res.RevokeErr.Error())
	}
	return st, err
}

// SignOut signs out of the remote server srv, an entry as configured, as
// oauth.SignOut does, its requests to the authorization server going
// through the same URL policy and TLS settings as the server's own.
func SignOut(ctx context.Context, srv config.Server, lookup func(string) (string, bool), opts *oauth.Options) (oauth.SignOutResult, error) {
	return oauth.SignOut(ctx, srv, lookup, opts, func(timeout time.Duration) (*http.Client, error) {
		client, _, err := newAuthClient(srv, timeout)
		return client, err
	})
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

// newAuthClient returns the HTTP client of requests to an authorization
// server for the remote server srv: the URL policy at dial time, srv's TLS
// settings with the system roots kept (an authorization server usually
// lives elsewhere), no proxy. Its transport's idle connections are the
// caller's to close.
func newAuthClient(srv config.Server, timeout time.Duration) (*http.Client, *http.Transport, error) {
	conf, err := authTLSConfig(srv)
	if err != nil {
		return nil, nil, err
	}
	transport := newRemoteTransport(conf, timeout)
	return &http.Client{
		Transport:     transport,
		CheckRedirect: urlpolicy.CheckRedirect,
		Timeout:       timeout,
	}, transport, nil
}
