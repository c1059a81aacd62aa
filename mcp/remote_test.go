package mcp

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/freecode/freecode/config"
	"github.com/freecode/freecode/internal/mcptest"
	"github.com/freecode/freecode/internal/urlpolicy"
)

// remoteHangGuard bounds a test that would otherwise hang on a bug; it is
// never what a test asserts.
const remoteHangGuard = 30 * time.Second

// newTestClient declares no capabilities (the SDK's default declares
// roots, for which server-everything adds a 14th tool).
func newTestClient() *mcpsdk.Client {
	return mcpsdk.NewClient(&mcpsdk.Implementation{Name: "freecode-test", Version: "0"},
		&mcpsdk.ClientOptions{Capabilities: &mcpsdk.ClientCapabilities{}})
}

// goSDKHandler serves the in-process test server over Streamable HTTP or
// legacy SSE. Sessions a client left behind (it never sent DELETE, or
// was told the session is gone) are closed when the test ends.
func goSDKHandler(t testing.TB, transport string) http.Handler {
	return mcptest.HTTPHandler(t, newTestServer(io.Discard, false), transport)
}

// requestLog records the requests a test server saw.
type requestLog struct {
	mu   sync.Mutex
	reqs []*http.Request
}

func (l *requestLog) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		l.mu.Lock()
		l.reqs = append(l.reqs, r.Clone(context.Background()))
		l.mu.Unlock()
		h.ServeHTTP(w, r)
	})
}

func (l *requestLog) all() []*http.Request {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]*http.Request(nil), l.reqs...)
}

func remoteServer(url, transport string) config.Server {
	return config.Server{Name: "remote", Type: config.TypeRemote, URL: url, Transport: transport, Timeout: remoteHangGuard}.WithDefaults()
}

// dialAndEcho connects, checks the transport that won, lists tools and
// calls echo.
func dialAndEcho(t *testing.T, srv config.Server, wantTransport string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), remoteHangGuard)
	defer cancel()
	cs, transport, err := dialRemote(ctx, newTestClient(), srv, nil, nil)
	if err != nil {
		t.Fatalf("dialRemote: %v", err)
	}
	defer cs.Close()
	if transport != wantTransport {
		t.Errorf("transport = %q, want %q", transport, wantTransport)
	}
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatalf("ListTools: %v", err)
	}
	if len(tools.Tools) == 0 {
		t.Errorf("ListTools returned no tools")
	}
	res, err := cs.CallTool(ctx, &mcpsdk.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi there"}})
	if err != nil {
		t.Fatalf("CallTool: %v", err)
	}
	if got := res.Content[0].(*mcpsdk.TextContent).Text; got != "hi there" {
		t.Errorf("echo = %q, want %q", got, "hi there")
	}
}

func TestDialRemoteTransports(t *testing.T) {
	for _, tc := range []struct {
		name, serves, path, transport, want string
	}{
		{"http", config.TransportHTTP, "/mcp", config.TransportHTTP, config.TransportHTTP},
		{"sse", config.TransportSSE, "/sse", config.TransportSSE, config.TransportSSE},
		{"auto on http", config.TransportHTTP, "/mcp", config.TransportAuto, config.TransportHTTP},
		{"empty is auto", config.TransportHTTP, "/mcp", "", config.TransportHTTP},
		{"auto falls back to sse", config.TransportSSE, "/sse", config.TransportAuto, config.TransportSSE},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mux := http.NewServeMux()
			mux.Handle(tc.path, goSDKHandler(t, tc.serves))
			ts := httptest.NewServer(mux)
			defer ts.Close()
			dialAndEcho(t, remoteServer(ts.URL+tc.path, tc.transport), tc.want)
		})
	}
}

// TestDialRemoteAutoNoFallback: an auth failure, a server error or a
// timeout is not "this is no Streamable HTTP server": auto must not retry
// over SSE.
func TestDialRemoteAutoNoFallback(t *testing.T) {
	for _, tc := range []struct {
		name   string
		status int
		ctype  string
	}{
		{"401", http.StatusUnauthorized, "text/html"},
		{"403", http.StatusForbidden, "text/html"},
		{"400 json", http.StatusBadRequest, "application/json"},
		{"408", http.StatusRequestTimeout, "text/html"},
		{"500", http.StatusInternalServerError, "text/html"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var log requestLog
			ts := httptest.NewServer(log.wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", tc.ctype)
				w.WriteHeader(tc.status)
				io.WriteString(w, "<html>no</html>")
			})))
			defer ts.Close()
			srv := remoteServer(ts.URL+"/mcp", config.TransportAuto)
			_, _, err := dialRemote(context.Background(), newTestClient(), srv, nil, nil)
			if err == nil {
				t.Fatal("dialRemote succeeded, want an error")
			}
			for _, r := range log.all() {
				if r.Method == http.MethodGet {
					t.Errorf("auto fell back to SSE (GET %s) after a %d", r.URL.Path, tc.status)
				}
			}
		})
	}
}

// testPKI is a private CA with a server certificate for 127.0.0.1 and a
// client certificate, written as PEM files.
type testPKI struct {
	caPool                         *x509.CertPool
	serverCert                     tls.Certificate
	caFile, clientCert, clientKey  string
	otherKey, garbageFile, keyOnly string
}

func newTestPKI(t *testing.T) *testPKI {
	t.Helper()
	dir := t.TempDir()
	newKey := func() *ecdsa.PrivateKey {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	writePEM := func(name, typ string, der []byte) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	keyDER := func(k *ecdsa.PrivateKey) []byte {
		der, err := x509.MarshalECPrivateKey(k)
		if err != nil {
			t.Fatal(err)
		}
		return der
	}
	now := time.Now()
	caKey := newKey()
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "freecode test CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	issue := func(serial int64, usage x509.ExtKeyUsage, key *ecdsa.PrivateKey) []byte {
		tmpl := &x509.Certificate{
			SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: "leaf"},
			NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
			KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage},
			IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		return der
	}
	srvKey, cliKey := newKey(), newKey()
	srvDER := issue(2, x509.ExtKeyUsageServerAuth, srvKey)
	p := &testPKI{caPool: x509.NewCertPool()}
	p.caPool.AddCert(ca)
	p.serverCert = tls.Certificate{Certificate: [][]byte{srvDER}, PrivateKey: srvKey}
	p.caFile = writePEM("ca.pem", "CERTIFICATE", caDER)
	p.clientCert = writePEM("client.pem", "CERTIFICATE", issue(3, x509.ExtKeyUsageClientAuth, cliKey))
	p.clientKey = writePEM("client-key.pem", "EC PRIVATE KEY", keyDER(cliKey))
	p.otherKey = writePEM("other-key.pem", "EC PRIVATE KEY", keyDER(newKey()))
	p.keyOnly = p.otherKey
	p.garbageFile = filepath.Join(dir, "garbage.pem")
	os.WriteFile(p.garbageFile, []byte("-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydA==\n-----END CERTIFICATE-----\n"), 0o600)
	return p
}

func (p *testPKI) tlsServer(t *testing.T, h http.Handler, clientAuth tls.ClientAuthType) *httptest.Server {
	ts := httptest.NewUnstartedServer(h)
	ts.TLS = &tls.Config{Certificates: []tls.Certificate{p.serverCert}, ClientAuth: clientAuth, ClientCAs: p.caPool}
	ts.EnableHTTP2 = true
	ts.StartTLS()
	t.Cleanup(ts.Close)
	return ts
}

func TestDialRemoteTLS(t *testing.T) {
	pki := newTestPKI(t)
	mux := http.NewServeMux()
	mux.Handle("/mcp", goSDKHandler(t, config.TransportHTTP))
	ts := pki.tlsServer(t, mux, tls.NoClientCert)
	mtls := pki.tlsServer(t, mux, tls.RequireAndVerifyClientCert)

	// Success cases.
	srv := remoteServer(ts.URL+"/mcp", config.TransportHTTP)
	srv.CABundle = pki.caFile
	dialAndEcho(t, srv, config.TransportHTTP)
	srv = remoteServer(mtls.URL+"/mcp", config.TransportAuto)
	srv.CABundle, srv.ClientCert, srv.ClientKey = pki.caFile, pki.clientCert, pki.clientKey
	dialAndEcho(t, srv, config.TransportHTTP)

	missing := filepath.Join(t.TempDir(), "nope.pem")
	for _, tc := range []struct {
		name                 string
		url                  string
		ca, cert, key        string
		wantIn               []string
		wantNotInLogOrErrors string
	}{
		{name: "system roots do not know the private CA", url: ts.URL, wantIn: []string{"certificate"}},
		{name: "caBundle missing", url: ts.URL, ca: missing, wantIn: []string{"caBundle", missing, "not found"}},
		{name: "caBundle garbage", url: ts.URL, ca: pki.garbageFile, wantIn: []string{"caBundle", pki.garbageFile, "certificate 1"}},
		{name: "caBundle without certificates", url: ts.URL, ca: pki.keyOnly, wantIn: []string{"caBundle", pki.keyOnly, "no PEM CERTIFICATE"}},
		{name: "mTLS without client cert", url: mtls.URL, ca: pki.caFile, wantIn: []string{"certificate"}},
		{name: "clientKey without clientCert", url: mtls.URL, ca: pki.caFile, key: pki.clientKey, wantIn: []string{"clientKey", "clientCert is not"}},
		{name: "clientCert missing", url: mtls.URL, ca: pki.caFile, cert: missing, key: pki.clientKey, wantIn: []string{"clientCert", missing, "not found"}},
		{name: "key does not match cert", url: mtls.URL, ca: pki.caFile, cert: pki.clientCert, key: pki.otherKey, wantIn: []string{"does not match", pki.otherKey, pki.clientCert}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := remoteServer(tc.url+"/mcp", config.TransportAuto)
			srv.CABundle, srv.ClientCert, srv.ClientKey = tc.ca, tc.cert, tc.key
			_, _, err := dialRemote(context.Background(), newTestClient(), srv, nil, nil)
			if err == nil {
				t.Fatal("dialRemote succeeded, want an error")
			}
			for _, s := range tc.wantIn {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not mention %q", err, s)
				}
			}
		})
	}
}

// sessionDropper serves the go-sdk test server, and after dropCurrent
// answers every request of the sessions seen so far the way servers that
// lost them do. New sessions work.
type sessionDropper struct {
	h      http.Handler
	status int // 404 (spec) or 400 (TypeScript SDK servers)

	mu      sync.Mutex
	seen    []string
	dropped map[string]bool
}

func (d *sessionDropper) dropCurrent() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.dropped == nil {
		d.dropped = make(map[string]bool)
	}
	for _, id := range d.seen {
		d.dropped[id] = true
	}
}

func (d *sessionDropper) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	id := r.Header.Get("Mcp-Session-Id")
	d.mu.Lock()
	drop := d.dropped[id]
	if id != "" && !drop {
		d.seen = append(d.seen, id)
	}
	d.mu.Unlock()
	if drop {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(d.status)
		io.WriteString(w, `{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: No valid session ID provided"},"id":null}`)
		return
	}
	d.h.ServeHTTP(w, r)
}

func TestDialRemoteSessionExpired(t *testing.T) {
	for _, status := range []int{http.StatusNotFound, http.StatusBadRequest} {
		t.Run(http.StatusText(status), func(t *testing.T) {
			d := &sessionDropper{h: goSDKHandler(t, config.TransportHTTP), status: status}
			ts := httptest.NewServer(d)
			defer ts.Close()
			ctx, cancel := context.WithTimeout(context.Background(), remoteHangGuard)
			defer cancel()
			cs, _, err := dialRemote(ctx, newTestClient(), remoteServer(ts.URL, config.TransportHTTP), nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			if _, err := cs.ListTools(ctx, nil); err != nil {
				t.Fatal(err)
			}
			d.dropCurrent()
			if _, err := cs.CallTool(ctx, &mcpsdk.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "x"}}); !errors.Is(err, mcpsdk.ErrSessionMissing) {
				t.Errorf("CallTool after the session expired: %v, want ErrSessionMissing", err)
			}
			// The session must end, so that the Conn re-initializes.
			waitErr := make(chan error, 1)
			go func() { waitErr <- cs.Wait() }()
			select {
			case <-waitErr:
			case <-ctx.Done():
				t.Fatal("the session did not end after the server dropped it")
			}
		})
	}
}

// TestConnRemoteSessionExpired: through a Conn, a call in flight when the
// server forgets the session fails with ErrConnectionLost, and the Conn
// re-initializes a new session over the same transport.
func TestConnRemoteSessionExpired(t *testing.T) {
	for _, tc := range []struct {
		name, transport string
		status          int
	}{
		{"http 404", config.TransportHTTP, http.StatusNotFound},
		{"auto 400", config.TransportAuto, http.StatusBadRequest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := &sessionDropper{h: goSDKHandler(t, config.TransportHTTP), status: tc.status}
			ts := httptest.NewServer(d)
			t.Cleanup(ts.Close) // after the Conn's cleanup closed its streams
			srv := remoteServer(ts.URL+"/mcp", tc.transport)
			srv.Enabled, srv.Scope = true, "user"
			srv.Headers = map[string]string{"Authorization": "Bearer ${env:FS_TOKEN}"}
			rec := mcptest.NewRecorder()
			c := startTestConn(t, srv, rec)
			st := c.Status()
			if st.Type != config.TypeRemote || st.Transport != config.TransportHTTP || st.State != StateConnected {
				t.Errorf("status = %+v, want a connected remote server over http", st)
			}
			if got := callText(t, c, "echo", map[string]any{"text": "before"}); got != "before" {
				t.Errorf("echo = %q", got)
			}
			d.dropCurrent()
			if _, err := c.CallTool(t.Context(), "echo", map[string]any{"text": "x"}, nil); !errors.Is(err, ErrConnectionLost) {
				t.Errorf("CallTool on an expired session: %v, want ErrConnectionLost", err)
			}
			rec.MustAwait(t, mcptest.ReachedState("remote", StateReconnecting), mcptest.InState("remote", StateConnected))
			if got := callText(t, c, "echo", map[string]any{"text": "after"}); got != "after" {
				t.Errorf("echo after re-initializing = %q", got)
			}
		})
	}
}

// TestConnRemoteLegacySSE: a Conn on a legacy SSE server reports "sse".
func TestConnRemoteLegacySSE(t *testing.T) {
	mux := http.NewServeMux()
	mux.Handle("/sse", goSDKHandler(t, config.TransportSSE))
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close) // after the Conn's cleanup closed its streams
	srv := remoteServer(ts.URL+"/sse", config.TransportAuto)
	srv.Enabled, srv.Scope = true, "user"
	c := startTestConn(t, srv, nil)
	if st := c.Status(); st.Transport != config.TransportSSE || st.State != StateConnected {
		t.Errorf("status = %+v, want connected over sse", st)
	}
	if got := callText(t, c, "echo", map[string]any{"text": "legacy"}); got != "legacy" {
		t.Errorf("echo = %q", got)
	}
}

// TestDialRemoteBadRequestKeepsSession: a 400 that is not about the
// session is an answer to one request, not the end of the session.
func TestDialRemoteBadRequestKeepsSession(t *testing.T) {
	h := goSDKHandler(t, config.TransportHTTP)
	var reject atomic.Bool
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if reject.Load() && r.Method == http.MethodPost {
			reject.Store(false)
			var req struct{ ID json.RawMessage }
			json.NewDecoder(r.Body).Decode(&req)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprintf(w, `{"jsonrpc":"2.0","error":{"code":-32602,"message":"bad params"},"id":%s}`, req.ID)
			return
		}
		h.ServeHTTP(w, r)
	}))
	defer ts.Close()
	ctx, cancel := context.WithTimeout(context.Background(), remoteHangGuard)
	defer cancel()
	cs, _, err := dialRemote(ctx, newTestClient(), remoteServer(ts.URL, config.TransportHTTP), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	reject.Store(true)
	if _, err := cs.ListTools(ctx, nil); err == nil {
		t.Fatal("ListTools succeeded through a 400")
	}
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Errorf("ListTools after a 400: %v, want the session to live on", err)
	}
}

// hangingServer accepts requests and never answers until the test ends.
func hangingServer(t *testing.T, h http.Handler, hang func(*http.Request) bool) *httptest.Server {
	stop := make(chan struct{})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if hang(r) {
			select {
			case <-stop:
			case <-r.Context().Done():
			}
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(func() { close(stop); ts.Close() })
	return ts
}

func TestDialRemoteTimeout(t *testing.T) {
	for _, transport := range []string{config.TransportHTTP, config.TransportSSE, config.TransportAuto} {
		t.Run(transport, func(t *testing.T) {
			ts := hangingServer(t, nil, func(*http.Request) bool { return true })
			srv := remoteServer(ts.URL, transport)
			srv.Timeout = 200 * time.Millisecond
			_, _, err := dialRemote(context.Background(), newTestClient(), srv, nil, nil)
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("dialRemote on a hanging server: %v, want DeadlineExceeded", err)
			}
		})
	}
}

// TestDialRemoteLegacyPostNoAnswer: a legacy SSE server never answers a
// POST for a session it lost. The call must fail with ErrConnectionLost
// (not wait out its own, long deadline) and the session must end.
func TestDialRemoteLegacyPostNoAnswer(t *testing.T) {
	var hang atomic.Bool
	ts := hangingServer(t, goSDKHandler(t, config.TransportSSE), func(r *http.Request) bool {
		return hang.Load() && r.Method == http.MethodPost
	})
	srv := remoteServer(ts.URL, config.TransportSSE)
	srv.Timeout = 300 * time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), remoteHangGuard)
	defer cancel()
	dialCtx, dialCancel := context.WithCancel(ctx)
	cs, _, err := dialRemote(dialCtx, newTestClient(), srv, nil, nil)
	dialCancel()
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	// The GET stream must outlive the context it was opened under.
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatalf("ListTools after the connect context ended: %v", err)
	}
	hang.Store(true)
	_, err = cs.CallTool(ctx, &mcpsdk.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "x"}})
	if !errors.Is(err, ErrConnectionLost) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("CallTool with an unanswered POST: %v, want ErrConnectionLost and DeadlineExceeded", err)
	}
	cs.Wait() // returns only if the session ended
}

// connRecorder is a listener that records whether anything connected.
type connRecorder struct {
	ln       net.Listener
	accepted atomic.Int32
	done     chan struct{}
}

func newConnRecorder(t *testing.T) *connRecorder {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &connRecorder{ln: ln, done: make(chan struct{})}
	go func() {
		defer close(r.done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			r.accepted.Add(1)
			c.Close()
		}
	}()
	t.Cleanup(func() { ln.Close(); <-r.done })
	return r
}

func (r *connRecorder) port() string {
	_, p, _ := net.SplitHostPort(r.ln.Addr().String())
	return p
}

func TestRemoteURLPolicy(t *testing.T) {
	rec := newConnRecorder(t)
	port := rec.port()
	for _, tc := range []struct {
		url, rule string
	}{
		{"http://10.1.2.3/mcp", "loopback"},
		{"http://example.com:" + port + "/mcp", "loopback"},
		{"http://169.254.169.254/latest/meta-data", "link-local"},
		{"https://169.254.169.254/", "link-local"},
		{"https://[::ffff:169.254.169.254]/", "link-local"},
		{"https://[fe80::1%25eth0]:" + port + "/", "link-local"},
		{"https://[fd00:ec2::254]/", "metadata"},
		{"https://metadata.google.internal:" + port + "/", "metadata"},
		{"http://METADATA.google.internal.:" + port + "/", "metadata"},
		// Numeric host forms that some resolvers read as 127.0.0.1 are not
		// taken for loopback by their text.
		{"http://2130706433:" + port + "/", "loopback"},
		{"http://0x7f.1:" + port + "/", "loopback"},
		{"http://localhost.evil.example:" + port + "/", "loopback"},
		{"https://[::ffff:a9fe:a9fe]/", "link-local"},
		{"ftp://127.0.0.1:" + port + "/", "only https"},
		{"ws://127.0.0.1:" + port + "/", "only https"},
	} {
		t.Run(tc.url, func(t *testing.T) {
			for _, transport := range []string{config.TransportAuto, config.TransportSSE} {
				_, _, err := dialRemote(context.Background(), newTestClient(), remoteServer(tc.url, transport), nil, nil)
				if !errors.Is(err, ErrURLRefused) || !strings.Contains(err.Error(), tc.rule) {
					t.Errorf("%s: %v, want ErrURLRefused naming %q", transport, err, tc.rule)
				}
			}
		})
	}
	if n := rec.accepted.Load(); n != 0 {
		t.Errorf("the listener accepted %d connections for refused URLs, want 0", n)
	}
}

// TestRemoteDialerChecksResolvedAddress: the check runs on the address
// being dialed, after DNS, before connect(2).
func TestRemoteDialerChecksResolvedAddress(t *testing.T) {
	rec := newConnRecorder(t)
	for _, tc := range []struct {
		name         string
		loopbackOnly bool
		addr         string
		wantRefused  bool
	}{
		{"http to loopback", true, "127.0.0.1:" + rec.port(), false},
		{"http to localhost name", true, "localhost:" + rec.port(), false},
		{"http to a private address", true, "10.255.255.1:80", true},
		{"https to link-local", false, "169.254.169.254:443", true},
		{"https to mapped link-local", false, "[::ffff:169.254.169.254]:443", true},
		{"https to IMDS v6", false, "[fd00:ec2::254]:443", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := newPolicyDialer(time.Second, tc.loopbackOnly)
			conn, err := d.DialContext(context.Background(), "tcp", tc.addr)
			if conn != nil {
				conn.Close()
			}
			if got := errors.Is(err, ErrURLRefused); got != tc.wantRefused {
				t.Errorf("DialContext(%s) = %v, refused %v, want %v", tc.addr, err, got, tc.wantRefused)
			}
		})
	}
}

func TestRemoteRedirectPolicy(t *testing.T) {
	rec := newConnRecorder(t)
	target := "http://metadata.google.internal:" + rec.port() + "/mcp"
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target, http.StatusTemporaryRedirect)
	}))
	defer ts.Close()
	_, _, err := dialRemote(context.Background(), newTestClient(), remoteServer(ts.URL, config.TransportHTTP), nil, nil)
	if !errors.Is(err, ErrURLRefused) {
		t.Errorf("redirect to a metadata host: %v, want ErrURLRefused", err)
	}
	if n := rec.accepted.Load(); n != 0 {
		t.Errorf("the redirect target accepted %d connections, want 0", n)
	}
}

// TestRemoteSecretsNeverShown: header values and URL secrets reach the
// server on every request, and never appear in errors or logs, even when
// the server echoes them back.
func TestRemoteSecretsNeverShown(t *testing.T) {
	const token, querySecret, password = "tok-Secret-4242", "qs-Secret-9191", "pw-Secret-7373"
	var log requestLog
	h := goSDKHandler(t, config.TransportHTTP)
	var fail atomic.Bool
	ts := httptest.NewServer(log.wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if fail.Load() {
			var req struct{ ID json.RawMessage }
			json.NewDecoder(r.Body).Decode(&req)
			if req.ID == nil {
				req.ID = json.RawMessage("null")
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprintf(w, `{"jsonrpc":"2.0","error":{"code":-32001,"message":"bad token %s %s"},"id":%s}`,
				r.Header.Get("Authorization"), r.URL.RawQuery, req.ID)
			return
		}
		h.ServeHTTP(w, r)
	})))
	defer ts.Close()
	u, _ := url.Parse(ts.URL)
	u.User = url.UserPassword("user", password)
	u.Path, u.RawQuery = "/mcp", "key="+querySecret

	var logs bytes.Buffer
	logger := slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	srv := remoteServer(u.String(), config.TransportAuto)
	srv.Headers = map[string]string{"Authorization": "Bearer " + token, "X-Api-Key": token + "-2"}
	ctx, cancel := context.WithTimeout(context.Background(), remoteHangGuard)
	defer cancel()
	cs, _, err := dialRemote(ctx, newTestClient(), srv, nil, logger)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatal(err)
	}
	cs.Close()
	for _, r := range log.all() {
		if got := r.Header.Get("Authorization"); got != "Bearer "+token {
			t.Errorf("%s %s: Authorization = %q, want the configured header", r.Method, r.URL.Path, got)
		}
		if got := r.Header.Get("X-Api-Key"); got != token+"-2" {
			t.Errorf("%s %s: X-Api-Key missing", r.Method, r.URL.Path)
		}
		if r.URL.Path == "/mcp" && r.URL.Query().Get("key") != querySecret {
			t.Errorf("%s %s: query %q lost the configured key", r.Method, r.URL.Path, r.URL.RawQuery)
		}
	}

	// A server that starts rejecting the token mid-session, echoing it.
	cs, _, err = dialRemote(ctx, newTestClient(), srv, nil, logger)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	fail.Store(true)
	var errs []string
	if _, err := cs.CallTool(ctx, &mcpsdk.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "x"}}); err == nil {
		t.Error("CallTool succeeded through a 401")
	} else {
		errs = append(errs, err.Error())
	}
	for _, transport := range []string{config.TransportHTTP, config.TransportSSE, config.TransportAuto} {
		srv.Transport = transport
		_, _, err := dialRemote(ctx, newTestClient(), srv, nil, logger)
		if err == nil {
			t.Fatalf("%s: dialRemote succeeded through a 401", transport)
		}
		errs = append(errs, err.Error())
	}
	srv.URL = strings.Replace(u.String(), "http://", "http://10.0.0.1.", 1)
	if _, _, err := dialRemote(ctx, newTestClient(), srv, nil, logger); err != nil {
		errs = append(errs, err.Error())
	}
	all := strings.Join(errs, "\n") + "\n" + logs.String()
	for _, secret := range []string{token, querySecret, password} {
		if strings.Contains(all, secret) {
			t.Errorf("secret %q shown in errors or logs:\n%s", secret, all)
		}
	}
	if !strings.Contains(all, "***") {
		t.Errorf("errors and logs show no *** at all:\n%s", all)
	}
}

func TestRemoteHeaderValidation(t *testing.T) {
	for _, tc := range []struct {
		name    string
		headers map[string]string
		want    string
	}{
		{"bad name", map[string]string{"Bad Name": "v"}, "not a valid header name"},
		{"newline in value", map[string]string{"X-A": "v\r\nX-B: evil-secret"}, "line break"},
		{"reserved", map[string]string{"mcp-session-id": "abc"}, "set by the MCP transport"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := remoteServer("http://127.0.0.1:1/mcp", config.TransportHTTP)
			srv.Headers = tc.headers
			_, _, err := dialRemote(context.Background(), newTestClient(), srv, nil, nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "evil-secret") {
				t.Errorf("dialRemote: %v, want an error saying %q and no value", err, tc.want)
			}
		})
	}
}

// TestDialRemoteResumesBrokenStream: when the POST stream of a call breaks
// after an event with an id, the client resumes it (GET with
// Last-Event-ID) and the result arrives on the resumed stream.
func TestDialRemoteResumesBrokenStream(t *testing.T) {
	server := mcpsdk.NewServer(&mcpsdk.Implementation{Name: "resumer", Version: "0"}, nil)
	release := make(chan struct{})
	server.AddTool(&mcpsdk.Tool{Name: "slow", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, req *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
			err := req.Session.NotifyProgress(ctx, &mcpsdk.ProgressNotificationParams{
				ProgressToken: req.Params.GetProgressToken(), Progress: 1, Total: 2,
			})
			if err != nil {
				return nil, err
			}
			select {
			case <-release:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			return mcptest.TextResult("survived"), nil
		})
	t.Cleanup(func() {
		for ss := range server.Sessions() {
			ss.Close()
		}
	})
	h := mcpsdk.NewStreamableHTTPHandler(func(*http.Request) *mcpsdk.Server { return server },
		&mcpsdk.StreamableHTTPOptions{EventStore: mcpsdk.NewMemoryEventStore(nil)})
	var cut atomic.Bool
	var resumed atomic.Int32
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && r.Header.Get("Last-Event-ID") != "" {
			resumed.Add(1)
		}
		if r.Method == http.MethodPost && !cut.Load() {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			if bytes.Contains(body, []byte(`"slow"`)) {
				cut.Store(true)
				h.ServeHTTP(&cutAfterProgress{ResponseWriter: w, release: release}, r)
				return
			}
		}
		h.ServeHTTP(w, r)
	}))
	defer ts.Close()
	ctx, cancel := context.WithTimeout(context.Background(), remoteHangGuard)
	defer cancel()
	cs, _, err := dialRemote(ctx, newTestClient(), remoteServer(ts.URL, config.TransportHTTP), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	params := &mcpsdk.CallToolParams{Name: "slow", Arguments: map[string]any{}}
	params.SetProgressToken("p1")
	res, err := cs.CallTool(ctx, params)
	if err != nil {
		t.Fatalf("CallTool across a broken stream: %v", err)
	}
	if got := res.Content[0].(*mcpsdk.TextContent).Text; got != "survived" {
		t.Errorf("result = %q, want %q", got, "survived")
	}
	if resumed.Load() == 0 {
		t.Error("the client never resumed with Last-Event-ID")
	}
}

// cutAfterProgress passes writes through until the progress event is
// out, then breaks the connection and lets the tool finish.
type cutAfterProgress struct {
	http.ResponseWriter
	release chan struct{}

	mu  sync.Mutex
	cut bool
}

func (c *cutAfterProgress) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cut {
		return 0, net.ErrClosed
	}
	n, err := c.ResponseWriter.Write(p)
	if err == nil && bytes.Contains(p, []byte("notifications/progress")) {
		c.cut = true
		rc := http.NewResponseController(c.ResponseWriter)
		rc.Flush()
		if conn, _, err := rc.Hijack(); err == nil {
			conn.Close()
		}
		close(c.release)
	}
	return n, err
}

func (c *cutAfterProgress) Flush() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.cut {
		http.NewResponseController(c.ResponseWriter).Flush()
	}
}

// TestRemoteRedirectGetsNoSecrets: a redirect to another origin, even one
// the URL policy allows, receives none of the configured headers or URL
// secrets.
func TestRemoteRedirectGetsNoSecrets(t *testing.T) {
	var other requestLog
	elsewhere := httptest.NewServer(other.wrap(http.NotFoundHandler()))
	defer elsewhere.Close()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, elsewhere.URL+"/mcp", http.StatusTemporaryRedirect)
	}))
	defer ts.Close()
	srv := remoteServer("http://user:pw-Secret-1@"+strings.TrimPrefix(ts.URL, "http://")+"/mcp?key=qs-Secret-2", config.TransportHTTP)
	srv.Headers = map[string]string{"Authorization": "Bearer tok-Secret-3"}
	if _, _, err := dialRemote(context.Background(), newTestClient(), srv, nil, nil); err == nil {
		t.Fatal("dialRemote succeeded against a 404")
	}
	reqs := other.all()
	if len(reqs) == 0 {
		t.Fatal("the redirect was not followed")
	}
	for _, r := range reqs {
		if got := r.Header.Get("Authorization"); got != "" || r.URL.RawQuery != "" {
			t.Errorf("redirect target got Authorization %q, query %q; want neither", got, r.URL.RawQuery)
		}
	}
}

// TestRemoteQuerySecretOnLegacyMessages: URL query parameters (an API key)
// go with every request to the server, the legacy message POSTs included.
func TestRemoteQuerySecretOnLegacyMessages(t *testing.T) {
	var log requestLog
	mux := http.NewServeMux()
	mux.Handle("/sse", goSDKHandler(t, config.TransportSSE))
	ts := httptest.NewServer(log.wrap(mux))
	defer ts.Close()
	dialAndEcho(t, remoteServer(ts.URL+"/sse?key=k-1234", config.TransportSSE), config.TransportSSE)
	posts := 0
	for _, r := range log.all() {
		if r.URL.Query().Get("key") != "k-1234" {
			t.Errorf("%s %s lacks the key", r.Method, r.URL)
		}
		if r.Method == http.MethodPost {
			posts++
		}
	}
	if posts == 0 {
		t.Error("no message POST seen")
	}
}

func TestIsCall(t *testing.T) {
	for _, tc := range []struct {
		body string
		want bool
	}{
		{`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"x"}}`, true},
		{`{"jsonrpc":"2.0","id":"a","method":"ping"}`, true},
		{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, false},
		{`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}`, false},
		{`{"jsonrpc":"2.0","id":7,"result":{"roots":[]}}`, false},
		{`{"jsonrpc":"2.0","id":7,"error":{"code":1,"message":"no"}}`, false},
		{`not json`, true},
	} {
		req, _ := http.NewRequest(http.MethodPost, "http://127.0.0.1/", strings.NewReader(tc.body))
		if got := isCall(req); got != tc.want {
			t.Errorf("isCall(%s) = %v, want %v", tc.body, got, tc.want)
		}
	}
}

// TestRemoteRedirectNoDowngrade: an https server cannot redirect the
// sidecar to plain http, which the policy allows to loopback: that would
// aim our POSTs at a service on the user's own machine.
func TestRemoteRedirectNoDowngrade(t *testing.T) {
	var local requestLog
	victim := httptest.NewServer(local.wrap(http.NotFoundHandler()))
	defer victim.Close()
	pki := newTestPKI(t)
	ts := pki.tlsServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, victim.URL+"/admin", http.StatusTemporaryRedirect)
	}), tls.NoClientCert)
	srv := remoteServer(ts.URL+"/mcp", config.TransportHTTP)
	srv.CABundle = pki.caFile
	_, _, err := dialRemote(context.Background(), newTestClient(), srv, nil, nil)
	if !errors.Is(err, ErrURLRefused) || !strings.Contains(err.Error(), "https to plain http") {
		t.Errorf("https redirect to http loopback: %v, want ErrURLRefused naming the downgrade", err)
	}
	if n := len(local.all()); n != 0 {
		t.Errorf("the loopback service got %d requests, want 0", n)
	}
}

// TestRemoteLegacyEndpointOtherOrigin: a legacy SSE server's endpoint
// event naming another origin is refused, and that origin gets nothing.
func TestRemoteLegacyEndpointOtherOrigin(t *testing.T) {
	var other requestLog
	elsewhere := httptest.NewServer(other.wrap(http.NotFoundHandler()))
	defer elsewhere.Close()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			http.Error(w, "not here", http.StatusMethodNotAllowed)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "event: endpoint\ndata: %s/message?sessionId=1\n\n", elsewhere.URL)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	defer ts.Close()
	srv := remoteServer(ts.URL+"/sse?key=qs-Secret-5", config.TransportSSE)
	srv.Headers = map[string]string{"Authorization": "Bearer tok-Secret-6"}
	_, _, err := dialRemote(context.Background(), newTestClient(), srv, nil, nil)
	if !errors.Is(err, ErrURLRefused) || !strings.Contains(err.Error(), "own origin") {
		t.Errorf("endpoint on another origin: %v, want ErrURLRefused naming the origin rule", err)
	}
	if n := len(other.all()); n != 0 {
		t.Errorf("the other origin got %d requests, want 0", n)
	}
	// Same host, other port: another origin too.
	if a, b := mustURL(t, "http://127.0.0.1:1/x"), mustURL(t, "http://127.0.0.1:2/x"); urlpolicy.SameOrigin(a, b) {
		t.Error("sameOrigin ignores the port")
	}
	if a, b := mustURL(t, "https://H.example./x"), mustURL(t, "https://h.example:443/y"); !urlpolicy.SameOrigin(a, b) {
		t.Error("sameOrigin: default port or host case/trailing dot makes a difference")
	}
}

func mustURL(t *testing.T, raw string) *url.URL {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// TestConnRemotePathSecretHidden: a key that ${env:NAME} puts into a
// URL's path (https://host/<key>/sse, as some hosted servers want) is as
// secret as a header: net/http and the SDK quote the URL in their errors,
// and none of those may show it in a call's error, the status or the logs.
func TestConnRemotePathSecretHidden(t *testing.T) {
	const key = "pk-Secret-8080"
	h := goSDKHandler(t, config.TransportHTTP)
	var broken atomic.Bool
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if broken.Load() {
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				conn.Close() // a transport failure: net/http quotes the URL
			}
			return
		}
		if r.URL.Path != "/k/"+key+"/mcp" {
			http.NotFound(w, r)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close) // after the Conn's cleanup closed its streams
	srv := remoteServer(ts.URL+"/k/${env:MCP_PATH_KEY}/mcp", config.TransportHTTP)
	srv.Enabled, srv.Scope = true, "user"
	var logs lockedBuffer
	logger := slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	rec := mcptest.NewRecorder()
	c := newTestConnOpts(t, srv, rec, &ConnOptions{
		Logger:  logger,
		Environ: func() []string { return append(testEnviron(), "MCP_PATH_KEY="+key) },
		// The call's failure, not a health ping, must find the loss.
		PingInterval: time.Hour,
	})
	c.tries = 1
	if err := c.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	broken.Store(true)
	var shown []string
	if _, err := c.CallTool(t.Context(), "echo", map[string]any{"text": "x"}, nil); !errors.Is(err, ErrConnectionLost) {
		t.Fatalf("CallTool through a closed connection: %v, want ErrConnectionLost", err)
	} else {
		shown = append(shown, err.Error())
	}
	rec.MustAwait(t, mcptest.ReachedState("remote", StateFailed))
	shown = append(shown, c.Status().LastError)
	for _, e := range rec.Events() {
		shown = append(shown, e.Error)
	}
	shown = append(shown, logs.String())
	all := strings.Join(shown, "\n")
	if strings.Contains(all, key) {
		t.Errorf("the path key is shown in errors, status or logs:\n%s", all)
	}
	if !strings.Contains(all, "/k/***/mcp") {
		t.Errorf("no error quotes the URL, so this test shows nothing:\n%s", all)
	}
}

// TestRemoteTransportUsesPolicyDialer: the transport every remote request
// goes through dials with the policy check (a name that resolves to a
// metadata address is only caught there), plain http to loopback only.
func TestRemoteTransportUsesPolicyDialer(t *testing.T) {
	tr := newRemoteTransport(&tls.Config{}, time.Second)
	defer tr.CloseIdleConnections()
	for _, tc := range []struct {
		name string
		dial dialFunc
		addr string
	}{
		{"http to link-local", tr.DialContext, "169.254.169.254:80"},
		{"http to a private address", tr.DialContext, "10.255.255.1:80"},
		{"https to link-local", tr.DialTLSContext, "169.254.169.254:443"},
		{"https to IMDS v6", tr.DialTLSContext, "[fd00:ec2::254]:443"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conn, err := tc.dial(context.Background(), "tcp", tc.addr)
			if conn != nil {
				conn.Close()
			}
			if !errors.Is(err, ErrURLRefused) {
				t.Errorf("dial %s = %v, want ErrURLRefused", tc.addr, err)
			}
		})
	}
	if tr.Proxy != nil {
		t.Error("the transport uses a proxy: the proxy would dial out of the policy's reach")
	}
}

// TestConnRemoteAnswerOverCap: a JSON answer over maxMessageBytes fails
// that call instead of being read whole (the SDK reads it without a
// bound), and the server is reconnected for the next call.
func TestConnRemoteAnswerOverCap(t *testing.T) {
	server := newTestServer(io.Discard, false)
	t.Cleanup(func() {
		for ss := range server.Sessions() {
			ss.Close()
		}
	})
	h := mcpsdk.NewStreamableHTTPHandler(func(*http.Request) *mcpsdk.Server { return server },
		&mcpsdk.StreamableHTTPOptions{JSONResponse: true})
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close) // after the Conn's cleanup closed its streams
	srv := remoteServer(ts.URL+"/mcp", config.TransportHTTP)
	srv.Enabled, srv.Scope = true, "user"
	srv.MaxMessageBytes = 32 << 10
	rec := mcptest.NewRecorder()
	c := startTestConn(t, srv, rec)
	if got := callText(t, c, "echo", map[string]any{"text": "small"}); got != "small" {
		t.Errorf("echo = %q", got)
	}
	_, err := c.CallTool(t.Context(), "echo", map[string]any{"text": strings.Repeat("x", 64<<10)}, nil)
	if err == nil || !strings.Contains(err.Error(), "maxMessageBytes") {
		t.Errorf("echo of 64 KiB with a 32 KiB cap: %v, want an error naming maxMessageBytes", err)
	}
	rec.MustAwait(t, mcptest.InState("remote", StateConnected))
	if got := callText(t, c, "echo", map[string]any{"text": "after"}); got != "after" {
		t.Errorf("echo after the oversized answer = %q", got)
	}
}

// TestConnRemoteCallSeesServerDown: a call that fails because the server
// is down (every POST answered 503) reports ErrConnectionLost and starts
// the reconnect at once, not at the next health ping.
func TestConnRemoteCallSeesServerDown(t *testing.T) {
	h := goSDKHandler(t, config.TransportHTTP)
	var down atomic.Bool
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if down.Load() {
			http.Error(w, "maintenance", http.StatusServiceUnavailable)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close) // after the Conn's cleanup closed its streams
	srv := remoteServer(ts.URL+"/mcp", config.TransportHTTP)
	srv.Enabled, srv.Scope = true, "user"
	rec := mcptest.NewRecorder()
	c := newTestConnOpts(t, srv, rec, &ConnOptions{Environ: testEnviron, PingInterval: time.Hour})
	// The server is back by the time the reconnect tries.
	c.backoff = func(int) time.Duration { down.Store(false); return time.Millisecond }
	if err := c.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	down.Store(true)
	if _, err := c.CallTool(t.Context(), "echo", map[string]any{"text": "x"}, nil); !errors.Is(err, ErrConnectionLost) {
		t.Errorf("CallTool while the server is down: %v, want ErrConnectionLost", err)
	}
	rec.MustAwait(t, mcptest.ReachedState("remote", StateReconnecting), mcptest.InState("remote", StateConnected))
	if got := callText(t, c, "echo", map[string]any{"text": "back"}); got != "back" {
		t.Errorf("echo after the server came back = %q", got)
	}
}
