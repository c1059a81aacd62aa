package oauthtest

import (
	"context"
	"io"
	"net/http"
	"slices"
	"sync"
	"testing"
)

// Browser stands in for the user's browser: it loads the
// authorization URL and follows the redirects, back to the loopback
// callback, as a browser does when the user consents at once.
type Browser struct {
	t      testing.TB
	client *http.Client

	mu     sync.Mutex
	opened []string
	pages  []string // the callback pages' bodies
}

// NewBrowser returns a browser whose connections close when the test ends.
func NewBrowser(t testing.TB) *Browser {
	b := &Browser{t: t, client: &http.Client{Transport: &http.Transport{}}}
	t.Cleanup(b.client.CloseIdleConnections)
	return b
}

// Open is an OpenURL function: it loads u and follows the redirects. The
// test fails if the last page is not a 200.
func (b *Browser) Open(ctx context.Context, u string) error {
	b.mu.Lock()
	b.opened = append(b.opened, u)
	b.mu.Unlock()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	resp, err := b.client.Do(req)
	if err != nil {
		return err
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	b.mu.Lock()
	b.pages = append(b.pages, string(body))
	b.mu.Unlock()
	if resp.StatusCode != http.StatusOK {
		b.t.Errorf("the browser ended on %s with %s: %s", resp.Request.URL, resp.Status, body)
	}
	return nil
}

// Opens returns how many pages the browser was asked to open.
func (b *Browser) Opens() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.opened)
}

// Pages returns the bodies of the pages the browser ended on.
func (b *Browser) Pages() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.pages)
}
