package mcp

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/freecode/freecode/config"
)

// dialRemote connects to a remote MCP server (Streamable HTTP or legacy
// HTTP+SSE, per srv.Transport) and runs initialize, all within srv.Timeout
// (or ctx's deadline, whichever is first). It returns the session and the
// transport that won: "http" or "sse".
//
// Every request of the session goes through one http.Transport that
// enforces the URL policy at dial time (see dial.go), presents the
// configured TLS roots and client certificate, and adds srv.Headers. Errors
// it returns never hold a header value or a URL secret.
//
// extraSecrets are more values to hide, such as the values ${env:NAME}
// references put into the URL's path.
func dialRemote(ctx context.Context, client *mcpsdk.Client, srv config.Server, sopts *mcpsdk.ClientSessionOptions, logger *slog.Logger, extraSecrets ...string) (*mcpsdk.ClientSession, string, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	rc, err := newRemoteClient(srv, logger, extraSecrets...)
	if err != nil {
		return nil, "", err
	}
	ctx, cancel := context.WithTimeout(ctx, rc.timeout)
	defer cancel()

	mode := srv.Transport
	if mode == "" {
		mode = config.TransportAuto
	}
	var (
		cs  *mcpsdk.ClientSession
		won string
	)
	switch mode {
	case config.TransportHTTP:
		cs, _, err = rc.connectHTTP(ctx, client, sopts)
		won = config.TransportHTTP
	case config.TransportSSE:
		cs, err = rc.connectSSE(ctx, client, sopts)
		won = config.TransportSSE
	case config.TransportAuto:
		var probe *httpProbe
		cs, probe, err = rc.connectHTTP(ctx, client, sopts)
		won = config.TransportHTTP
		if err != nil && ctx.Err() == nil && probe.notStreamable() {
			logger.Info("not a Streamable HTTP server, trying legacy SSE",
				"url", rc.redactor.Replace(redactURL(srv.URL)), "status", probe.status, "contentType", probe.contentType)
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
		if perr := rc.refused.Load(); perr != nil && !errors.Is(err, ErrURLRefused) {
			err = &redactedError{msg: err.Error(), err: perr}
		}
		// A timeout is spelled out by the Conn, which set the deadline.
		return nil, "", rc.redactErr(fmt.Errorf("connecting to %s (%s): %w", redactURL(srv.URL), mode, err))
	}
	// The session owns the pool's keep-alive connections: close them when it
	// ends, so no reader goroutine or socket outlives it.
	go func() {
		_ = cs.Wait()
		rc.transport.CloseIdleConnections()
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
	redactor  *strings.Replacer // hides header values and URL secrets
	timeout   time.Duration     // connect, and one request's wait for an answer
	maxBytes  int               // one message's cap (maxMessageBytes)
	// refused is the first policy refusal of a request the SDK made on
	// its own (a legacy endpoint event): the SDK reports it without its
	// error chain, so dialRemote puts ErrURLRefused back.
	refused atomic.Pointer[policyError]
}

// Headers the transports own; a configured header may not replace them.
var reservedHeaders = []string{
	"Accept", "Content-Type", "Content-Length", "Host", "Last-Event-Id",
	"Mcp-Session-Id", "Mcp-Protocol-Version", "Connection", "Transfer-Encoding",
}

func newRemoteClient(srv config.Server, logger *slog.Logger, extraSecrets ...string) (*remoteClient, error) {
	redactor := newRedactor(append(remoteSecrets(srv), extraSecrets...))
	u, err := url.Parse(srv.URL)
	if err != nil {
		// url.Parse errors quote the whole URL; do not.
		return nil, fmt.Errorf("remote server %q: invalid url %s", srv.Name, redactor.Replace(redactURL(srv.URL)))
	}
	if err := checkURL(u); err != nil {
		err = redactError(redactor, err)
		logger.Warn("refused remote URL", "error", err)
		return nil, err
	}
	timeout := srv.Timeout
	if timeout <= 0 {
		timeout = config.DefaultTimeout
	}
	rc := &remoteClient{logger: logger, real: u, timeout: timeout, headers: make(http.Header, len(srv.Headers)), maxBytes: srv.MaxMessageBytes}
	if rc.maxBytes <= 0 {
		rc.maxBytes = config.DefaultMaxMessageBytes
	}
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

// newRemoteTransport builds the transport of one server. Plain http dials
// loopback only; https dials anything but link-local and metadata
// addresses; both checks run on the resolved address. No proxy: a proxy
// would dial on our behalf, out of the policy's reach.
func newRemoteTransport(tlsConf *tls.Config, timeout time.Duration) *http.Transport {
	plain := newPolicyDialer(timeout, true)
	secure := newPolicyDialer(timeout, false)
	return &http.Transport{
		Proxy:       nil,
		DialContext: plain.DialContext,
		DialTLSContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			conn, err := secure.DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			conf := tlsConf.Clone()
			if conf.ServerName == "" {
				conf.ServerName, _, _ = net.SplitHostPort(addr)
			}
			hctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			tc := tls.Client(conn, conf)
			if err := tc.HandshakeContext(hctx); err != nil {
				conn.Close()
				return nil, err
			}
			return tc, nil
		},
		// HTTP/1.1 with keep-alive: over HTTP/2 a TLS alert (say, a
		// missing client certificate) surfaces as "http2: client conn could
		// not be established", and MCP gains little from multiplexing.
		ForceAttemptHTTP2:     false,
		MaxIdleConns:          32,
		MaxIdleConnsPerHost:   16,
		IdleConnTimeout:       30 * time.Second,
		TLSHandshakeTimeout:   timeout,
		ExpectContinueTimeout: time.Second,
	}
}

// remoteTLSConfig loads caBundle (replacing the system roots) and the
// client certificate for mTLS, with errors that name the file at fault.
func remoteTLSConfig(srv config.Server) (*tls.Config, error) {
	conf := &tls.Config{MinVersion: tls.VersionTLS12, NextProtos: []string{"http/1.1"}}
	if srv.CABundle != "" {
		pool, err := loadCABundle(srv.CABundle)
		if err != nil {
			return nil, err
		}
		conf.RootCAs = pool
	}
	switch {
	case srv.ClientCert == "" && srv.ClientKey == "":
	case srv.ClientCert == "":
		return nil, fmt.Errorf("clientKey %s is set but clientCert is not: mTLS needs both", srv.ClientKey)
	case srv.ClientKey == "":
		return nil, fmt.Errorf("clientCert %s is set but clientKey is not: mTLS needs both", srv.ClientCert)
	default:
		certPEM, err := readPEMFile("clientCert", srv.ClientCert)
		if err != nil {
			return nil, err
		}
		keyPEM, err := readPEMFile("clientKey", srv.ClientKey)
		if err != nil {
			return nil, err
		}
		cert, err := tls.X509KeyPair(certPEM, keyPEM)
		if err != nil {
			if strings.Contains(err.Error(), "does not match") {
				return nil, fmt.Errorf("clientKey %s does not match clientCert %s", srv.ClientKey, srv.ClientCert)
			}
			// X509KeyPair's errors hold no key material.
			return nil, fmt.Errorf("clientCert %s / clientKey %s: %w", srv.ClientCert, srv.ClientKey, err)
		}
		conf.Certificates = []tls.Certificate{cert}
	}
	return conf, nil
}

func readPEMFile(field, path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s %s: file not found", field, path)
		}
		return nil, fmt.Errorf("%s %s: %w", field, path, err)
	}
	return data, nil
}

// loadCABundle reads a PEM file of CA certificates. Unlike
// x509.CertPool.AppendCertsFromPEM, it says what is wrong with a bad file.
func loadCABundle(path string) (*x509.CertPool, error) {
	data, err := readPEMFile("caBundle", path)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	n := 0
	for rest := data; ; {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			break
		}
		if block.Type != "CERTIFICATE" {
			continue
		}
		n++
		cert, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("caBundle %s: certificate %d: %w", path, n, err)
		}
		pool.AddCert(cert)
	}
	if n == 0 {
		return nil, fmt.Errorf("caBundle %s: no PEM CERTIFICATE block found", path)
	}
	return pool, nil
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
		CheckRedirect: checkRedirect,
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

func (rc *remoteClient) redactErr(err error) error { return redactError(rc.redactor, err) }

// redactError returns err with r's secrets shown as ***; it unwraps to err.
func redactError(r *strings.Replacer, err error) error {
	if err == nil || r == nil {
		return err
	}
	msg := err.Error()
	if red := r.Replace(msg); red != msg {
		return &redactedError{msg: red, err: err}
	}
	return err
}

// remoteSecrets lists what of a remote server's (expanded) entry must never
// be shown: header values (and a bearer token without its scheme), the
// URL's password and query values.
func remoteSecrets(srv config.Server) []string {
	var secrets []string
	for _, value := range srv.Headers {
		secrets = append(secrets, value)
		// Bearer tokens also show up without their scheme.
		if _, tok, ok := strings.Cut(value, " "); ok {
			secrets = append(secrets, tok)
		}
	}
	u, err := url.Parse(srv.URL)
	if err != nil {
		return secrets
	}
	if p, ok := u.User.Password(); ok {
		secrets = append(secrets, p)
	}
	for _, vs := range u.Query() {
		secrets = append(secrets, vs...)
	}
	if u.RawQuery != "" {
		secrets = append(secrets, u.RawQuery)
	}
	return secrets
}

// urlEnvValues returns the values that ${env:NAME} references put into
// raw: a key in a URL's path (https://host/<key>/sse) is as secret as one
// in its query, and only the references say which part it is.
func urlEnvValues(raw string, lookup func(string) (string, bool)) []string {
	var vals []string
	_, _ = config.Expand(raw, func(name string) (string, bool) {
		v, ok := lookup(name)
		if ok {
			vals = append(vals, v)
		}
		return v, ok
	})
	return vals
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

// errNoAnswer is the cause of a request cut off for want of an answer.
var errNoAnswer = errors.New("server did not answer the request in time")

// remoteRoundTripper adds the configured headers and URL secrets to each
// request, bounds the wait for an answer, and turns "unknown session"
// answers into the 404 the SDK understands as the end of the session.
type remoteRoundTripper struct {
	rc     *remoteClient
	legacy bool
	probe  *httpProbe
}

func (rt *remoteRoundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	rc := rt.rc
	// A legacy SSE server names the URL the client POSTs to (its endpoint
	// event), and the SDK follows it anywhere. Like the TypeScript SDK,
	// accept only the server's own origin: otherwise a remote server could
	// aim the sidecar's POSTs at another host, or at a service on the
	// user's loopback. (A redirect of a POST is vetted by checkRedirect.)
	if rt.legacy && req.Method == http.MethodPost && req.Response == nil && !sameOrigin(req.URL, rc.real) {
		rc.logger.Warn("refused legacy SSE message endpoint", "url", redactURL(req.URL.String()))
		perr := &policyError{target: redactURL(req.URL.String()), rule: ruleSSEOrigin}
		rc.refused.CompareAndSwap(nil, perr)
		return nil, perr
	}
	// Bound the wait for the response headers, not the body: a Streamable
	// HTTP answer streams for as long as the tool runs. A call with its own
	// deadline keeps it, except on legacy SSE where the answer is only a
	// 202; notifications and responses get a 202 at once on both.
	bound := false
	if req.Method == http.MethodPost {
		_, hasDeadline := req.Context().Deadline()
		bound = rt.legacy || !hasDeadline || !isCall(req)
	}
	ctx, cancel := req.Context(), context.CancelCauseFunc(nil)
	if bound {
		ctx, cancel = boundContext(ctx)
	}
	r := req.WithContext(ctx) // a shallow copy: the caller's request is not ours to change
	// Secrets go only to the configured origin: a redirect elsewhere (even
	// one the policy allows) gets none of them.
	if u := r.URL; u.Scheme == rc.real.Scheme && u.Host == rc.real.Host {
		r.Header = make(http.Header, len(req.Header)+len(rc.headers)+1)
		for k, v := range req.Header {
			r.Header[k] = v
		}
		for k, v := range rc.headers {
			r.Header[k] = v
		}
		if rc.real.RawQuery != "" {
			r.URL = rc.withQuery(u)
		}
		if rc.real.User != nil && r.Header.Get("Authorization") == "" {
			pass, _ := rc.real.User.Password()
			r.SetBasicAuth(rc.real.User.Username(), pass)
		}
	}

	var timer *time.Timer
	if bound {
		timer = time.AfterFunc(rc.timeout, func() { cancel(errNoAnswer) })
	}
	resp, err := rc.transport.RoundTrip(r)
	if bound {
		timer.Stop()
		if err != nil {
			if errors.Is(context.Cause(ctx), errNoAnswer) {
				err = fmt.Errorf("%s %s: no answer within %v: %w", r.Method, rc.endpoint, rc.timeout, errors.Join(errNoAnswer, context.DeadlineExceeded))
			}
			cancel(nil)
			return nil, err
		}
	}
	if err != nil {
		return nil, err
	}
	// The SDK closes a 202's body unread; net/http then closes the
	// connection instead of reusing it, and every legacy SSE call paid for
	// a new TCP connection. A small body, or a 202's (express sends
	// "Accepted" chunked), is drained on close.
	drain := (resp.ContentLength >= 0 && resp.ContentLength <= maxDrain) ||
		(resp.StatusCode == http.StatusAccepted && !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream"))
	if bound || drain {
		resp.Body = &responseBody{ReadCloser: resp.Body, cancel: cancel, drain: drain, timeout: rc.timeout}
	}
	if req.Method == http.MethodPost {
		rt.probe.record(resp)
		// The SDK reads a JSON answer whole, with no bound: a server
		// sending gigabytes would take the sidecar's memory down with it.
		if ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); ct == "application/json" {
			resp.Body = &cappedBody{ReadCloser: resp.Body, left: int64(rc.maxBytes)}
		}
	}
	if resp.StatusCode >= 400 && !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		rt.redactBody(resp)
	}
	if req.Method == http.MethodPost && !rt.legacy {
		resp = rt.checkSession(r, resp)
	}
	return resp, nil
}

// redactBody replaces an error response's body with a copy in which the
// configured secrets are ***: the SDK quotes error bodies in its errors,
// and a server may echo the token it rejected.
func (rt *remoteRoundTripper) redactBody(resp *http.Response) {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxDrain))
	resp.Body.Close()
	body = []byte(rt.rc.redactor.Replace(string(body)))
	resp.Body = io.NopCloser(bytes.NewReader(body))
	resp.ContentLength = int64(len(body))
}

// withQuery returns u with the configured URL's query parameters added
// where u lacks them: the endpoint itself, and a legacy SSE server's
// message URL (which carries its own sessionId).
func (rc *remoteClient) withQuery(u *url.URL) *url.URL {
	out := *u
	if u.RawQuery == "" {
		out.RawQuery = rc.real.RawQuery
		return &out
	}
	q := u.Query()
	for k, vs := range rc.query {
		if !q.Has(k) {
			q[k] = vs
		}
	}
	out.RawQuery = q.Encode()
	return &out
}

// isCall reports whether a POST carries a JSON-RPC request that expects an
// answer (as opposed to a notification or a response). When it cannot
// tell, it says yes: the request then keeps its own deadline.
func isCall(req *http.Request) bool {
	// From protocol 2026-07-28 on the SDK names the method in a header,
	// which spares decoding the body.
	if m := req.Header.Get("Mcp-Method"); m != "" {
		return !strings.HasPrefix(m, "notifications/")
	}
	if req.GetBody == nil {
		return true
	}
	body, err := req.GetBody()
	if err != nil {
		return true
	}
	defer body.Close()
	// Read the top-level keys only, up to params/result/error: the SDK
	// writes jsonrpc, id, method first, so this costs the same for a 1 MB
	// argument as for none.
	dec := json.NewDecoder(body)
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return true
	}
	hasID, hasMethod := false, false
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return true
		}
		switch key {
		case "params", "result", "error":
			return hasID && hasMethod
		}
		val, err := dec.Token()
		if err != nil {
			return true
		}
		if _, nested := val.(json.Delim); nested {
			return true // not a shape the SDK writes
		}
		switch key {
		case "id":
			hasID = val != nil
		case "method":
			m, _ := val.(string)
			hasMethod = m != ""
		}
	}
	return hasID && hasMethod
}

// checkSession spots the answer of a server that no longer knows our
// session: 404 (the spec), or 400 naming the session (TypeScript SDK
// servers). The SDK ends the session only on a bare 404, so that is what it
// gets; the Conn then re-initializes.
func (rt *remoteRoundTripper) checkSession(req *http.Request, resp *http.Response) *http.Response {
	sid := req.Header.Get("Mcp-Session-Id")
	if sid == "" || (resp.StatusCode != http.StatusNotFound && resp.StatusCode != http.StatusBadRequest) {
		return resp
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	resp.Body.Close()
	if resp.StatusCode == http.StatusBadRequest && !bytes.Contains(bytes.ToLower(body), []byte("session")) {
		resp.Body = io.NopCloser(bytes.NewReader(body))
		return resp
	}
	rt.rc.logger.Info("remote session expired, the server no longer knows it", "status", resp.StatusCode)
	return &http.Response{
		Status:     "404 Not Found",
		StatusCode: http.StatusNotFound,
		Proto:      resp.Proto,
		ProtoMajor: resp.ProtoMajor,
		ProtoMinor: resp.ProtoMinor,
		Header:     http.Header{"Content-Type": {"text/plain"}},
		Body:       http.NoBody,
		Request:    req,
	}
}

// boundContext is a cancellable child of ctx; RoundTrip cancels it with
// errNoAnswer when the answer is late, or when the response body closes.
func boundContext(ctx context.Context) (context.Context, context.CancelCauseFunc) {
	return context.WithCancelCause(ctx)
}

// maxDrain bounds what closing a response body reads to keep its
// connection for reuse.
const maxDrain = 64 << 10

// responseBody drains a small body before closing it (so the connection
// goes back to the pool) and releases the request's context.
type responseBody struct {
	io.ReadCloser
	cancel  context.CancelCauseFunc // nil if the request had none of ours
	drain   bool
	timeout time.Duration // bounds the drain: a body that never ends is closed
}

func (b *responseBody) Close() error {
	if b.drain {
		t := time.AfterFunc(b.timeout, func() { b.ReadCloser.Close() })
		io.CopyN(io.Discard, b.ReadCloser, maxDrain)
		t.Stop()
	}
	err := b.ReadCloser.Close()
	if b.cancel != nil {
		b.cancel(nil)
	}
	return err
}

// errTooLarge is the read error of an answer over maxMessageBytes.
var errTooLarge = errors.New("answer exceeds maxMessageBytes")

// cappedBody fails a response body that grows past left bytes, so reading
// it whole never holds more than the cap. The session then ends and the
// Conn reconnects.
type cappedBody struct {
	io.ReadCloser
	left int64
}

func (b *cappedBody) Read(p []byte) (int, error) {
	if b.left < 0 {
		return 0, errTooLarge
	}
	if int64(len(p)) > b.left+1 {
		p = p[:b.left+1]
	}
	n, err := b.ReadCloser.Read(p)
	b.left -= int64(n)
	if b.left < 0 {
		return 0, errTooLarge
	}
	return n, err
}

// sseTransport wraps the SDK's legacy SSE transport:
//   - the SDK ties the long-lived GET stream to the context given to
//     Connect, which is our connect timeout: detach it, and cancel it only
//     if Connect itself does not finish in time, or when the session closes;
//   - a POST that fails (a legacy server never answers a POST for a session
//     it lost) ends the session, and errors wrap ErrConnectionLost.
type sseTransport struct {
	inner *mcpsdk.SSEClientTransport
}

func (t *sseTransport) Connect(ctx context.Context) (mcpsdk.Connection, error) {
	streamCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, cancel)
	conn, err := t.inner.Connect(streamCtx)
	if !stop() {
		// ctx ended while connecting.
		if err == nil {
			conn.Close()
		}
		cancel()
		return nil, errors.Join(err, ctx.Err())
	}
	if err != nil {
		cancel()
		return nil, err
	}
	return &sseConn{Connection: conn, cancel: cancel}, nil
}

type sseConn struct {
	mcpsdk.Connection
	cancel context.CancelFunc // ends the GET stream

	mu     sync.Mutex
	lost   error // why the session ended, if not by Close
	closed bool
}

func (c *sseConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	err := c.Connection.Write(ctx, msg)
	if err == nil || ctx.Err() != nil {
		return err
	}
	return c.lose(fmt.Errorf("sending to the legacy SSE endpoint: %w", err))
}

func (c *sseConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if err == nil || ctx.Err() != nil {
		return msg, err
	}
	c.mu.Lock()
	lost, closed := c.lost, c.closed
	c.mu.Unlock()
	switch {
	case lost != nil:
		return nil, lost
	case closed:
		return nil, err
	}
	return nil, c.lose(fmt.Errorf("legacy SSE stream ended: %w", err))
}

// lose ends the session for a transport failure and returns the error that
// in-flight calls get.
func (c *sseConn) lose(cause error) error {
	c.mu.Lock()
	if c.lost == nil && !c.closed {
		c.lost = fmt.Errorf("%w: %w", ErrConnectionLost, cause)
	}
	lost := c.lost
	c.mu.Unlock()
	c.Connection.Close()
	c.cancel()
	if lost == nil {
		return cause
	}
	return lost
}

func (c *sseConn) Close() error {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	err := c.Connection.Close()
	c.cancel()
	return err
}

// redactedError shows a message with secrets replaced by ***, and unwraps
// to the original error so errors.Is still works.
type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

// newRedactor replaces each secret with ***. Secrets shorter than 4 bytes
// are skipped: replacing "a" everywhere would garble the message and
// protects nothing.
func newRedactor(secrets []string) *strings.Replacer {
	var keep []string
	for _, s := range secrets {
		if len(s) >= 4 {
			keep = append(keep, s)
		}
	}
	// Longest first, so a secret that contains another is hidden whole.
	slices.SortFunc(keep, func(a, b string) int { return len(b) - len(a) })
	keep = slices.Compact(keep)
	pairs := make([]string, 0, 2*len(keep))
	for _, s := range keep {
		pairs = append(pairs, s, "***")
		if q := url.QueryEscape(s); q != s {
			pairs = append(pairs, q, "***")
		}
	}
	return strings.NewReplacer(pairs...)
}

// redactHeaders returns headers with every value shown as ***: the form in
// which headers may appear in status, logs and errors.
func redactHeaders(h map[string]string) map[string]string {
	if h == nil {
		return nil
	}
	out := make(map[string]string, len(h))
	for k := range h {
		out[k] = "***"
	}
	return out
}

// redactURL returns u with its userinfo and query values shown as ***, and
// its fragment dropped: the form in which a URL may be logged.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "<invalid URL>"
	}
	hadUser := u.User != nil
	u.User = nil
	if u.RawQuery != "" {
		q := u.Query()
		for k := range q {
			q[k] = []string{"***"}
		}
		u.RawQuery = strings.ReplaceAll(q.Encode(), "%2A", "*")
	}
	u.Fragment, u.RawFragment = "", ""
	out := u.String()
	if hadUser {
		out = strings.Replace(out, "//", "//***@", 1)
	}
	return out
}
