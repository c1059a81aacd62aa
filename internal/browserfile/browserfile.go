// Package browserfile writes the pages FreeCode hands a browser by their
// path rather than by a URL with a secret in it (issue 30, item 1). A
// browser is started with its page on its command line, which every local
// user may read (/proc/PID/cmdline, ps), as they may the command line of
// the opener before it (xdg-open, a $BROWSER script); whoever reads a
// sign-in URL there can use it first. So the secret goes into a file only
// the user can read (0600, in a 0700 directory of theirs) and the browser
// is given the file: the web page's sign-in form (server.WriteSignInFile)
// and the OAuth sign-in's redirect to the authorization server
// (oauth.OpenBrowser, Redirect).
//
// What stays: a browser that cannot read the user's dot-directories (one
// packaged as a snap, or a flatpak without the file forwarded) shows an
// error instead of the page; the URL is then given to the user's own
// terminal or log to open by hand.
package browserfile

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"html"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

// DefaultDir returns ~/.freecode/browser, where oauth.OpenBrowser writes
// its pages: FreeCode's own directory, which no sandboxed server may read.
func DefaultDir() (string, error) {
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("locating the directory of the browser's pages: %w", err)
	}
	return filepath.Join(home, ".freecode", "browser"), nil
}

// PrivateDir makes dir, and makes it the user's alone if it was not: a
// directory, not a link to one elsewhere, that only its owner enters.
func PrivateDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a directory", dir)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return os.Chmod(dir, 0o700)
	}
	return nil
}

// Write writes page into a new file name in dir, which it first makes the
// user's alone (PrivateDir), readable by the user alone (0600), and
// returns the file's path. A file of that name already there is an error,
// never written through (it could be a link).
func Write(dir, name string, page []byte) (string, error) {
	if err := PrivateDir(dir); err != nil {
		return "", err
	}
	path := filepath.Join(dir, name)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", err
	}
	_, err = f.Write(page)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
		return "", err
	}
	return path, nil
}

// Sweep removes the files in dir whose names begin with prefix and end
// with suffix, last written before cutoff: what a process that was killed
// did not remove.
func Sweep(dir, prefix, suffix string, cutoff time.Time) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), prefix) || !strings.HasSuffix(e.Name(), suffix) {
			continue
		}
		if fi, err := e.Info(); err == nil && fi.ModTime().Before(cutoff) {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}

// redirectPrefix begins the names of the redirect pages.
const redirectPrefix = "redirect-"

// redirectSweep is the age past which WriteRedirect removes the redirect
// pages left in its directory: a sign-in waits five minutes by default,
// and a page is needed only until the browser read it.
const redirectSweep = time.Hour

// WriteRedirect writes, in dir (see Write), a page that sends the browser
// on to target, an http or https URL, and returns its path: its name is
// random and tells nothing. Redirect pages older than redirectSweep are
// removed first.
func WriteRedirect(dir, target string) (string, error) {
	page, err := Redirect(target)
	if err != nil {
		return "", err
	}
	if err := PrivateDir(dir); err != nil {
		return "", err
	}
	Sweep(dir, redirectPrefix, ".html", time.Now().Add(-redirectSweep))
	return Write(dir, redirectPrefix+rand.Text()+".html", page)
}

// redirectPolicy is the redirect page's own Content-Security-Policy: it
// loads, runs and submits nothing. The refresh that sends the browser on,
// and the link the user may follow instead, are navigations, which no
// directive of it governs.
const redirectPolicy = "default-src 'none'; base-uri 'none'; form-action 'none'"

// Redirect returns the page that sends a browser on to target, an http or
// https URL: a meta refresh, with a link for a browser that refreshes
// nothing, under redirectPolicy, with no referrer.
func Redirect(target string) ([]byte, error) {
	u, err := url.Parse(target)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, fmt.Errorf("only an http or https URL is redirected to, not %q", target)
	}
	to := html.EscapeString(u.String())
	var b bytes.Buffer
	b.WriteString(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="` + redirectPolicy + `">
<meta name="referrer" content="no-referrer">
<meta http-equiv="refresh" content="0; url=` + to + `">
<title>FreeCode: opening the sign-in page</title>
</head>
<body>
<p>Opening the sign-in page… <a href="` + to + `">Continue</a></p>
</body>
</html>
`)
	return b.Bytes(), nil
}

var refreshTarget = regexp.MustCompile(`<meta http-equiv="refresh" content="0; url=([^"]+)">`)

// RedirectTarget returns the URL a page Redirect wrote sends the browser
// to: what a test's stand-in for a browser follows.
func RedirectTarget(page []byte) (string, error) {
	m := refreshTarget.FindSubmatch(page)
	if m == nil {
		return "", fmt.Errorf("not a redirect page of FreeCode's")
	}
	return html.UnescapeString(string(m[1])), nil
}

// FileURL returns the file: URL of the file at path, which must be
// absolute, its path escaped as a URL's.
func FileURL(path string) (string, error) {
	if !filepath.IsAbs(path) {
		return "", fmt.Errorf("%s is not an absolute path", path)
	}
	p := filepath.ToSlash(path)
	if !strings.HasPrefix(p, "/") {
		p = "/" + p // C:/… on Windows: file:///C:/…
	}
	return (&url.URL{Scheme: "file", Path: p}).String(), nil
}

// Follow returns the URL a browser given u ends up asking for: u itself,
// or, for the file: URL of a redirect page, the page's target. It is what
// the tests' stand-ins for a browser do with what they are given.
func Follow(u string) (string, error) {
	pu, err := url.Parse(u)
	if err != nil || pu.Scheme != "file" {
		return u, err
	}
	p := pu.Path
	if len(p) > 2 && p[0] == '/' && p[2] == ':' {
		p = p[1:] // /C:/… on Windows
	}
	page, err := os.ReadFile(filepath.FromSlash(p))
	if err != nil {
		return "", err
	}
	return RedirectTarget(page)
}
