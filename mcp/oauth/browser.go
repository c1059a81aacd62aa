package oauth

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/freecode/freecode/config"
	"github.com/freecode/freecode/internal/browserfile"
	"github.com/freecode/freecode/mcp/proc"
)

// OpenBrowser opens an http or https URL in the user's browser without
// putting it on any command line (issue 30): the URL of a sign-in is the
// sign-in's to whoever reads it first, and every local user may read a
// browser's argv, or an opener's. So the URL goes into a page that sends
// the browser on to it (browserfile.WriteRedirect), in a file only the
// user can read in ~/.freecode/browser, and the browser is started with
// the file's file: URL: the commands of $BROWSER (separated by the path
// list separator; "%s" in one stands for the file's URL, else it is the
// last argument), else the system's opener (xdg-open, open, rundll32).
//
// The page is removed when the sign-in that opened it ends (the browser
// came back, or the wait for it ended), or, opened outside a sign-in, when
// ctx is done or after pageLife at the latest. OpenBrowser returns once a
// command started and did not fail at once; an error means none did, or
// the page could not be written, and the URL is then the caller's to show
// the user.
func OpenBrowser(ctx context.Context, rawURL string) error {
	if u, err := url.Parse(rawURL); err != nil || (u.Scheme != "https" && u.Scheme != "http") {
		return errors.New("only http and https URLs are opened")
	}
	dir, err := browserfile.DefaultDir()
	if err != nil {
		return err
	}
	path, err := browserfile.WriteRedirect(dir, rawURL)
	if err != nil {
		return fmt.Errorf("writing the page that opens it: %w", err)
	}
	if pages, ok := ctx.Value(openedPagesKey{}).(*openedPages); ok {
		pages.add(path)
	} else {
		remove := sync.OnceFunc(func() { os.Remove(path) })
		stop := context.AfterFunc(ctx, remove)
		time.AfterFunc(pageLife, func() {
			stop()
			remove()
		})
	}
	if err := OpenBrowserFile(ctx, path); err != nil {
		os.Remove(path)
		return err
	}
	return nil
}

// pageLife is how long a page OpenBrowser wrote outside a sign-in is
// kept: a browser reads it as it starts.
const pageLife = 10 * time.Minute

// openedPagesKey is the context key of a sign-in's *openedPages.
type openedPagesKey struct{}

// openedPages are the pages OpenBrowser wrote for one sign-in, which
// removes them when it ends.
type openedPages struct {
	// mu guards the fields below.
	mu      sync.Mutex
	paths   []string
	removed bool // the sign-in ended: a page written since goes at once
}

func (p *openedPages) add(path string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.removed {
		// The page is opened in a goroutine of its own: a sign-in may end
		// before it is written (the user opened the URL by hand).
		os.Remove(path)
		return
	}
	p.paths = append(p.paths, path)
}

func (p *openedPages) remove() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, path := range p.paths {
		os.Remove(path)
	}
	p.paths, p.removed = nil, true
}

// OpenBrowserFile opens a local file, by its absolute path, in the user's
// browser as OpenBrowser opens its page, the commands given its file: URL:
// how a secret reaches the browser without being in any process's argv
// (see browserfile).
func OpenBrowserFile(ctx context.Context, path string) error {
	u, err := browserfile.FileURL(path)
	if err != nil {
		return fmt.Errorf("opening %s: %w", path, err)
	}
	return openBrowser(ctx, u)
}

func openBrowser(ctx context.Context, rawURL string) error {
	var errs []error
	if b := os.Getenv("BROWSER"); b != "" {
		for _, line := range filepath.SplitList(b) {
			argv, err := config.SplitCommand(line)
			if err != nil || len(argv) == 0 {
				continue
			}
			if !slices.ContainsFunc(argv, func(a string) bool { return strings.Contains(a, "%s") }) {
				argv = append(argv, "%s")
			}
			for i, a := range argv {
				argv[i] = strings.ReplaceAll(a, "%s", rawURL)
			}
			err = startBrowser(ctx, argv)
			if err == nil {
				return nil
			}
			errs = append(errs, err)
		}
	}
	var argv []string
	switch runtime.GOOS {
	case "darwin":
		argv = []string{"open", rawURL}
	case "windows":
		argv = []string{"rundll32", "url.dll,FileProtocolHandler", rawURL}
	default:
		argv = []string{"xdg-open", rawURL}
	}
	err := startBrowser(ctx, argv)
	if err == nil {
		return nil
	}
	return errors.Join(append(errs, err)...)
}

// browserGrace is how long OpenBrowser watches a browser command for an
// early failure (xdg-open with no desktop exits at once with an error); a
// command still running then is a browser that opened.
const browserGrace = 2 * time.Second

func startBrowser(ctx context.Context, argv []string) error {
	cmd := exec.Command(argv[0], argv[1:]...)
	// What the launch leaves running is the user's browser, never a
	// server's escapee to end.
	launched := proc.ClaimLaunch()
	if err := cmd.Start(); err != nil {
		launched()
		return fmt.Errorf("%s: %w", argv[0], err)
	}
	exited := make(chan error, 1)
	go func() {
		err := cmd.Wait()
		launched()
		exited <- err
	}()
	t := time.NewTimer(browserGrace)
	defer t.Stop()
	select {
	case err := <-exited:
		if err != nil {
			return fmt.Errorf("%s: %w", argv[0], err)
		}
		return nil
	case <-t.C:
		return nil // running: the Wait goroutine reaps it whenever it ends
	case <-ctx.Done():
		return nil
	}
}
