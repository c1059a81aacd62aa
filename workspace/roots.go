package workspace

import (
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/freecode/freecode/config"
)

// The MCP roots are the directories every server is told the user works
// in: an editor's workspace folders. Each server's go-sdk client keeps
// them (the roots capability, roots/list) and tells its session when they
// change (notifications/roots/list_changed); the client outlives a
// session, so a reconnect shows the same roots.

// rootsClient is the go-sdk client of a server's current Conn and the
// roots it shows.
type rootsClient struct {
	// mu serializes the changes, so that the last SetRoots is what stays.
	mu     sync.Mutex
	client *mcpsdk.Client
	shown  []string // as file: URIs
}

// rootURI returns the file: URI of the directory dir.
func rootURI(dir string) string {
	p := filepath.ToSlash(dir)
	if !strings.HasPrefix(p, "/") {
		p = "/" + p // a Windows drive
	}
	return (&url.URL{Scheme: "file", Path: p}).String()
}

// sync makes rc show the roots latest returns, read once rc is its own:
// of two syncs, the later shows the later roots. Telling a session can
// wait for the server (up to the go-sdk's own bound), so it runs off the
// caller's goroutine but for a client that has no session yet.
func (rc *rootsClient) sync(latest func() []string) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	want := latest()
	uris := make([]string, len(want))
	for i, dir := range want {
		uris[i] = rootURI(dir)
	}
	var gone []string
	for _, u := range rc.shown {
		if !slices.Contains(uris, u) {
			gone = append(gone, u)
		}
	}
	var added []*mcpsdk.Root
	for i, u := range uris {
		if !slices.Contains(rc.shown, u) {
			added = append(added, &mcpsdk.Root{URI: u, Name: filepath.Base(want[i])})
		}
	}
	if len(gone) > 0 {
		rc.client.RemoveRoots(gone...)
	}
	if len(added) > 0 {
		rc.client.AddRoots(added...)
	}
	rc.shown = uris
}

// clientOptions declares the roots capability to the servers connected
// while the workspace has roots. A server of a workspace without any is
// told of no roots capability: an empty list would tell a server that
// restricts itself to the roots (server-filesystem) to allow nothing.
func (w *Workspace) clientOptions(_ config.Server, opts *mcpsdk.ClientOptions) {
	w.rootsMu.Lock()
	defer w.rootsMu.Unlock()
	if len(w.roots) == 0 {
		return
	}
	if opts.Capabilities == nil {
		opts.Capabilities = &mcpsdk.ClientCapabilities{}
	}
	opts.Capabilities.RootsV2 = &mcpsdk.RootCapabilities{ListChanged: true}
}

// onClient takes the client of a server's new Conn: it shows the roots as
// they are now, and the ones SetRoots gives from now on. It runs in the
// Manager, before the Conn's first session, so telling the client waits
// for nobody.
func (w *Workspace) onClient(srv config.Server, c *mcpsdk.Client) {
	rc := &rootsClient{client: c}
	w.rootsMu.Lock()
	w.rootsClients[srv.Name] = rc
	w.rootsMu.Unlock()
	rc.sync(w.Roots)
}

// SetRoots sets the MCP roots, directories: every server is told, at
// once, each on its own, so a server slow to take the news delays no other
// and not the caller. A server connected when the workspace had no roots
// was not told of the roots capability and learns of them when it
// reconnects or restarts.
func (w *Workspace) SetRoots(dirs []string) {
	w.rootsMu.Lock()
	defer w.rootsMu.Unlock()
	if slices.Equal(w.roots, dirs) || w.rootsClosed {
		return
	}
	w.roots = slices.Clone(dirs)
	for _, rc := range w.rootsClients {
		w.wg.Go(func() { rc.sync(w.Roots) })
	}
}

// Roots returns the MCP roots.
func (w *Workspace) Roots() []string {
	w.rootsMu.Lock()
	defer w.rootsMu.Unlock()
	return slices.Clone(w.roots)
}
