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

// rootSet holds the MCP roots and the clients they are shown to.
type rootSet struct {
	wg sync.WaitGroup // the syncs set started

	// mu guards the fields below.
	mu      sync.Mutex
	dirs    []string                // the MCP roots, directories
	clients map[string]*rootsClient // by server: its current Conn's client
	closed  bool                    // Close began: set starts no sync
}

func newRootSet(dirs []string) *rootSet {
	return &rootSet{dirs: slices.Clone(dirs), clients: make(map[string]*rootsClient)}
}

// clientOptions declares the roots capability to the servers connected
// while the workspace has roots: the Manager's ConnOptions.ClientOptions.
// A server of a workspace without any is told of no roots capability: an
// empty list would tell a server that restricts itself to the roots
// (server-filesystem) to allow nothing.
func (r *rootSet) clientOptions(_ config.Server, opts *mcpsdk.ClientOptions) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.dirs) == 0 {
		return
	}
	if opts.Capabilities == nil {
		opts.Capabilities = &mcpsdk.ClientCapabilities{}
	}
	opts.Capabilities.RootsV2 = &mcpsdk.RootCapabilities{ListChanged: true}
}

// onClient takes the client of a server's new Conn (the Manager's
// ConnOptions.OnClient): it shows the roots as they are now, and the ones
// set gives from now on. It runs in the Manager, before the Conn's first
// session, so telling the client waits for nobody.
func (r *rootSet) onClient(srv config.Server, c *mcpsdk.Client) {
	rc := &rootsClient{client: c}
	r.mu.Lock()
	r.clients[srv.Name] = rc
	r.mu.Unlock()
	rc.sync(r.list)
}

// set sets the roots and tells every client, each on its own goroutine.
func (r *rootSet) set(dirs []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if slices.Equal(r.dirs, dirs) || r.closed {
		return
	}
	r.dirs = slices.Clone(dirs)
	for _, rc := range r.clients {
		r.wg.Go(func() { rc.sync(r.list) })
	}
}

// list returns the roots.
func (r *rootSet) list() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.dirs)
}

// Close starts no more syncs and waits for those in flight; after the
// Manager's Close, which ended their sessions, they end at once.
func (r *rootSet) Close() {
	r.mu.Lock()
	r.closed = true
	r.mu.Unlock()
	r.wg.Wait()
}

// SetRoots sets the MCP roots, directories: every server is told, at
// once, each on its own, so a server slow to take the news delays no other
// and not the caller. A server connected when the workspace had no roots
// was not told of the roots capability and learns of them when it
// reconnects or restarts.
func (w *Workspace) SetRoots(dirs []string) { w.roots.set(dirs) }

// Roots returns the MCP roots.
func (w *Workspace) Roots() []string { return w.roots.list() }
