package server

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"html"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"github.com/freecode/freecode/internal/browserfile"
	"github.com/freecode/freecode/internal/protocol"
)

// The sign-in file: what `freecode web` gives the browser instead of the
// sign-in URL (Jupyter's redirect file). A browser's argv is every local
// user's to read (/proc/PID/cmdline, ps), and whoever spends a code first
// gets the session; the file is the user's alone (0600, in a 0700
// directory), and the browser is given only its path. It posts the code to
// /signin, so the code is in no URL either: not in the history, a Referer
// or a log. The sidecar removes the file once its code is spent or
// expired, or it stops (WebOptions.SignInDir); WriteSignInFile sweeps what
// a sidecar that was killed left.

// signInPath is where the sign-in file posts the code.
const signInPath = "/signin"

// signInScript submits the form as soon as the file is read; the file's
// policy allows this script alone, by its hash.
const signInScript = `document.forms[0].submit()`

var signInScriptHash = func() string {
	h := sha256.Sum256([]byte(signInScript))
	return "'sha256-" + base64.StdEncoding.EncodeToString(h[:]) + "'"
}()

// DefaultSignInDir returns ~/.freecode/web: FreeCode's own directory,
// which no sandboxed server may read (sandbox.DefaultDenyRead), beside
// serve.json.
func DefaultSignInDir() (string, error) {
	sf, err := protocol.DefaultServeFilePath()
	if err != nil {
		return "", err
	}
	return filepath.Join(filepath.Dir(sf), "web"), nil
}

// signInFileName is the name of the sign-in file of code: derived from it,
// so that the sidecar, which minted the code, finds the file to remove,
// and telling nothing of it (the name is in the browser's argv).
func signInFileName(code string) string {
	h := sha256.Sum256([]byte("freecode sign-in file\x00" + code))
	return "signin-" + hex.EncodeToString(h[:16]) + ".html"
}

// WriteSignInFile writes, in dir (made 0700 if it is not: see
// browserfile.Write, which the OAuth sign-in's page uses too), the page that
// signs a browser in with res's code, readable by the user alone, and
// returns its path. Sign-in files older than a code lives are removed
// first: a sidecar that was killed did not.
func WriteSignInFile(dir string, res protocol.WebCodeResult) (string, error) {
	u, err := url.Parse(res.URL)
	if err != nil || u.Scheme != "http" || res.Code == "" {
		return "", fmt.Errorf("writing the sign-in file: the sign-in URL %q is not the page's", res.URL)
	}
	host, _, err := net.SplitHostPort(u.Host)
	if ip := net.ParseIP(host); err != nil || ip == nil || !ip.IsLoopback() {
		return "", fmt.Errorf("writing the sign-in file: the sign-in URL %q is not on a loopback address", res.URL)
	}
	if err := browserfile.PrivateDir(dir); err != nil {
		return "", fmt.Errorf("writing the sign-in file: %w", err)
	}
	sweepSignInFiles(dir, time.Now().Add(-webCodeTTL))
	action := "http://" + u.Host + signInPath
	// The file's own policy: its one script, its one form's target (path
	// matching is skipped on the redirect to /, as CSP says), nothing
	// else; a file: page is not under the page's policy.
	csp := "default-src 'none'; script-src " + signInScriptHash + "; form-action " + action + "; base-uri 'none'"
	page := `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="` + html.EscapeString(csp) + `">
<meta name="referrer" content="no-referrer">
<title>FreeCode MCP: signing in</title>
</head>
<body>
<form method="post" action="` + html.EscapeString(action) + `">
<input type="hidden" name="code" value="` + html.EscapeString(res.Code) + `">
<p>Signing in to the FreeCode MCP page… <button type="submit">Continue</button></p>
</form>
<script>` + signInScript + `</script>
</body>
</html>
`
	path, err := browserfile.Write(dir, signInFileName(res.Code), []byte(page))
	if err != nil {
		return "", fmt.Errorf("writing the sign-in file: %w", err)
	}
	return path, nil
}

// RemoveSignInFile removes the sign-in file of code in dir, if any: what
// `freecode web` does when no browser opened it.
func RemoveSignInFile(dir, code string) {
	os.Remove(filepath.Join(dir, signInFileName(code)))
}

// sweepSignInFiles removes the sign-in files in dir last written before
// cutoff.
func sweepSignInFiles(dir string, cutoff time.Time) {
	browserfile.Sweep(dir, "signin-", ".html", cutoff)
}
