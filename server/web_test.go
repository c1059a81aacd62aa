package server_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"testing/fstest"
	"testing/synctest"
	"time"

	"github.com/coder/websocket"
	"go.lsp.dev/jsonrpc2"

	"github.com/freecode/freecode/internal/frontend"
	"github.com/freecode/freecode/internal/protocol"
	"github.com/freecode/freecode/server"
	"github.com/freecode/freecode/server/servertest"
)

// webSidecar is a sidecar in this process serving browsers on a loopback
// port until the test ends.
type webSidecar struct {
	srv   *server.Server
	token string
	addr  string // ws://127.0.0.1:PORT
	host  string // 127.0.0.1:PORT
}

func startWeb(t *testing.T, opts *server.WebOptions) *webSidecar {
	t.Helper()
	srv, token := openServer(t, nil)
	ln, addr, err := server.Listen("ws://127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if opts == nil {
		opts = &server.WebOptions{}
	}
	if opts.Files == nil {
		opts.Files = fstest.MapFS{"index.html": {Data: []byte(servertest.Page)}}
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.ServeWeb(ctx, ln, opts) }()
	t.Cleanup(func() {
		cancel()
		if err := <-served; err != nil {
			t.Errorf("ServeWeb: %v", err)
		}
	})
	return &webSidecar{srv: srv, token: token, addr: addr, host: strings.TrimPrefix(addr, "ws://")}
}

// page is the sidecar's own page's origin.
func (w *webSidecar) page() string { return "http://" + w.host }

// mint has a token frontend mint a sign-in code.
func (w *webSidecar) mint(t *testing.T) protocol.WebCodeResult {
	t.Helper()
	c := dialToken(t, w.addr, w.token)
	var res protocol.WebCodeResult
	if err := c.Call(t.Context(), protocol.MethodWebCode, struct{}{}, &res); err != nil {
		t.Fatalf("%s: %v", protocol.MethodWebCode, err)
	}
	return res
}

// signIn mints a code and exchanges it for the session cookie.
func (w *webSidecar) signIn(t *testing.T) *http.Cookie {
	t.Helper()
	c, err := servertest.SignIn(t.Context(), w.mint(t).URL)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// dialToken connects as a program does: no Origin, the token presented.
func dialToken(t *testing.T, addr, token string) *frontend.Client {
	t.Helper()
	c, err := frontend.Dial(t.Context(), addr, &frontend.Options{ClientName: "test", Token: token})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := c.Initialize(t.Context()); err != nil {
		t.Fatal(err)
	}
	return c
}

// get sends a GET to the sidecar with the Host and the headers given.
func get(t *testing.T, w *webSidecar, path, host string, header http.Header) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, w.page()+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Host = host
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := servertest.NoRedirects.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp
}

// upgrade opens /rpc with the Host, Origin and cookie given: the
// handshake's status, 101 when it was taken.
func upgrade(t *testing.T, w *webSidecar, host, origin string, cookie *http.Cookie) (int, *websocket.Conn) {
	t.Helper()
	h := http.Header{}
	if origin != "" {
		h.Set("Origin", origin)
	}
	if cookie != nil {
		h.Set("Cookie", (&http.Cookie{Name: cookie.Name, Value: cookie.Value}).String())
	}
	c, resp, err := websocket.Dial(t.Context(), w.addr+"/rpc", &websocket.DialOptions{HTTPHeader: h, Host: host, HTTPClient: servertest.NoRedirects})
	if err != nil {
		if resp == nil {
			t.Fatalf("dial: %v", err)
		}
		if h := corsHeaders(resp.Header); h != "" {
			t.Errorf("a refused upgrade carries %s", h)
		}
		return resp.StatusCode, nil
	}
	t.Cleanup(func() { c.CloseNow() })
	return http.StatusSwitchingProtocols, c
}

// corsHeaders names the Access-Control-* headers of h: never any.
func corsHeaders(h http.Header) string {
	var names []string
	for k := range h {
		if strings.HasPrefix(strings.ToLower(k), "access-control-") {
			names = append(names, k)
		}
	}
	return strings.Join(names, ", ")
}

// initializeWS sends initialize (with token, if any) over c as a text
// message and returns the answer's error, nil if it succeeded.
func initializeWS(t *testing.T, c *websocket.Conn, token string) *jsonrpc2.Error {
	t.Helper()
	if err := c.Write(t.Context(), websocket.MessageText, []byte(initialize(token))); err != nil {
		t.Fatal(err)
	}
	_, body, err := c.Read(t.Context())
	if err != nil {
		t.Fatalf("initialize: %v", err)
	}
	msg, err := jsonrpc2.DecodeMessage(body)
	if err != nil {
		t.Fatalf("initialize answered %s: %v", body, err)
	}
	r, ok := msg.(*jsonrpc2.Response)
	if !ok {
		t.Fatalf("initialize answered %s", body)
	}
	var je *jsonrpc2.Error
	if err := r.Err(); err != nil && !errors.As(err, &je) {
		t.Fatalf("initialize: %v", err)
	}
	return je
}

// Every request must name the bound address exactly: a hostile site's
// name that DNS rebinding points at 127.0.0.1, localhost, another port,
// each is refused, the page and the WebSocket alike.
func TestWebHost(t *testing.T) {
	w := startWeb(t, nil)
	cookie := w.signIn(t)
	_, port, _ := strings.Cut(w.host, ":")
	for _, host := range []string{"evil.example:" + port, "evil.example", "localhost:" + port, "127.0.0.1:1", "127.0.0.1"} {
		if resp := get(t, w, "/", host, nil); resp.StatusCode != http.StatusForbidden {
			t.Errorf("GET / with Host %s: %s, want 403", host, resp.Status)
		}
		if status, _ := upgrade(t, w, host, w.page(), cookie); status != http.StatusForbidden {
			t.Errorf("the WebSocket with Host %s: %d, want 403", host, status)
		}
	}
	resp := get(t, w, "/", w.host, nil)
	if resp.StatusCode != http.StatusOK {
		t.Errorf("GET / with the bound Host: %s", resp.Status)
	}
	for name, want := range map[string]string{"X-Frame-Options": "DENY", "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer"} {
		if got := resp.Header.Get(name); got != want {
			t.Errorf("GET /: %s %q, want %q", name, got, want)
		}
	}
	if status, _ := upgrade(t, w, w.host, w.page(), cookie); status != http.StatusSwitchingProtocols {
		t.Errorf("the WebSocket with the bound Host: %d", status)
	}
}

// A browser's WebSocket must come from the sidecar's own page (or an
// origin the user listed), with the session cookie; no response carries
// a CORS header, whatever the Origin.
func TestWebOrigin(t *testing.T) {
	const listed = "http://127.0.0.1:5173"
	w := startWeb(t, &server.WebOptions{Origins: []string{listed}})
	cookie := w.signIn(t)
	_, port, _ := strings.Cut(w.host, ":")
	for _, origin := range []string{"http://evil.example", "http://localhost:" + port, "https://" + w.host, "http://127.0.0.1:1", "null", "http://" + w.host + ".evil.example"} {
		if status, _ := upgrade(t, w, w.host, origin, cookie); status != http.StatusForbidden {
			t.Errorf("a page of %s: %d, want 403", origin, status)
		}
	}
	if status, _ := upgrade(t, w, w.host, w.page(), nil); status != http.StatusUnauthorized {
		t.Errorf("the page without the cookie: %d, want 401", status)
	}
	forged := &http.Cookie{Name: cookie.Name, Value: strings.Repeat("0", len(cookie.Value))}
	if status, _ := upgrade(t, w, w.host, w.page(), forged); status != http.StatusUnauthorized {
		t.Errorf("the page with a cookie the sidecar never gave: %d, want 401", status)
	}
	for _, origin := range []string{w.page(), listed} {
		status, c := upgrade(t, w, w.host, origin, cookie)
		if status != http.StatusSwitchingProtocols {
			t.Errorf("a page of %s with the cookie: %d, want 101", origin, status)
			continue
		}
		// The cookie is its authentication: initialize presents no token.
		if err := initializeWS(t, c, ""); err != nil {
			t.Errorf("a page of %s: initialize without a token: %v", origin, err)
		}
	}
	if h := corsHeaders(get(t, w, "/", w.host, http.Header{"Origin": {"http://evil.example"}}).Header); h != "" {
		t.Errorf("GET / from another origin carries %s", h)
	}
}

// Without an Origin, a connection is a program's, not a browser's: a
// cookie counts for nothing and its initialize must present the token,
// as on a socket.
func TestWebWithoutOrigin(t *testing.T) {
	w := startWeb(t, nil)
	cookie := w.signIn(t)
	_, c := upgrade(t, w, w.host, "", cookie)
	if c == nil {
		t.Fatal("the upgrade without an Origin was refused")
	}
	if err := initializeWS(t, c, ""); err == nil || !strings.Contains(err.Message, "initializationOptions.token") {
		t.Errorf("initialize without the token: %v, want it refused naming the token", err)
	}
	_, c = upgrade(t, w, w.host, "", nil)
	if err := initializeWS(t, c, w.token); err != nil {
		t.Errorf("initialize with the token: %v", err)
	}
}

// A one-time code is worth one cookie: the sign-in answers 303 to / with
// the session cookie (HttpOnly, SameSite=Strict, Path=/, named for the
// port); the same code again is refused, and so are a code never minted
// and one past its time.
func TestWebCode(t *testing.T) {
	w := startWeb(t, nil)
	res := w.mint(t)
	u, err := url.Parse(res.URL)
	if err != nil || u.Host != w.host || u.Path != "/" || u.Query().Get("code") != res.Code {
		t.Fatalf("the sign-in URL %q: want http://%s/?code=%s", res.URL, w.host, res.Code)
	}
	exp, err := time.Parse(time.RFC3339, res.ExpiresAt)
	if err != nil || exp.Before(time.Now()) {
		t.Errorf("expiresAt %q: %v", res.ExpiresAt, err)
	}
	resp := get(t, w, "/?code="+res.Code, w.host, nil)
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/" {
		t.Fatalf("sign-in: %s to %q, want 303 to /", resp.Status, resp.Header.Get("Location"))
	}
	cookies := resp.Cookies()
	_, port, _ := strings.Cut(w.host, ":")
	if len(cookies) != 1 {
		t.Fatalf("sign-in set %d cookies", len(cookies))
	}
	c := cookies[0]
	if c.Name != "freecode-"+port || !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Path != "/" || c.Secure || len(c.Value) < 32 {
		t.Errorf("the session cookie: %+v", c)
	}
	if strings.Contains(c.Value, res.Code) {
		t.Error("the cookie holds the code")
	}
	if resp.Header.Get("Cache-Control") != "no-store" {
		t.Errorf("sign-in: Cache-Control %q, want no-store", resp.Header.Get("Cache-Control"))
	}
	if status, _ := upgrade(t, w, w.host, w.page(), c); status != http.StatusSwitchingProtocols {
		t.Errorf("the WebSocket with the cookie: %d", status)
	}

	if resp := get(t, w, "/?code="+res.Code, w.host, nil); resp.StatusCode != http.StatusForbidden || len(resp.Cookies()) != 0 {
		t.Errorf("the code replayed: %s, %d cookies; want 403 and none", resp.Status, len(resp.Cookies()))
	}
	if resp := get(t, w, "/?code="+strings.Repeat("ab", 32), w.host, nil); resp.StatusCode != http.StatusForbidden {
		t.Errorf("a code never minted: %s, want 403", resp.Status)
	}

	late := w.mint(t)
	server.ShiftWebClock(w.srv, server.WebCodeTTL)
	if resp := get(t, w, "/?code="+late.Code, w.host, nil); resp.StatusCode != http.StatusForbidden {
		t.Errorf("a code past its time: %s, want 403", resp.Status)
	}
}

// A browser sends every cookie of 127.0.0.1 to every port, and a code
// names no port: another sidecar's code and cookie are refused.
func TestWebWrongPort(t *testing.T) {
	a, b := startWeb(t, nil), startWeb(t, nil)
	codeA := a.mint(t)
	if resp := get(t, b, "/?code="+codeA.Code, b.host, nil); resp.StatusCode != http.StatusForbidden {
		t.Errorf("a's code at b: %s, want 403", resp.Status)
	}
	cookieA := a.signIn(t)
	if status, _ := upgrade(t, b, b.host, b.page(), cookieA); status != http.StatusUnauthorized {
		t.Errorf("a's cookie at b: %d, want 401", status)
	}
	_, portB, _ := strings.Cut(b.host, ":")
	renamed := &http.Cookie{Name: "freecode-" + portB, Value: cookieA.Value}
	if status, _ := upgrade(t, b, b.host, b.page(), renamed); status != http.StatusUnauthorized {
		t.Errorf("a's cookie named for b's port: %d, want 401", status)
	}
	// a's code, spent at b? No: b never knew it, and a still takes it.
	if resp := get(t, a, "/?code="+codeA.Code, a.host, nil); resp.StatusCode != http.StatusSeeOther {
		t.Errorf("a's code at a after b refused it: %s, want 303", resp.Status)
	}
}

// Only a frontend that presented the token mints codes: not a browser's
// (its page could sign in other browsers), not a sidecar that serves no
// page.
func TestWebCodeWho(t *testing.T) {
	w := startWeb(t, nil)
	_, c := upgrade(t, w, w.host, w.page(), w.signIn(t))
	tab := frontend.NewWebSocket(c, &frontend.Options{ClientName: "tab"})
	defer tab.Close()
	if _, err := tab.Initialize(t.Context()); err != nil {
		t.Fatal(err)
	}
	err := tab.Call(t.Context(), protocol.MethodWebCode, struct{}{}, nil)
	if err == nil || !strings.Contains(err.Error(), "may not mint") {
		t.Errorf("a tab minting a code: %v, want it refused", err)
	}

	srv, token := openServer(t, nil)
	sock := dialToken(t, listenTCP(t, srv), token)
	err = sock.Call(t.Context(), protocol.MethodWebCode, struct{}{}, nil)
	if err == nil || !strings.Contains(err.Error(), "serves no page") {
		t.Errorf("a code of a sidecar on tcp: %v, want it refused", err)
	}
}

// The caps of a socket hold for a message: before initialize, one past
// HandshakeFrame closes the connection; after it, one past that is taken,
// and one past protocol.MaxFrame closes it. A binary message closes it
// too: the protocol is text.
func TestWebFrameCaps(t *testing.T) {
	w := startWeb(t, nil)
	cookie := w.signIn(t)
	pad := func(n int) []byte {
		return []byte(`{"jsonrpc":"2.0","id":2,"method":"freecode/servers","params":{"pad":"` + strings.Repeat("x", n) + `"}}`)
	}
	wantClosed := func(c *websocket.Conn, what string, status websocket.StatusCode) {
		t.Helper()
		for {
			_, _, err := c.Read(t.Context())
			if err == nil {
				continue // notifications
			}
			if got := websocket.CloseStatus(err); got != status {
				t.Errorf("%s: the connection ended with %v (%v), want status %v", what, got, err, status)
			}
			return
		}
	}

	_, c := upgrade(t, w, w.host, w.page(), cookie)
	c.Write(t.Context(), websocket.MessageText, pad(server.HandshakeFrame))
	wantClosed(c, "past the cap before initialize", websocket.StatusMessageTooBig)

	_, c = upgrade(t, w, w.host, w.page(), cookie)
	if err := initializeWS(t, c, ""); err != nil {
		t.Fatal(err)
	}
	c.SetReadLimit(-1)
	if err := c.Write(t.Context(), websocket.MessageText, pad(4*server.HandshakeFrame)); err != nil {
		t.Fatal(err)
	}
	for {
		_, body, err := c.Read(t.Context())
		if err != nil {
			t.Fatalf("after initialize, a message past the handshake's cap: %v", err)
		}
		if strings.Contains(string(body), `"id":2`) {
			break
		}
	}
	c.Write(t.Context(), websocket.MessageText, pad(protocol.MaxFrame))
	wantClosed(c, "past the cap after initialize", websocket.StatusMessageTooBig)

	_, c = upgrade(t, w, w.host, w.page(), cookie)
	c.Write(t.Context(), websocket.MessageBinary, []byte(initialize("")))
	wantClosed(c, "a binary message", websocket.StatusUnsupportedData)
}

// Only GET and HEAD are taken, and a sidecar without a page serves /rpc
// alone.
func TestWebMethods(t *testing.T) {
	w := startWeb(t, nil)
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, w.page()+"/", strings.NewReader("x"))
	resp, err := servertest.NoRedirects.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST /: %s, want 405", resp.Status)
	}
	resp, err = servertest.NoRedirects.Get(w.page() + "/")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != servertest.Page {
		t.Errorf("GET /: %q, want the page", body)
	}
}

// pipeTCPListener is a pipeListener that says it is a loopback TCP
// listener, as ServeWeb wants: what a synctest bubble serves HTTP on.
type pipeTCPListener struct{ *pipeListener }

func (pipeTCPListener) Addr() net.Addr { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 4242} }

// A WebSocket that has not passed initialize within the handshake's
// deadline is closed, as a socket's connection is, and so is any other
// connection by then (a keep-alive that fetched the page); a tab that
// initialized stays. Each holds one of MaxHandshakes slots until it
// initialized.
func TestWebHandshakeDeadlineAndSlots(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// No workspace: a file watcher's system call would keep the
		// bubble from ever being idle, and initialize needs none.
		srv := server.New(&server.Options{Token: server.NewToken()})
		ln := &pipeListener{conns: make(chan net.Conn, server.MaxHandshakes+1), closed: make(chan struct{})}
		ctx, cancel := context.WithCancel(context.Background())
		served := make(chan error, 1)
		go func() { served <- srv.ServeWeb(ctx, pipeTCPListener{ln}, &server.WebOptions{}) }()
		// The browser: each dial is a pipe the listener hands the server.
		dial := func(context.Context, string, string) (net.Conn, error) {
			a, b := net.Pipe()
			ln.conns <- a
			return b, nil
		}
		client := &http.Client{Transport: &http.Transport{DialContext: dial, Proxy: nil, DisableKeepAlives: true}}
		open := func(header http.Header) *websocket.Conn {
			t.Helper()
			c, _, err := websocket.Dial(context.Background(), "ws://127.0.0.1:4242/rpc", &websocket.DialOptions{HTTPClient: client, HTTPHeader: header})
			if err != nil {
				t.Fatal(err)
			}
			return c
		}
		synctest.Wait()
		code := server.MintWebCode(srv)
		req, _ := http.NewRequest(http.MethodGet, "http://127.0.0.1:4242/?code="+code, nil)
		resp, err := (&http.Client{Transport: client.Transport, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
		if err != nil || len(resp.Cookies()) != 1 {
			t.Fatalf("sign-in: %v %v", resp, err)
		}
		resp.Body.Close()
		tab := http.Header{"Origin": {"http://127.0.0.1:4242"}, "Cookie": {resp.Cookies()[0].Name + "=" + resp.Cookies()[0].Value}}

		silent := open(tab)
		readErr := make(chan error, 1)
		go func() { _, _, err := silent.Read(context.Background()); readErr <- err }()
		time.Sleep(server.HandshakeTimeout - time.Millisecond)
		synctest.Wait()
		select {
		case err := <-readErr:
			t.Fatalf("closed before the deadline: %v", err)
		default:
		}
		time.Sleep(2 * time.Millisecond)
		synctest.Wait()
		select {
		case <-readErr:
		default:
			t.Fatal("a WebSocket that did not initialize is still open past the deadline")
		}
		time.Sleep(server.HandshakePenalty)

		passed := open(tab)
		if err := initializeWS(t, passed, ""); err != nil {
			t.Fatal(err)
		}
		var waiting []*websocket.Conn
		for range server.MaxHandshakes {
			waiting = append(waiting, open(tab))
		}
		synctest.Wait()
		if got, want := ln.accepted.Load(), int32(server.MaxHandshakes+3); got != want {
			t.Errorf("accepted %d connections, want %d: the one that initialized holds no slot", got, want)
		}
		late := make(chan *websocket.Conn, 1)
		go func() { late <- open(tab) }()
		synctest.Wait()
		if got := ln.accepted.Load(); got != int32(server.MaxHandshakes+3) {
			t.Errorf("with every slot held: accepted %d, want the next to wait", got)
		}
		if err := initializeWS(t, waiting[0], ""); err != nil {
			t.Fatal(err)
		}
		c := <-late
		time.Sleep(2 * server.HandshakeTimeout)
		synctest.Wait()
		if err := passed.Write(context.Background(), websocket.MessageText, []byte(`{"jsonrpc":"2.0","id":9,"method":"freecode/servers"}`)); err != nil {
			t.Errorf("the tab that initialized, past the deadline: %v", err)
		}
		for _, w := range append(waiting, c, passed, silent) {
			w.CloseNow()
		}
		cancel()
		if err := <-served; err != nil {
			t.Errorf("ServeWeb: %v", err)
		}
		srv.Close()
		for len(ln.conns) > 0 {
			(<-ln.conns).Close()
		}
	})
}
