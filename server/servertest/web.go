package servertest

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/fstest"

	"github.com/coder/websocket"

	"github.com/freecode/freecode/internal/frontend"
	"github.com/freecode/freecode/internal/protocol"
	"github.com/freecode/freecode/server"
)

// Page is the page a WebSocket-mode sidecar serves at /: a stand-in for
// package web's, which the commands serve.
const Page = "<!doctype html><title>FreeCode MCP</title>"

// webEnv is a WebSocket-mode sidecar's listener and the browser that
// signs in to it.
type webEnv struct {
	addr  string // ws://127.0.0.1:PORT
	token string

	mu     sync.Mutex
	cookie *http.Cookie // the browser's, once signed in
}

// startWeb has the server in this process serve browsers on a loopback
// port, with Page as its page.
func (env *Env) startWeb(t *testing.T) {
	ln, addr, err := server.Listen("ws://127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	env.web = &webEnv{addr: addr, token: env.token}
	files := fstest.MapFS{"index.html": {Data: []byte(Page)}}
	env.conns.Go(func() {
		if err := env.srv.ServeWeb(context.Background(), ln, &server.WebOptions{Files: files}); err != nil {
			t.Errorf("ServeWeb: %v", err)
		}
	})
}

// FrontendID is the id the sidecar's log gives the nth frontend the test
// connected (1 for Env.Editor): in WebSocket mode, the frontend that
// minted the browser's sign-in code came first.
func (env *Env) FrontendID(n int) int {
	if env.web != nil {
		return n + 1
	}
	return n
}

// WebAddress is the WebSocket-mode sidecar's address, ws://127.0.0.1:PORT.
func (env *Env) WebAddress() string {
	env.T.Helper()
	if env.web == nil {
		env.T.Fatal("WebAddress: the sidecar does not serve browsers in this mode")
	}
	return env.web.addr
}

// PageURL is the http:// address of the page, without a code.
func (env *Env) PageURL() string {
	return "http://" + strings.TrimPrefix(env.WebAddress(), "ws://")
}

// MintCode has a frontend that presents the token (as freecode web does)
// mint a one-time sign-in code.
func (env *Env) MintCode() protocol.WebCodeResult {
	env.T.Helper()
	env.WebAddress()
	return env.web.mint(env.T)
}

func (w *webEnv) mint(t *testing.T) protocol.WebCodeResult {
	t.Helper()
	res, err := mintCode(t.Context(), w.addr, w.token)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func mintCode(ctx context.Context, addr, token string) (protocol.WebCodeResult, error) {
	var res protocol.WebCodeResult
	c, err := frontend.Dial(ctx, addr, &frontend.Options{ClientName: "freecode-web", Token: token})
	if err != nil {
		return res, err
	}
	defer c.Close()
	if _, err := c.Initialize(ctx); err != nil {
		return res, err
	}
	err = c.Call(ctx, protocol.MethodWebCode, struct{}{}, &res)
	return res, err
}

// NoRedirects is an HTTP client that shows each response as it is, the
// redirect and its Set-Cookie included.
var NoRedirects = &http.Client{
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	Transport:     &http.Transport{Proxy: nil},
}

// SignIn opens a sign-in URL as a browser does and returns the session
// cookie the sidecar set.
func SignIn(ctx context.Context, pageURL string) (*http.Cookie, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, pageURL, nil)
	if err != nil {
		return nil, err
	}
	resp, err := NoRedirects.Do(req)
	if err != nil {
		return nil, err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/" {
		return nil, fmt.Errorf("sign-in: %s, Location %q: want 303 to /", resp.Status, resp.Header.Get("Location"))
	}
	for _, c := range resp.Cookies() {
		return c, nil
	}
	return nil, errors.New("sign-in: no cookie set")
}

// Cookie is the browser's session cookie: signed in once, with a code the
// token's holder minted, as freecode web does; every tab then shares it.
func (env *Env) Cookie() *http.Cookie {
	env.T.Helper()
	env.WebAddress()
	return env.web.signedIn(env.T)
}

func (w *webEnv) signedIn(t *testing.T) *http.Cookie {
	t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.cookie == nil {
		c, err := SignIn(t.Context(), w.mint(t).URL)
		if err != nil {
			t.Fatal(err)
		}
		w.cookie = c
	}
	return w.cookie
}

// TabHeader is what a tab of the sidecar's own page sends with its
// WebSocket: its Origin and the session cookie.
func (env *Env) TabHeader() http.Header {
	env.T.Helper()
	env.WebAddress()
	return env.web.tabHeader(env.T)
}

func (w *webEnv) tabHeader(t *testing.T) http.Header {
	c := w.signedIn(t)
	h := http.Header{}
	h.Set("Origin", "http://"+strings.TrimPrefix(w.addr, "ws://"))
	h.Set("Cookie", (&http.Cookie{Name: c.Name, Value: c.Value}).String())
	return h
}

// connectTab connects the editor to the WebSocket-mode sidecar as a tab
// of its page.
func (ed *Editor) connectTab(w *webEnv) {
	t := ed.t
	t.Helper()
	c, resp, err := websocket.Dial(t.Context(), w.addr+"/rpc", &websocket.DialOptions{HTTPHeader: w.tabHeader(t), HTTPClient: NoRedirects})
	if err != nil {
		t.Fatalf("%s: opening the WebSocket: %v (%v)", ed.Name, err, resp)
	}
	ed.fopts.Token = ""
	ed.rwc = closer(c.CloseNow)
	ed.Client = frontend.NewWebSocket(c, ed.fopts)
}

type closer func() error

func (c closer) Close() error { return c() }
