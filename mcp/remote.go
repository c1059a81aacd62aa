package mcp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/freecode/freecode/config"
	"github.com/freecode/freecode/internal/urlpolicy"
	"github.com/freecode/freecode/mcp/oauth"
)

// dialRemote connects to a remote MCP server (Streamable HTTP or legacy
// HTTP+SSE, per srv.Transport) and runs initialize, all within srv.Timeout
// (or ctx's deadline, whichever is first). It returns the session and the
// transport that won: "http" or "sse". srv has its defaults filled in
// (NewConn does it).
//
// Every request of the session goes through one http.Transport that
// enforces the URL policy at dial time (see dial.go), presents the
// configured TLS roots and client certificate, and adds srv.Headers. Errors
// it returns never hold a header value or a URL secret.
//
// extraSecrets are more values to hide, such as the values ${env:NAME}
// references put into the URL's path.
func dialRemote(ctx context.Context, client *mcpsdk.Client, srv config.Server, sopts *mcpsdk.ClientSessionOptions, logger *slog.Logger, extraSecrets ...string) (*mcpsdk.ClientSession, string, error) {
	return dialRemoteAuth(ctx, client, srv, sopts, logger, nil, extraSecrets...)
}

// dialRemoteAuth is dialRemote with the OAuth sign-in of flow (nil for
// none): the transport asks it for tokens and calls it on a 401 or 403.
func dialRemoteAuth(ctx context.Context, client *mcpsdk.Client, srv config.Server, sopts *mcpsdk.ClientSessionOptions, logger *slog.Logger, flow *oauth.Flow, extraSecrets ...string) (*mcpsdk.ClientSession, string, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	rc, err := newRemoteClient(srv, logger, extraSecrets...)
	if err != nil {
		return nil, "", err
	}
	timeout := rc.timeout
	if flow != nil {
		client, _, err := newAuthClient(srv, rc.timeout)
		if err != nil {
			return nil, "", err
		}
		flow.Bind(client)
		rc.auth = flow
		timeout = flow.ConnectTimeout(timeout)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	mode := srv.Transport
	var (
		cs    *mcpsdk.ClientSession
		won   string
		probe *httpProbe
	)
	switch mode {
	case config.TransportHTTP:
		cs, probe, err = rc.connectHTTP(ctx, client, sopts)
		won = config.TransportHTTP
	case config.TransportSSE:
		cs, err = rc.connectSSE(ctx, client, sopts)
		won = config.TransportSSE
	case config.TransportAuto:
		cs, probe, err = rc.connectHTTP(ctx, client, sopts)
		won = config.TransportHTTP
		if err != nil && ctx.Err() == nil && probe.notStreamable() {
			logger.Info("not a Streamable HTTP server, trying legacy SSE",
				"url", rc.red().String(urlpolicy.RedactURL(srv.URL)), "status", probe.status, "contentType", probe.contentType)
			httpErr := err
			cs, err = rc.connectSSE(ctx, client, sopts)
			won = config.TransportSSE
			if err != nil {
				err = fmt.Errorf("as Streamable HTTP: %v; as legacy SSE: %w", httpErr, err)
			}
		}
	default:
		err = fmt.Errorf("unknown transport %q (want %q, %q or %q)", mode, config.TransportHTTP, config.TransportSSE, config.TransportAuto)
	}
	if err != nil {
		rc.transport.CloseIdleConnections()
		flow.CloseIdle()
		if perr := rc.refused.Load(); perr != nil && !errors.Is(err, ErrURLRefused) {
			err = &causedError{msg: err.Error(), cause: perr}
		}
		// A timeout is spelled out by the Conn, which set the deadline.
		u := urlpolicy.RedactURL(srv.URL)
		return nil, "", rc.red().Error(remoteFailure(u, probe, fmt.Errorf("connecting to %s (%s): %w", u, mode, err)))
	}
	// The session owns the pool's keep-alive connections: close them when it
	// ends, so no reader goroutine or socket outlives it.
	go func() {
		_ = cs.Wait()
		rc.transport.CloseIdleConnections()
		flow.CloseIdle()
	}()
	return cs, won, nil
}

// remoteClient is the HTTP side of one remote server: one http.Transport
// (so one keep-alive pool) shared by every request of a session.
type remoteClient struct {
	logger    *slog.Logger
	transport *http.Transport
	endpoint  string     // the URL without userinfo and query: what the SDK sees and prints
	real      *url.URL   // the configured URL, with its secrets
	query     url.Values // real's query
	headers   http.Header
	redactor  *urlpolicy.Redactor // hides header values and URL secrets
	timeout   time.Duration       // connect, and one request's wait for an answer
	maxBytes  int                 // one message's cap (maxMessageBytes)
	// refused is the first policy refusal of a request the SDK made on
	// its own (a legacy endpoint event): the SDK reports it without its
	// error chain, so dialRemote puts ErrURLRefused back.
	refused atomic.Pointer[urlpolicy.Error]
	auth    *oauth.Flow // the sign-in, or nil
}

// red returns the redactor of the session's secrets, tokens included.
func (rc *remoteClient) red() *urlpolicy.Redactor {
	if rc.auth != nil {
		return rc.auth.Redactor()
	}
	return rc.redactor
}

// oauthHandler returns what the Streamable HTTP transport signs in with:
// nil (not a nil *oauth.Flow) when there is no sign-in.
func (rc *remoteClient) oauthHandler() auth.OAuthHandler {
	if rc.auth == nil {
		return nil
	}
	return rc.auth
}

// Headers the transports own; a configured header may not replace them.
var reservedHeaders = []string{
	"Accept", "Content-Type", "Content-Length", "Host", "Last-Event-Id",
	"Mcp-Session-Id", "Mcp-Protocol-Version", "Connection", "Transfer-Encoding",
}

func newRemoteClient(srv config.Server, logger *slog.Logger, extraSecrets ...string) (*remoteClient, error) {
	redactor := urlpolicy.NewRedactor(append(remoteSecrets(srv), extraSecrets...)...)
	u, err := url.Parse(srv.URL)
	if err != nil {
		// url.Parse errors quote the whole URL; do not.
		return nil, fmt.Errorf("remote server %q: invalid url %s", srv.Name, redactor.String(urlpolicy.RedactURL(srv.URL)))
	}
	if err := urlpolicy.Check(u); err != nil {
		err = redactor.Error(err)
		logger.Warn("refused remote URL", "error", err)
		return nil, err
	}
	timeout := srv.Timeout
	rc := &remoteClient{logger: logger, real: u, timeout: timeout, headers: make(http.Header, len(srv.Headers)), maxBytes: srv.MaxMessageBytes}
	bare := *u
	bare.User, bare.RawQuery, bare.ForceQuery, bare.Fragment, bare.RawFragment = nil, "", false, "", ""
	rc.endpoint = bare.String()

	for name, value := range srv.Headers {
		if !validHeaderName(name) {
			return nil, fmt.Errorf("header %q: not a valid header name", name)
		}
		if strings.ContainsAny(value, "\r\n\x00") {
			return nil, fmt.Errorf("header %q: value holds a line break or NUL", name)
		}
		key := http.CanonicalHeaderKey(name)
		if slices.Contains(reservedHeaders, key) {
			return nil, fmt.Errorf("header %q: set by the MCP transport, cannot be configured", name)
		}
		rc.headers.Set(key, value)
	}
	rc.query = u.Query()
	rc.redactor = redactor

	tlsConf, err := remoteTLSConfig(srv)
	if err != nil {
		return nil, err
	}
	rc.transport = newRemoteTransport(tlsConf, timeout)
	return rc, nil
}

func validHeaderName(name string) bool {
	if name == "" {
		return false
	}
	for _, r := range name {
		// RFC 9110 token characters.
		if r > 0x7e || r <= ' ' || strings.ContainsRune(`"(),/:;<=>?@[\]{}`, r) {
			return false
		}
	}
	return true
}

// httpClient returns an http.Client over the server's transport.
// legacy selects the legacy SSE behaviour: every POST must be answered
// within the timeout (a legacy server never answers a POST for a session it
// does not know).
func (rc *remoteClient) httpClient(legacy bool, probe *httpProbe) *http.Client {
	return &http.Client{
		Transport:     &remoteRoundTripper{rc: rc, legacy: legacy, probe: probe},
		CheckRedirect: urlpolicy.CheckRedirect,
	}
}

// connectHTTP connects over Streamable HTTP. The probe records the answer to
// the first POST (initialize), so that "auto" can tell a server that does
// not speak Streamable HTTP from one that failed.
func (rc *remoteClient) connectHTTP(ctx context.Context, client *mcpsdk.Client, sopts *mcpsdk.ClientSessionOptions) (*mcpsdk.ClientSession, *httpProbe, error) {
	probe := new(httpProbe)
	t := &mcpsdk.StreamableClientTransport{
		Endpoint:   rc.endpoint,
		HTTPClient: rc.httpClient(false, probe),
		// Resume a broken stream a few times, then let the session end so
		// the Conn reconnects with its own backoff.
		MaxRetries:   3,
		MaxEventSize: rc.maxBytes,
		OAuthHandler: rc.oauthHandler(),
	}
	cs, err := client.Connect(ctx, t, sopts)
	return cs, probe, err
}

// connectSSE connects over legacy HTTP+SSE.
func (rc *remoteClient) connectSSE(ctx context.Context, client *mcpsdk.Client, sopts *mcpsdk.ClientSessionOptions) (*mcpsdk.ClientSession, error) {
	t := &sseTransport{inner: &mcpsdk.SSEClientTransport{
		Endpoint:     rc.endpoint,
		HTTPClient:   rc.httpClient(true, nil),
		MaxEventSize: rc.maxBytes,
	}}
	return client.Connect(ctx, t, sopts)
}

// httpProbe is what the first POST of a Streamable HTTP attempt got back.
type httpProbe struct {
	once        sync.Once
	seen        atomic.Bool // publishes status and contentType
	status      int
	contentType string
}

func (p *httpProbe) record(resp *http.Response) {
	if p == nil || p.seen.Load() {
		return
	}
	p.once.Do(func() {
		p.status = resp.StatusCode
		p.contentType, _, _ = mime.ParseMediaType(resp.Header.Get("Content-Type"))
		p.seen.Store(true)
	})
}

// notStreamable reports whether the answer to initialize says "this is not
// a Streamable HTTP endpoint" (so a legacy SSE server may live there), as
// opposed to a failure of a Streamable HTTP server: an auth error, a
// timeout, a TLS error or a refused URL never make "auto" fall back.
func (p *httpProbe) notStreamable() bool {
	if p == nil || !p.seen.Load() {
		return false
	}
	switch p.status {
	case http.StatusNotFound, http.StatusMethodNotAllowed:
		return true
	case http.StatusUnauthorized, http.StatusForbidden, http.StatusProxyAuthRequired,
		http.StatusRequestTimeout, http.StatusTooManyRequests:
		return false
	}
	// Any other 4xx that is not JSON-RPC (HTML from a web framework, plain
	// text from a legacy SSE endpoint): a Streamable HTTP server answers a
	// bad initialize with a JSON-RPC error.
	return p.status >= 400 && p.status < 500 &&
		p.contentType != "application/json" && p.contentType != "text/event-stream"
}
