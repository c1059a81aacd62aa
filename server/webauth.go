package server

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.lsp.dev/jsonrpc2"

	"github.com/freecode/freecode/internal/protocol"
)

// How a browser comes to be a frontend. `freecode web` asks the sidecar,
// as a frontend that presented serve.json's token, for a one-time code
// (freecode/web/code), writes the sign-in file that posts it to /signin
// (webfile.go) and gives the browser the file's path; with --no-browser it
// prints http://127.0.0.1:PORT/?code=… for the user to open. The first
// use of a code, either way, spends it and sets a session cookie, which
// every WebSocket of that browser then carries. Neither the token nor a
// code stays in the page, its history or a log, nor is in any process's
// argv or environment.
const (
	// webCodeTTL is how long a code may wait to be used: the time to
	// open a URL printed by --no-browser.
	webCodeTTL = 5 * time.Minute
	// maxWebCodes and maxWebSessions bound what is kept: past them the
	// oldest goes.
	maxWebCodes    = 64
	maxWebSessions = 256
)

// webAuth is what a sidecar listening on ws: knows of its browsers: its
// address, the origins allowed, the codes not spent yet and the sessions
// given for them. Codes and sessions are kept by their hash, so that
// looking one up tells nothing of another by its timing.
type webAuth struct {
	host    string // the bound address: "127.0.0.1:PORT", what Host must be
	origins map[string]bool
	cookie  string // the session cookie's name, bound to the port
	files   string // WebOptions.SignInDir: where sign-in files are removed from
	now     func() time.Time

	mu       sync.Mutex
	codes    map[[32]byte]webCode // by hash
	sessions map[[32]byte]bool
	order    [][32]byte // the sessions, oldest first
}

// webCode is a code not spent yet.
type webCode struct {
	expires time.Time
	file    string      // its sign-in file's path; "" without SignInDir
	timer   *time.Timer // removes the file when the code expires; nil without
}

// forget removes c's sign-in file, if any, once c is spent or gone.
func (c webCode) forget() {
	if c.file == "" {
		return
	}
	c.timer.Stop()
	os.Remove(c.file)
}

func newWebAuth(addr net.Addr, extra []string, files string) (*webAuth, error) {
	tcp, ok := addr.(*net.TCPAddr)
	if !ok || !tcp.IP.IsLoopback() {
		return nil, fmt.Errorf("serving browser frontends on %s: want a loopback TCP address", addr)
	}
	host := addr.String()
	a := &webAuth{
		host:     host,
		origins:  map[string]bool{"http://" + host: true},
		cookie:   "freecode-" + strconv.Itoa(tcp.Port),
		files:    files,
		now:      time.Now,
		codes:    map[[32]byte]webCode{},
		sessions: map[[32]byte]bool{},
	}
	for _, o := range extra {
		norm, err := NormalizeOrigin(o)
		if err != nil {
			return nil, err
		}
		a.origins[norm] = true
	}
	return a, nil
}

// NormalizeOrigin checks an origin the user allows (--allow-origin) and
// returns it as a browser sends it: scheme://host[:port], lower case, no
// path.
func NormalizeOrigin(o string) (string, error) {
	u, err := url.Parse(o)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil ||
		strings.Trim(u.Path, "/") != "" || u.RawQuery != "" || u.Fragment != "" {
		return "", fmt.Errorf("origin %q: want scheme://host[:port], as a browser sends it (http://127.0.0.1:5173)", o)
	}
	return strings.ToLower(u.Scheme + "://" + u.Host), nil
}

// URL is the address of the page with code.
func (a *webAuth) URL(code string) string {
	return "http://" + a.host + "/?code=" + code
}

// mint returns a new one-time code and when it expires.
func (a *webAuth) mint() (string, time.Time) {
	code := randomHex(32)
	h := sha256.Sum256([]byte(code))
	a.mu.Lock()
	defer a.mu.Unlock()
	now := a.now()
	for h, c := range a.codes {
		if !now.Before(c.expires) {
			delete(a.codes, h)
			c.forget()
		}
	}
	if len(a.codes) >= maxWebCodes {
		var oldest [32]byte
		var first time.Time
		for h, c := range a.codes {
			if first.IsZero() || c.expires.Before(first) {
				oldest, first = h, c.expires
			}
		}
		a.codes[oldest].forget()
		delete(a.codes, oldest)
	}
	c := webCode{expires: now.Add(webCodeTTL)}
	if a.files != "" {
		c.file = filepath.Join(a.files, signInFileName(code))
		c.timer = time.AfterFunc(webCodeTTL, func() { a.expire(h) })
	}
	a.codes[h] = c
	return code, c.expires
}

// expire forgets the code of hash h, unspent at its time.
func (a *webAuth) expire(h [32]byte) {
	a.mu.Lock()
	c, ok := a.codes[h]
	delete(a.codes, h)
	a.mu.Unlock()
	if ok {
		c.forget()
	}
}

// close forgets every code not spent: the sidecar stops serving browsers.
func (a *webAuth) close() {
	a.mu.Lock()
	codes := a.codes
	a.codes = map[[32]byte]webCode{}
	a.mu.Unlock()
	for _, c := range codes {
		c.forget()
	}
}

// exchange spends code and returns the session cookie it is worth; false
// if it is unknown, spent or expired. Its sign-in file is removed either
// way.
func (a *webAuth) exchange(code string) (*http.Cookie, bool) {
	h := sha256.Sum256([]byte(code))
	a.mu.Lock()
	defer a.mu.Unlock()
	c, ok := a.codes[h]
	delete(a.codes, h)
	if ok {
		c.forget()
	}
	if !ok || !a.now().Before(c.expires) {
		return nil, false
	}
	session := randomHex(32)
	sh := sha256.Sum256([]byte(session))
	if len(a.order) >= maxWebSessions {
		delete(a.sessions, a.order[0])
		a.order = a.order[1:]
	}
	a.sessions[sh] = true
	a.order = append(a.order, sh)
	return &http.Cookie{Name: a.cookie, Value: session, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode}, true
}

// signedIn says whether r carries a session cookie of this sidecar. A
// browser sends every 127.0.0.1 cookie to every port: only the one named
// for this port, and given here, counts.
func (a *webAuth) signedIn(r *http.Request) bool {
	for _, c := range r.CookiesNamed(a.cookie) {
		h := sha256.Sum256([]byte(c.Value))
		a.mu.Lock()
		ok := a.sessions[h]
		a.mu.Unlock()
		if ok {
			return true
		}
	}
	return false
}

// originAllowed says whether a page of origin may open the WebSocket.
func (a *webAuth) originAllowed(origin string) bool {
	return a.origins[strings.ToLower(origin)]
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// webCode answers freecode/web/code: a one-time code for the page, for a
// frontend that presented the token (freecode web, reusing a running
// sidecar). A browser's session may not mint one: what signs a browser in
// is the token's holder's to give.
func (sess *session) webCode(context.Context, jsonrpc2.RawMessage) (any, error) {
	if sess.cookie {
		return nil, jsonrpc2.NewError(jsonrpc2.InvalidRequest, protocol.MethodWebCode+": a browser frontend may not mint sign-in codes; `freecode web` does")
	}
	sess.srv.mu.Lock()
	auth := sess.srv.web
	sess.srv.mu.Unlock()
	if auth == nil {
		return nil, jsonrpc2.NewError(jsonrpc2.InvalidRequest, protocol.MethodWebCode+": this sidecar serves no page: it does not listen on ws://")
	}
	code, exp := auth.mint()
	sess.logger.Info("web: minted a sign-in code", "expires", exp.Format(time.RFC3339))
	return &protocol.WebCodeResult{Code: code, URL: auth.URL(code), ExpiresAt: exp.UTC().Format(time.RFC3339)}, nil
}
