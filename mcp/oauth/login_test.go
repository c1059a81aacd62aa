package oauth

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/freecode/freecode/internal/browserfile"
)

func TestCallbackServer(t *testing.T) {
	cb, err := listenCallback(0, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer cb.close()
	if !strings.HasPrefix(cb.redirectURL, "http://127.0.0.1:") || !strings.HasSuffix(cb.redirectURL, "/callback") {
		t.Fatalf("redirect URL %q, want http://127.0.0.1:<port>/callback", cb.redirectURL)
	}
	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	get := func(query string) (int, string) {
		t.Helper()
		resp, err := client.Get(cb.redirectURL + query)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	results := cb.expect("the-state")
	type answer struct {
		status int
		has    string
	}
	var got []answer
	for _, q := range []string{"?code=c1&state=wrong", "?code=c1"} {
		status, body := get(q)
		got = append(got, answer{status, firstMatch(body, "has expired")})
	}
	resp, err := client.Get(strings.TrimSuffix(cb.redirectURL, "/callback") + "/favicon.ico")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	got = append(got, answer{resp.StatusCode, ""})
	// A wrong state, no state, another path: none ends the wait.
	select {
	case r := <-results:
		t.Fatalf("the wait ended on a request it was not waiting for: %+v", r)
	default:
	}
	// The page for a code waits for its exchange (finish).
	page := make(chan answer, 1)
	go func() {
		status, body := get("?code=the-code&state=the-state&iss=https%3A%2F%2Fas.example")
		page <- answer{status, firstMatch(body, "FreeCode is signed in")}
	}()
	r := <-results
	if r.err != nil || r.res.Code != "the-code" || r.res.State != "the-state" || r.res.Iss != "https://as.example" {
		t.Errorf("result %+v, %v", r.res, r.err)
	}
	cb.finish(nil)
	got = append(got, <-page)
	want := []answer{{400, "has expired"}, {400, "has expired"}, {404, ""}, {200, "FreeCode is signed in"}}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(answer{})); diff != "" {
		t.Errorf("answers (-want +got):\n%s", diff)
	}
	// The link works once.
	if status, _ := get("?code=the-code&state=the-state"); status != 400 {
		t.Errorf("the same link again: %d, want 400", status)
	}

	// A code whose exchange failed: the page says so, escaped.
	results = cb.expect("s3")
	failed := make(chan string, 1)
	go func() {
		_, body := get("?code=c3&state=s3")
		failed <- body
	}()
	<-results
	cb.finish(errors.New(`token exchange failed: oauth2: "invalid_target" "<b>no</b>"`))
	if body := <-failed; !strings.Contains(body, "Sign-in failed: token exchange failed") || !strings.Contains(body, "&lt;b&gt;no&lt;/b&gt;") || strings.Contains(body, "signed in") {
		t.Errorf("the page for a failed exchange:\n%s", body)
	}

	results = cb.expect("s2")
	status, body := get("?error=access_denied&error_description=%3Cscript%3Ealert(1)%3C%2Fscript%3E&state=s2")
	r = <-results
	var ae *authorizationError
	if !errors.As(r.err, &ae) || ae.code != "access_denied" {
		t.Errorf("an error answer gave %v, want the authorization error", r.err)
	}
	if status != 200 || strings.Contains(body, "<script>") || !strings.Contains(body, "&lt;script&gt;") {
		t.Errorf("the page for an error (%d) does not escape the server's text:\n%s", status, body)
	}
}

func firstMatch(s, sub string) string {
	if strings.Contains(s, sub) {
		return sub
	}
	return s
}

func TestCallbackPortInUse(t *testing.T) {
	cb, err := listenCallback(0, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer cb.close()
	u, _ := url.Parse(cb.redirectURL)
	port, _ := strconv.Atoi(u.Port())
	if _, err := listenCallback(port, slog.New(slog.DiscardHandler)); err == nil || !strings.Contains(err.Error(), "oauth.callbackPort") {
		t.Errorf("listening on a port in use: %v; want an error naming oauth.callbackPort", err)
	}
}

// OpenBrowser gives the browser commands the file: URL of a page that
// sends the browser on to the URL, never the URL (issue 30): the page is
// the user's alone, 0600 in ~/.freecode/browser (0700), and is removed
// when the sign-in that opened it ends, or when ctx is done.
func TestOpenBrowser(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the stand-in browser is a shell script")
	}
	home := t.TempDir()
	t.Setenv("HOME", home)
	pages := filepath.Join(home, ".freecode", "browser")
	dir := t.TempDir()
	out := filepath.Join(dir, "opened")
	script := filepath.Join(dir, "browser")
	if err := os.WriteFile(script, []byte("#!/bin/sh\nprintf '%s\\n' \"$@\" > "+out+"\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	const u = "https://as.example/authorize?client_id=x&state=the-state"
	// opened returns the page the browser was given, after the
	// arguments before it, and checks that it sends the browser to u.
	opened := func(t *testing.T) (before []string, page string) {
		t.Helper()
		got, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		args := strings.Fields(string(got))
		if strings.Contains(string(got), "the-state") || len(args) == 0 {
			t.Fatalf("the browser got %q, want the page's file: URL", got)
		}
		pu, err := url.Parse(args[len(args)-1])
		if err != nil || pu.Scheme != "file" || filepath.Dir(pu.Path) != pages {
			t.Fatalf("the browser got %q, want the file: URL of a page in %s", got, pages)
		}
		target, err := browserfile.Follow(args[len(args)-1])
		if err != nil || target != u {
			t.Errorf("the page sends the browser to %q (%v), want %q", target, err, u)
		}
		for path, want := range map[string]os.FileMode{pu.Path: 0o600, pages: 0o700 | os.ModeDir} {
			if fi, err := os.Lstat(path); err != nil || fi.Mode() != want {
				t.Errorf("%s: %v (%v), want %v", path, fi.Mode(), err, want)
			}
		}
		return args[:len(args)-1], pu.Path
	}
	tests := []struct {
		browser string
		before  []string
	}{
		{script, []string{}},
		{script + " --new-tab %s", []string{"--new-tab"}},
		// The first command fails: the next one is tried.
		{"false" + string(os.PathListSeparator) + script, []string{}},
	}
	for _, tc := range tests {
		t.Run(tc.browser, func(t *testing.T) {
			os.Remove(out)
			t.Setenv("BROWSER", tc.browser)
			ctx := withOpenedPages(t.Context())
			if err := OpenBrowser(ctx, u); err != nil {
				t.Fatalf("OpenBrowser: %v", err)
			}
			before, page := opened(t)
			if diff := cmp.Diff(tc.before, before); diff != "" {
				t.Errorf("the arguments before the page (-want +got):\n%s", diff)
			}
			// The sign-in ends: its page goes.
			endSignIn(ctx)
			if _, err := os.Stat(page); !os.IsNotExist(err) {
				t.Errorf("the page is still there once the sign-in ended: %v", err)
			}
		})
	}
	// Opened outside a sign-in, the page goes with ctx.
	t.Run("outside a sign-in", func(t *testing.T) {
		t.Setenv("BROWSER", script)
		os.Remove(out)
		ctx, cancel := context.WithCancel(t.Context())
		if err := OpenBrowser(ctx, u); err != nil {
			t.Fatalf("OpenBrowser: %v", err)
		}
		_, page := opened(t)
		cancel()
		for range 1000 { // the removal runs in a goroutine of its own
			if _, err := os.Stat(page); os.IsNotExist(err) {
				return
			}
			time.Sleep(time.Millisecond)
		}
		t.Error("the page is still there once ctx was done")
	})
	t.Run("not http", func(t *testing.T) {
		t.Setenv("BROWSER", script)
		os.Remove(out)
		if err := OpenBrowser(context.Background(), "file:///etc/passwd"); err == nil {
			t.Error("OpenBrowser opened a file: URL")
		}
		if _, err := os.Stat(out); err == nil {
			t.Error("the browser command ran for a file: URL")
		}
	})
	// A file is given by its file: URL, its path escaped as a URL's.
	t.Run("a file", func(t *testing.T) {
		t.Setenv("BROWSER", script)
		os.Remove(out)
		if err := OpenBrowserFile(context.Background(), "/home/a b/signin#1.html"); err != nil {
			t.Fatalf("OpenBrowserFile: %v", err)
		}
		if got, _ := os.ReadFile(out); string(got) != "file:///home/a%20b/signin%231.html\n" {
			t.Errorf("the browser got %q, want the file's URL", got)
		}
		os.Remove(out)
		if err := OpenBrowserFile(context.Background(), "signin.html"); err == nil {
			t.Error("OpenBrowserFile opened a relative path")
		}
	})
}

// withOpenedPages is ctx as fetchCode hands it to the opener.
func withOpenedPages(ctx context.Context) context.Context {
	return context.WithValue(ctx, openedPagesKey{}, &openedPages{})
}

// endSignIn is fetchCode's end, for the pages of withOpenedPages.
func endSignIn(ctx context.Context) {
	ctx.Value(openedPagesKey{}).(*openedPages).remove()
}
