package servertest

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/freecode/freecode/internal/browserfile"
)

// browserEnv makes the test binary a browser (see Main): it loads the URL
// it is given as its last argument, following redirects, as a user's
// browser does when the user consents at once, and appends the URL to the
// file the variable names.
const browserEnv = "FREECODE_SERVERTEST_BROWSER"

// Browser sets $BROWSER for the rest of the test to the test binary acting
// as a browser, for the sidecar's own opener (oauth.OpenBrowser) to run: in
// this process, or in a sidecar binary started after it. Opened returns
// the URLs it loaded so far: those the pages it was given sent it to.
func Browser(t *testing.T) (opened func() []string) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(t.TempDir(), "browser.log")
	t.Setenv(browserEnv, log)
	t.Setenv("BROWSER", exe)
	return func() []string {
		b, err := os.ReadFile(log)
		if err != nil {
			return nil
		}
		return strings.Fields(string(b))
	}
}

// runBrowser is the test binary as a browser. It is given the file: URL
// of the page that sends it on to the sign-in page (oauth.OpenBrowser):
// what it loads, and records, is where that page sends it.
func runBrowser() int {
	u, err := browserfile.Follow(os.Args[len(os.Args)-1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "servertest browser:", err)
		return 1
	}
	// One short line in append mode: written whole, whoever else appends.
	f, err := os.OpenFile(os.Getenv(browserEnv), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err == nil {
		_, err = fmt.Fprintln(f, u)
		f.Close()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "servertest browser:", err)
		return 1
	}
	resp, err := http.Get(u)
	if err != nil {
		fmt.Fprintln(os.Stderr, "servertest browser:", err)
		return 1
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		fmt.Fprintf(os.Stderr, "servertest browser: %s ended on %s: %s\n", u, resp.Status, body)
		return 1
	}
	return 0
}
