package server_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"html"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"testing/fstest"
	"testing/synctest"
	"time"

	"github.com/coder/websocket"

	"github.com/freecode/freecode/internal/protocol"
	"github.com/freecode/freecode/server"
	"github.com/freecode/freecode/server/servertest"
)

// postCode posts code to the sidecar's /signin as the sign-in file's form
// does, from a file: page (Origin null).
func postCode(t *testing.T, w *webSidecar, code string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, w.page()+"/signin", strings.NewReader(url.Values{"code": {code}}.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", "null")
	resp, err := servertest.NoRedirects.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp
}

// Every response of the page's server says the page's policy and the
// headers beside it, whatever the route and the outcome: the page and the
// files beside it, a file that is not there, the sign-in by link and by
// form (taken and refused), a method not taken, another Host, and the
// WebSocket's upgrade (taken and refused).
func TestWebHeaders(t *testing.T) {
	w := startWeb(t, &server.WebOptions{Files: fstest.MapFS{
		"index.html": {Data: []byte(servertest.Page)},
		"style.css":  {Data: []byte("body{}")},
	}})
	want := http.Header{
		"Content-Security-Policy": {"default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self' ws://" + w.host +
			"; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"},
		"X-Content-Type-Options": {"nosniff"},
		"Referrer-Policy":        {"no-referrer"},
		"X-Frame-Options":        {"DENY"},
	}
	check := func(what string, resp *http.Response, status int) {
		t.Helper()
		if resp.StatusCode != status {
			t.Errorf("%s: %s, want %d", what, resp.Status, status)
		}
		for k, v := range want {
			if got := resp.Header.Values(k); len(got) != 1 || got[0] != v[0] {
				t.Errorf("%s: %s %q, want %q", what, k, got, v[0])
			}
		}
		if h := corsHeaders(resp.Header); h != "" {
			t.Errorf("%s: carries %s", what, h)
		}
	}
	do := func(method, path, host string, body io.Reader, header http.Header) *http.Response {
		t.Helper()
		req, err := http.NewRequestWithContext(t.Context(), method, w.page()+path, body)
		if err != nil {
			t.Fatal(err)
		}
		req.Host = host
		if header != nil {
			req.Header = header
		}
		resp, err := servertest.NoRedirects.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	form := func(code string) io.Reader { return strings.NewReader(url.Values{"code": {code}}.Encode()) }
	formHeader := http.Header{"Content-Type": {"application/x-www-form-urlencoded"}}
	_, port, _ := strings.Cut(w.host, ":")
	upgradeHeader := func(origin string) http.Header {
		return http.Header{"Origin": {origin}, "Connection": {"Upgrade"}, "Upgrade": {"websocket"},
			"Sec-Websocket-Version": {"13"}, "Sec-Websocket-Key": {"dGhlIHNhbXBsZSBub25jZQ=="}}
	}
	for _, tc := range []struct {
		name   string
		method string
		path   string
		host   string
		body   io.Reader
		header http.Header
		status int
	}{
		{"the page", http.MethodGet, "/", w.host, nil, nil, http.StatusOK},
		{"the page's HEAD", http.MethodHead, "/", w.host, nil, nil, http.StatusOK},
		{"a file beside it", http.MethodGet, "/style.css", w.host, nil, nil, http.StatusOK},
		{"index.html, sent to /", http.MethodGet, "/index.html", w.host, nil, nil, http.StatusMovedPermanently},
		{"a file that is not there", http.MethodGet, "/nope.js", w.host, nil, nil, http.StatusNotFound},
		{"the sign-in link", http.MethodGet, "/?code=" + w.mint(t).Code, w.host, nil, nil, http.StatusSeeOther},
		{"the sign-in link, refused", http.MethodGet, "/?code=00", w.host, nil, nil, http.StatusForbidden},
		{"the sign-in form", http.MethodPost, "/signin", w.host, form(w.mint(t).Code), formHeader, http.StatusSeeOther},
		{"the sign-in form, refused", http.MethodPost, "/signin", w.host, form("00"), formHeader, http.StatusForbidden},
		{"the sign-in by GET", http.MethodGet, "/signin", w.host, nil, nil, http.StatusMethodNotAllowed},
		{"a POST elsewhere", http.MethodPost, "/", w.host, form("00"), formHeader, http.StatusMethodNotAllowed},
		{"another Host", http.MethodGet, "/", "localhost:" + port, nil, nil, http.StatusForbidden},
		{"the WebSocket, not signed in", http.MethodGet, "/rpc", w.host, nil, upgradeHeader(w.page()), http.StatusUnauthorized},
		{"the WebSocket, another origin", http.MethodGet, "/rpc", w.host, nil, upgradeHeader("http://evil.example"), http.StatusForbidden},
	} {
		t.Run(tc.name, func(t *testing.T) {
			check(tc.name, do(tc.method, tc.path, tc.host, tc.body, tc.header), tc.status)
		})
	}
	cookie := w.signIn(t)
	h := http.Header{"Origin": {w.page()}, "Cookie": {cookie.Name + "=" + cookie.Value}}
	c, resp, err := websocket.Dial(t.Context(), w.addr+"/rpc", &websocket.DialOptions{HTTPHeader: h, HTTPClient: servertest.NoRedirects})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	check("the WebSocket, taken", resp, http.StatusSwitchingProtocols)
}

// The sign-in file (issue 30) is the user's alone, 0600 in a directory
// made 0700, and a form that posts the code to /signin, under a policy of
// its own that allows its one script (by its hash) and its one target;
// the code is in no URL. Posted, it signs in and the file is gone; the
// code again is refused. A file whose code was not spent is gone once the
// sidecar stops.
func TestWebSignInFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "web")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var unspent string
	t.Run("spent", func(t *testing.T) {
		w := startWeb(t, &server.WebOptions{SignInDir: dir})
		res := w.mint(t)
		path, err := server.WriteSignInFile(dir, res)
		if err != nil {
			t.Fatal(err)
		}
		if filepath.Dir(path) != dir || strings.Contains(path, res.Code) {
			t.Errorf("the file is %s: want one in %s, not named by the code", path, dir)
		}
		for p, want := range map[string]os.FileMode{path: 0o600, dir: 0o700 | os.ModeDir} {
			if fi, err := os.Lstat(p); err != nil || fi.Mode() != want {
				t.Errorf("%s: %v (%v), want %v", p, fi.Mode(), err, want)
			}
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		page := string(b)
		action := w.page() + "/signin"
		for _, want := range []string{
			`<form method="post" action="` + action + `">`,
			`<input type="hidden" name="code" value="` + res.Code + `">`,
			`<meta name="referrer" content="no-referrer">`,
		} {
			if !strings.Contains(page, want) {
				t.Errorf("the file lacks %s:\n%s", want, page)
			}
		}
		if strings.Contains(page, "?code=") {
			t.Errorf("the file has the code in a URL:\n%s", page)
		}
		script := regexp.MustCompile(`<script>([^<]*)</script>`).FindStringSubmatch(page)
		csp := regexp.MustCompile(`<meta http-equiv="Content-Security-Policy" content="([^"]*)">`).FindStringSubmatch(page)
		if script == nil || csp == nil {
			t.Fatalf("the file has no script or no policy:\n%s", page)
		}
		sum := sha256.Sum256([]byte(script[1]))
		wantCSP := "default-src 'none'; script-src 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'; form-action " + action + "; base-uri 'none'"
		if got := html.UnescapeString(csp[1]); got != wantCSP {
			t.Errorf("the file's policy:\n%s\nwant\n%s", got, wantCSP)
		}

		resp := postCode(t, w, res.Code)
		if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/" || len(resp.Cookies()) != 1 {
			t.Fatalf("the form posted: %s to %q, %d cookies; want 303 to / with the session cookie", resp.Status, resp.Header.Get("Location"), len(resp.Cookies()))
		}
		if resp.Header.Get("Cache-Control") != "no-store" {
			t.Errorf("sign-in: Cache-Control %q, want no-store", resp.Header.Get("Cache-Control"))
		}
		if status, _ := upgrade(t, w, w.host, w.page(), resp.Cookies()[0]); status != http.StatusSwitchingProtocols {
			t.Errorf("the WebSocket with the cookie the form got: %d", status)
		}
		if _, err := os.Stat(path); !os.IsNotExist(err) {
			t.Errorf("the file once its code was spent: %v, want it gone", err)
		}
		if resp := postCode(t, w, res.Code); resp.StatusCode != http.StatusForbidden || len(resp.Cookies()) != 0 {
			t.Errorf("the code posted again: %s, %d cookies; want 403 and none", resp.Status, len(resp.Cookies()))
		}
		if resp := get(t, w, "/?code="+res.Code, w.host, nil); resp.StatusCode != http.StatusForbidden {
			t.Errorf("the posted code as a link: %s, want 403", resp.Status)
		}

		if unspent, err = server.WriteSignInFile(dir, w.mint(t)); err != nil {
			t.Fatal(err)
		}
	})
	// The sidecar stopped with the test above.
	if _, err := os.Stat(unspent); !os.IsNotExist(err) {
		t.Errorf("the file of a code not spent, once the sidecar stopped: %v, want it gone", err)
	}
}

// The file of a code not spent is removed when the code expires.
func TestWebSignInFileExpires(t *testing.T) {
	dir := t.TempDir()
	synctest.Test(t, func(t *testing.T) {
		srv := server.New(&server.Options{Token: server.NewToken()})
		ln := &pipeListener{conns: make(chan net.Conn), closed: make(chan struct{})}
		ctx, cancel := context.WithCancel(context.Background())
		served := make(chan error, 1)
		go func() { served <- srv.ServeWeb(ctx, pipeTCPListener{ln}, &server.WebOptions{SignInDir: dir}) }()
		synctest.Wait()
		code := server.MintWebCode(srv)
		path, err := server.WriteSignInFile(dir, protocol.WebCodeResult{Code: code, URL: "http://127.0.0.1:4242/?code=" + code})
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(server.WebCodeTTL - time.Second)
		synctest.Wait()
		if _, err := os.Stat(path); err != nil {
			t.Errorf("the file before its code expired: %v", err)
		}
		time.Sleep(time.Second)
		synctest.Wait()
		if _, err := os.Stat(path); !os.IsNotExist(err) {
			t.Errorf("the file once its code expired: %v, want it gone", err)
		}
		cancel()
		if err := <-served; err != nil {
			t.Errorf("ServeWeb: %v", err)
		}
		srv.Close()
	})
}

// WriteSignInFile removes the sign-in files a sidecar that was killed left
// (older than a code lives), and nothing else; it writes only for the
// page on a loopback address, and not through a link in place of its
// directory.
func TestWriteSignInFile(t *testing.T) {
	dir := t.TempDir()
	stale := filepath.Join(dir, "signin-0123.html")
	other := filepath.Join(dir, "notes.html")
	for _, p := range []string{stale, other} {
		if err := os.WriteFile(p, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		old := time.Now().Add(-server.WebCodeTTL - time.Minute)
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}
	fresh, err := server.WriteSignInFile(dir, protocol.WebCodeResult{Code: "c0de", URL: "http://127.0.0.1:1234/?code=c0de"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := server.WriteSignInFile(dir, protocol.WebCodeResult{Code: "c0de2", URL: "http://127.0.0.1:1234/?code=c0de2"}); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]bool{stale: false, other: true, fresh: true} {
		if _, err := os.Stat(p); (err == nil) != want {
			t.Errorf("%s: %v, want there %v", p, err, want)
		}
	}
	server.RemoveSignInFile(dir, "c0de")
	if _, err := os.Stat(fresh); !os.IsNotExist(err) {
		t.Errorf("RemoveSignInFile: %v, want it gone", err)
	}

	for _, u := range []string{"http://evil.example:1234/?code=x", "https://127.0.0.1:1234/?code=x", "http://127.0.0.1/?code=x"} {
		if _, err := server.WriteSignInFile(dir, protocol.WebCodeResult{Code: "x", URL: u}); err == nil {
			t.Errorf("a sign-in file for %s was written", u)
		}
	}
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(t.TempDir(), link); err != nil {
		t.Fatal(err)
	}
	if _, err := server.WriteSignInFile(link, protocol.WebCodeResult{Code: "x", URL: "http://127.0.0.1:1234/?code=x"}); err == nil {
		t.Error("a sign-in file was written through a link to another directory")
	}
}
