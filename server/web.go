package server

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"

	"github.com/coder/websocket"
	"go.lsp.dev/jsonrpc2"

	"github.com/freecode/freecode/internal/protocol"
)

// WebOptions configure a sidecar that listens on ws: (ServeWeb).
type WebOptions struct {
	// Files is the page served at / and the files beside it (package
	// web's, as the commands wire it). Nil serves none: only /rpc.
	Files fs.FS
	// Origins are the origins, besides the sidecar's own page
	// (http://127.0.0.1:PORT), whose pages may open /rpc: a page under
	// development served elsewhere, as scheme://host:port. The session
	// cookie is SameSite=Strict, so only a page on 127.0.0.1 (another
	// port) gets it sent.
	Origins []string
	// SignInDir is where `freecode web` writes sign-in files
	// (WriteSignInFile; DefaultSignInDir): the file of a code this sidecar
	// minted is removed once the code is spent or expired, or the sidecar
	// stops. Empty: none is removed.
	SignInDir string
}

// ServeWeb serves browser frontends on ln, a loopback TCP listener, until
// ctx is done, Done is closed or ln fails, as Serve does for sockets. One
// HTTP server: GET / and the static files of opts.Files, the exchange of
// a one-time code (freecode/web/code) for the session cookie (POST /signin
// from the sign-in file, or GET /?code=), and the WebSocket
// at /rpc, each of whose connections is one frontend speaking the
// protocol a message per text frame (protocol.NewMessageStream).
//
// A page in the user's browser can reach any loopback port, and DNS
// rebinding can give a hostile site a name that resolves to it, so every
// request's Host must be the bound address exactly, and a WebSocket with
// an Origin (every browser's) must come from the sidecar's own page (or
// opts.Origins) with the session cookie. One without an Origin is no
// browser's: it presents serve.json's token in initialize, as on a
// socket. No response carries a CORS header. The caps of limits.go hold:
// at most maxHandshakes connections at once that are not a WebSocket past
// initialize, each closed handshakeTimeout after it was accepted unless it
// is one by then; a message before initialize is at most handshakeFrame
// bytes, after it protocol.MaxFrame.
func (s *Server) ServeWeb(ctx context.Context, ln net.Listener, opts *WebOptions) error {
	if opts == nil {
		opts = &WebOptions{}
	}
	auth, err := newWebAuth(ln.Addr(), opts.Origins, opts.SignInDir)
	if err != nil {
		ln.Close()
		return err
	}
	defer auth.close()
	s.mu.Lock()
	s.web = auth
	s.mu.Unlock()
	ctx, cancel := context.WithCancel(ctx)
	conns := &sessionGroup{}
	h := &webHandler{srv: s, ctx: ctx, auth: auth, conns: conns, csp: pagePolicy(auth.host)}
	if opts.Files != nil {
		h.files = http.FileServerFS(opts.Files)
	}
	hs := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: handshakeTimeout,
		IdleTimeout:       handshakeTimeout,
		MaxHeaderBytes:    handshakeFrame,
		ConnContext: func(ctx context.Context, c net.Conn) context.Context {
			return context.WithValue(ctx, slotKey{}, c)
		},
		ErrorLog: slog.NewLogLogger(s.logger.Handler(), slog.LevelDebug),
	}
	defer func() {
		hs.Close()
		cancel() // ends the frontends: a hijacked connection is not the HTTP server's
		conns.closeAndWait()
	}()
	go func() {
		select {
		case <-ctx.Done():
		case <-s.done:
		}
		hs.Close()
	}()
	err = hs.Serve(newSlotListener(ln, s.done))
	if errors.Is(err, http.ErrServerClosed) || ctx.Err() != nil {
		return nil
	}
	select {
	case <-s.done:
		return nil
	default:
	}
	return fmt.Errorf("serving browser frontends: %w", err)
}

// webHandler is ServeWeb's HTTP handler.
type webHandler struct {
	srv   *Server
	ctx   context.Context // ServeWeb's: the frontends' sessions end with it
	auth  *webAuth
	files http.Handler // nil: no page
	conns *sessionGroup
	csp   string // pagePolicy's
}

// sessionGroup is the WebSockets' sessions ServeWeb waits for: one that
// the HTTP server starts after ServeWeb began to wait is not served.
type sessionGroup struct {
	mu     sync.Mutex
	closed bool
	wg     sync.WaitGroup
}

func (g *sessionGroup) add() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return false
	}
	g.wg.Add(1)
	return true
}

func (g *sessionGroup) done() { g.wg.Done() }

func (g *sessionGroup) closeAndWait() {
	g.mu.Lock()
	g.closed = true
	g.mu.Unlock()
	g.wg.Wait()
}

// pagePolicy is the Content-Security-Policy of everything the sidecar
// at host serves: the page's script and stylesheet are its own files, it
// connects to its own WebSocket and its own origin only (a HEAD of / tells
// a browser not signed in from a sidecar that is gone), its one image is
// the data: icon; no
// frame, object, font, form target, <base> or framing of it. The page
// shows no MCP Apps view (the extension does, in its webview), so no
// frame-src: a srcdoc frame would run under this policy, inline script
// refused. A page served elsewhere (--allow-origin) has its server's
// policy.
func pagePolicy(host string) string {
	return "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self' ws://" + host +
		"; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
}

// What every response says, whatever it is: the page's policy; nothing
// may frame the page (a hidden frame over an Allow button), no address it
// links to is told where it came from, nothing is sniffed into a type the
// server did not give. Never an Access-Control-* header: no other origin
// may read any of it.
func setSecurityHeaders(h http.Header, csp string) {
	h.Set("Content-Security-Policy", csp)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
}

func (h *webHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	setSecurityHeaders(w.Header(), h.csp)
	if r.Host != h.auth.host {
		// DNS rebinding: a hostile name that resolves to 127.0.0.1.
		h.srv.logger.Debug("web: refused a request for another host", "host", r.Host)
		http.Error(w, fmt.Sprintf("refused: this sidecar answers only to Host %s", h.auth.host), http.StatusForbidden)
		return
	}
	if r.URL.Path == signInPath {
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", "POST")
			http.Error(w, "the sign-in takes POST", http.StatusMethodNotAllowed)
			return
		}
		h.signIn(w, r)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "only GET and HEAD are taken", http.StatusMethodNotAllowed)
		return
	}
	switch {
	case r.URL.Path == webSocketPath:
		h.serveWebSocket(w, r)
	case r.URL.Path == "/" && r.URL.Query().Has("code"):
		h.exchangeCode(w, r, r.URL.Query().Get("code"))
	case h.files != nil:
		h.files.ServeHTTP(w, r)
	default:
		http.Error(w, "this sidecar serves no page", http.StatusNotFound)
	}
}

// webSocketPath is where the WebSocket of the protocol is.
const webSocketPath = "/rpc"

// maxSignInBody bounds the sign-in's form: one code.
const maxSignInBody = 4 << 10

// signIn takes the code the sign-in file posts (form field code). Any
// origin may post (a file: page's is "null"): the code is what counts.
func (h *webHandler) signIn(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, maxSignInBody)
	if err := r.ParseForm(); err != nil {
		w.Header().Set("Cache-Control", "no-store")
		http.Error(w, "the sign-in takes a form with the code", http.StatusBadRequest)
		return
	}
	h.exchangeCode(w, r, r.PostForm.Get("code"))
}

// exchangeCode takes a one-time code (posted by the sign-in file, or the
// ?code= of the link `freecode web --no-browser` prints): an unspent one
// sets the session cookie and sends the browser to /, so that the code
// leaves its address bar and history; it is spent either way.
func (h *webHandler) exchangeCode(w http.ResponseWriter, r *http.Request, code string) {
	w.Header().Set("Cache-Control", "no-store")
	cookie, ok := h.auth.exchange(code)
	if !ok {
		h.srv.logger.Info("web: refused a sign-in code: unknown, spent or expired")
		http.Error(w, "This sign-in link was used already, has expired, or is another sidecar's. Run `freecode web` again for a new one.", http.StatusForbidden)
		return
	}
	http.SetCookie(w, cookie)
	h.srv.logger.Info("web: a browser signed in")
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

// serveWebSocket upgrades /rpc and serves the frontend on it until it
// leaves.
func (h *webHandler) serveWebSocket(w http.ResponseWriter, r *http.Request) {
	origin := r.Header.Get("Origin")
	cookie := origin != ""
	if cookie {
		if !h.auth.originAllowed(origin) {
			h.srv.logger.Debug("web: refused a WebSocket from another origin", "origin", origin)
			http.Error(w, "refused: a page of origin "+origin+" may not connect", http.StatusForbidden)
			return
		}
		if !h.auth.signedIn(r) {
			http.Error(w, "refused: not signed in; open the page with `freecode web`", http.StatusUnauthorized)
			return
		}
	}
	// Without an Origin it is not a browser (every browser sends one on a
	// WebSocket): a cookie it has counts for nothing, and its initialize
	// presents the token.
	c, err := websocket.Accept(w, r, &websocket.AcceptOptions{
		InsecureSkipVerify: true, // the origin is checked above, exactly
		CompressionMode:    websocket.CompressionDisabled,
	})
	if err != nil {
		h.srv.logger.Debug("web: WebSocket upgrade failed", "error", err)
		return
	}
	sc, _ := r.Context().Value(slotKey{}).(*slotConn)
	l := link{
		rwc:    webSocketConn{c},
		cookie: cookie,
		newConn: func(o *protocol.StreamOptions) jsonrpc2.Conn {
			return protocol.NewMessageConn(c, o)
		},
		handshook: func() {},
	}
	if sc != nil {
		l.handshook = sc.release
	}
	if !h.conns.add() {
		c.Close(websocket.StatusGoingAway, "the sidecar is stopping")
		return
	}
	defer h.conns.done()
	if err := h.srv.serveConn(h.ctx, l); err != nil {
		h.srv.logger.Debug("frontend connection", "error", err)
	}
}

// webSocketConn is a WebSocket as a session's connection: closing it cuts
// the frontend off.
type webSocketConn struct{ c *websocket.Conn }

func (w webSocketConn) Close() error { return w.c.CloseNow() }

// webAddress says whether addr is a ws: listen address, and returns its
// host and port.
func webAddress(addr string) (string, bool) {
	rest, ok := strings.CutPrefix(addr, "ws://")
	if !ok {
		return "", false
	}
	return strings.TrimSuffix(rest, "/"), true
}
