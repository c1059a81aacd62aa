package workspace

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"slices"
	"sync"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/freecode/freecode/config"
	"github.com/freecode/freecode/internal/manifest"
	"github.com/freecode/freecode/mcp"
	"github.com/freecode/freecode/orchestrator"
)

// ManifestDir is the directory, beside the config file, that holds the
// servers' manifests (internal/manifest).
const ManifestDir = "manifests"

// ToolReview is one tool whose definition awaits the user's review: it
// changed since the user accepted it, or it is new on a server whose tools
// were pinned already. Its JSON form is what the frontend protocol sends.
type ToolReview struct {
	Server string `json:"server"`
	// Tool is the server's name for the tool; ID is its tool id.
	Tool string `json:"tool"`
	ID   string `json:"id"`
	// Kind is "changed" or "new".
	Kind string `json:"kind"`
	// Rejected: the user rejected the definition listed; calls are denied.
	Rejected bool `json:"rejected,omitempty"`
	// Hidden: the tool is kept from models meanwhile (see
	// orchestrator.Review).
	Hidden bool `json:"hidden,omitempty"`
	// Hash names the listed definition: accepting or rejecting with it
	// fails if the server changed the tool again meanwhile.
	Hash   string           `json:"hash"`
	Change *manifest.Change `json:"change"`
	// Diff is Change as lines to read; the server's text, to be escaped
	// before it reaches a terminal.
	Diff string `json:"diff"`
}

// ErrNoReview means a server's tools cannot be reviewed: it has no
// manifest yet, or its pinning is off.
var ErrNoReview = errors.New("nothing to review")

// pinner pins the tools of every server against its manifest and
// registers them as reviewed.
type pinner struct {
	store *manifest.Store

	// mu serializes a server's registration with the manifest update it
	// comes from, and a review's update with the registration it makes.
	mu sync.Mutex
	// live holds, by server, what the server was last registered from.
	live map[string]*liveTools

	// adoptMu guards adopted: the earlier keys (config.LegacyManifestKey)
	// already looked for, so each is looked for once per workspace.
	adoptMu sync.Mutex
	adopted map[string]bool
}

// liveTools is a server's last registration: the entry and tools it came
// from and the reviews it was made with.
type liveTools struct {
	entry      config.Server
	tools      []*mcpsdk.Tool
	serverInfo *mcp.ServerInfo
	protoVer   string
	reason     string
	reviews    []ToolReview
}

// entryKey returns the manifest key of srv in this workspace (see
// ManifestKey), looking for a manifest under its earlier key once per
// workspace.
func (w *Workspace) entryKey(srv config.Server) string {
	legacy := config.LegacyManifestKey(w.root, srv)
	p := w.pins
	p.adoptMu.Lock()
	defer p.adoptMu.Unlock()
	if p.adopted[legacy] {
		return config.ManifestKey(w.root, srv)
	}
	p.adopted[legacy] = true
	key, err := ManifestKey(context.Background(), p.store, w.root, srv)
	if err != nil {
		w.logger.Warn("carrying a server's manifest over to its new key; its tools are pinned anew", "server", srv.Name, "error", err)
	}
	return key
}

// ManifestKey returns the key of srv's manifest in store, for the project
// in root: its identity (config.ManifestKey). A manifest that srv's entry,
// as it is now, had under the earlier kind of key (a hash of the entry:
// config.LegacyManifestKey) is carried over first, so pins and pending
// reviews survive the change of key. The key is good whatever the error,
// which says that a manifest could not be carried over. The CLI, which
// reads manifests without a workspace, uses it too.
func ManifestKey(ctx context.Context, s *manifest.Store, root string, srv config.Server) (string, error) {
	key := config.ManifestKey(root, srv)
	_, err := s.Adopt(ctx, key, config.LegacyManifestKey(root, srv))
	return key, err
}

// listing is the Manager's ManifestFunc: what srv's manifest holds.
func (w *Workspace) listing(srv config.Server) *mcp.Listing {
	m, err := w.pins.store.Load(w.entryKey(srv))
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			w.logger.Warn("ignoring a server's manifest", "server", srv.Name, "error", err)
		}
		return nil
	}
	l := &mcp.Listing{Tools: m.Tools, ProtocolVersion: m.ProtocolVersion}
	if m.ServerInfo != nil {
		l.ServerInfo = &mcp.ServerInfo{Name: m.ServerInfo.Name, Version: m.ServerInfo.Version}
	}
	return l
}

// hasManifest reports whether srv has a manifest to be registered from.
func (w *Workspace) hasManifest(srv config.Server) (*manifest.Manifest, bool) {
	m, err := w.pins.store.Load(w.entryKey(srv))
	return m, err == nil
}

// onTools is the Manager's OnToolsChanged, from a Conn goroutine (or the
// Manager's, for a server registered from its manifest): the tools are
// compared with their pins, the manifest written, and the tools registered
// as they are to be shown.
func (w *Workspace) onTools(ev mcp.ToolsChanged) {
	p := w.pins
	p.mu.Lock()
	defer p.mu.Unlock()
	if ev.Tools == nil {
		w.reg.RemoveServer(ev.Server, ev.Reason)
		if lt := p.live[ev.Server]; lt != nil {
			delete(p.live, ev.Server)
			if len(lt.reviews) > 0 {
				w.events.publish(&ReviewEvent{Server: ev.Server, Reviews: []ToolReview{}})
			}
		}
		return
	}
	var m *manifest.Manifest
	if ev.Reason != "manifest" {
		m = w.observe(ev)
	} else if loaded, err := p.store.Load(w.entryKey(ev.Entry)); err == nil {
		m = loaded
	}
	w.registerLocked(ev.Server, &liveTools{entry: ev.Entry, tools: ev.Tools, serverInfo: ev.ServerInfo,
		protoVer: ev.ProtocolVersion, reason: ev.Reason}, m)
}

// applyPinning registers anew the tools of the servers whose pinning was
// turned on or off, as their last list is to be registered now.
func (w *Workspace) applyPinning(running []config.Server) {
	p := w.pins
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, s := range running {
		lt := p.live[s.Name]
		if lt == nil || lt.entry.PinningOff == s.PinningOff {
			continue
		}
		rest := lt.entry
		rest.PinningOff = s.PinningOff
		if !rest.Equal(s) {
			continue // another entry: the Manager restarts the server
		}
		next := *lt
		next.entry.PinningOff = s.PinningOff
		next.reason = "pinning"
		var m *manifest.Manifest
		if !s.PinningOff {
			m = w.observe(mcp.ToolsChanged{Server: s.Name, Tools: lt.tools, Entry: next.entry,
				ServerInfo: lt.serverInfo, ProtocolVersion: lt.protoVer})
		}
		w.registerLocked(s.Name, &next, m)
	}
}

// observe records a server's new list in its manifest, pinning what is
// new, and returns the manifest. When the manifest cannot be written (the
// disk, the bound) the list is compared with the manifest on disk all the
// same, so that a change is never waved through for want of a write.
func (w *Workspace) observe(ev mcp.ToolsChanged) *manifest.Manifest {
	key := w.entryKey(ev.Entry)
	pin := !ev.Entry.PinningOff
	m, err := w.pins.store.Update(context.Background(), key, func(m *manifest.Manifest, corrupt error) error {
		if corrupt != nil {
			w.logger.Warn("ignoring a server's manifest; its tools are pinned anew", "server", ev.Server, "error", corrupt)
		}
		m.Server, m.ProtocolVersion, m.ServerInfo = ev.Server, ev.ProtocolVersion, nil
		if ev.ServerInfo != nil {
			m.ServerInfo = &manifest.ServerInfo{Name: ev.ServerInfo.Name, Version: ev.ServerInfo.Version}
		}
		return m.Observe(ev.Tools, pin)
	})
	if err == nil {
		return m
	}
	w.logger.Warn("writing a server's manifest", "server", ev.Server, "error", err)
	m, lerr := w.pins.store.Load(key)
	if lerr != nil {
		m = &manifest.Manifest{Key: key}
	}
	if oerr := m.Observe(ev.Tools, pin); oerr != nil {
		w.logger.Warn("pinning a server's tools", "server", ev.Server, "error", oerr)
	}
	return m
}

// registerLocked registers lt's tools, reviewed against m (nil: no
// manifest, nothing to review), and publishes a *ReviewEvent if the
// server's reviews changed. The caller holds pins.mu.
func (w *Workspace) registerLocked(server string, lt *liveTools, m *manifest.Manifest) {
	reviewed, reviews := w.review(server, lt, m)
	// prev may be lt itself (a recheck): its reviews are read before
	// they are replaced.
	prev, had := w.pins.live[server]
	var before []ToolReview
	if had {
		before = prev.reviews
	}
	w.pins.live[server] = lt
	w.reg.SetReviewedTools(server, reviewed, w.runner(server), lt.reason)
	reviews = w.withIDs(reviews)
	lt.reviews = reviews
	if !had && len(reviews) == 0 || had && sameReviews(before, reviews) {
		return
	}
	w.events.publish(&ReviewEvent{Server: server, Reviews: reviews})
}

// review returns lt's tools as they are to be registered, and the reviews
// among them.
func (w *Workspace) review(server string, lt *liveTools, m *manifest.Manifest) ([]orchestrator.ReviewedTool, []ToolReview) {
	out := make([]orchestrator.ReviewedTool, 0, len(lt.tools))
	if m == nil || lt.entry.PinningOff {
		for _, t := range lt.tools {
			out = append(out, orchestrator.ReviewedTool{Tool: t})
		}
		return out, []ToolReview{}
	}
	statuses := make(map[string]manifest.ToolStatus)
	for _, s := range m.Statuses() {
		statuses[s.Name] = s
	}
	reviews := []ToolReview{}
	for _, t := range lt.tools {
		s, ok := statuses[t.Name]
		// What the manifest cannot judge (a tool it could not take) is
		// registered as listed: the registry skips what it cannot take
		// either.
		if !ok || s.Current == nil || !s.New && !s.Changed {
			out = append(out, orchestrator.ReviewedTool{Tool: t})
			continue
		}
		shown, offered := manifest.Shown(t, s)
		rv := &orchestrator.Review{Kind: manifest.KindChanged, Rejected: s.Rejected, Hidden: !offered, Hash: s.Hash}
		if s.Changed {
			rv.Change = manifest.Diff(s.Pinned, s.Current)
		} else {
			rv.Kind = manifest.KindNew
			rv.Change = manifest.Diff(nil, s.Current)
		}
		out = append(out, orchestrator.ReviewedTool{Tool: shown, Review: rv})
		reviews = append(reviews, ToolReview{Server: server, Tool: t.Name, Kind: rv.Kind, Rejected: rv.Rejected,
			Hidden: rv.Hidden, Hash: rv.Hash, Change: rv.Change, Diff: rv.Change.Text()})
	}
	// Tool ids are the registry's to assign (a name may need sanitizing):
	// they are read back once the tools are registered (withIDs).
	return out, reviews
}

// sameReviews reports whether two servers' review lists say the same.
func sameReviews(a, b []ToolReview) bool {
	return slices.EqualFunc(a, b, func(x, y ToolReview) bool {
		return x.Tool == y.Tool && x.Kind == y.Kind && x.Rejected == y.Rejected && x.Hidden == y.Hidden && x.Hash == y.Hash
	})
}

// Reviews returns the tools whose definitions await review: of server,
// or of every server when server is "", by server and tool.
func (w *Workspace) Reviews(server string) []ToolReview {
	w.pins.mu.Lock()
	defer w.pins.mu.Unlock()
	out := []ToolReview{}
	for _, name := range slices.Sorted(maps.Keys(w.pins.live)) {
		if server == "" || name == server {
			out = append(out, w.pins.live[name].reviews...)
		}
	}
	return out
}

// withIDs fills in the tool ids of reviews from the registry. Each
// server's tools are read once, not once a review: a server that changed
// every tool has as many reviews as tools.
func (w *Workspace) withIDs(rs []ToolReview) []ToolReview {
	out := make([]ToolReview, len(rs))
	ids := make(map[string]map[string]string) // server → tool name → id
	for i, r := range rs {
		byName, ok := ids[r.Server]
		if !ok {
			byName = make(map[string]string)
			for _, t := range w.reg.Tools(r.Server) {
				if _, dup := byName[t.Name]; !dup {
					byName[t.Name] = t.ID
				}
			}
			ids[r.Server] = byName
		}
		out[i] = r
		out[i].ID = byName[r.Tool]
	}
	return out
}

// AcceptDefinition accepts the definition the server lists for tool (every
// tool of the server under review when tool is ""): it becomes the pin,
// and the tool is registered as listed. hash, if not "", must be the one
// the user was shown (ToolReview.Hash): if the server changed the tool
// again since, nothing is accepted and the error wraps
// manifest.ErrStale. It returns the server's reviews left.
func (w *Workspace) AcceptDefinition(ctx context.Context, server, tool, hash string) ([]ToolReview, error) {
	return w.reviewAction(ctx, server, tool, func(m *manifest.Manifest) error { return m.Accept(tool, hash) })
}

// RejectDefinition rejects the definition the server lists for tool
// (every tool under review when tool is ""): the pin stays, and calls of
// that very definition are denied without asking until the server lists
// another one or the user accepts it. hash as in AcceptDefinition.
func (w *Workspace) RejectDefinition(ctx context.Context, server, tool, hash string) ([]ToolReview, error) {
	return w.reviewAction(ctx, server, tool, func(m *manifest.Manifest) error { return m.Reject(tool, hash) })
}

// reviewAction applies act to server's manifest and registers the server's
// tools anew.
func (w *Workspace) reviewAction(ctx context.Context, server, tool string, act func(*manifest.Manifest) error) ([]ToolReview, error) {
	p := w.pins
	p.mu.Lock()
	lt := p.live[server]
	if lt == nil {
		p.mu.Unlock()
		if !w.HasServer(server) {
			return nil, fmt.Errorf("%w: %q", mcp.ErrNoServer, server)
		}
		return nil, fmt.Errorf("%w: server %q has no tools registered", ErrNoReview, server)
	}
	if lt.entry.PinningOff {
		p.mu.Unlock()
		return nil, fmt.Errorf("%w: server %q has pinning off", ErrNoReview, server)
	}
	m, err := p.store.Update(ctx, w.entryKey(lt.entry), func(m *manifest.Manifest, corrupt error) error {
		if corrupt != nil || !m.Pinned {
			return fmt.Errorf("%w: server %q has no manifest", ErrNoReview, server)
		}
		return act(m)
	})
	if err != nil {
		p.mu.Unlock()
		return nil, fmt.Errorf("reviewing %s of server %q: %w", orAll(tool), server, err)
	}
	next := *lt
	next.reason = "reviewed"
	w.registerLocked(server, &next, m)
	reviews := next.reviews
	p.mu.Unlock()
	return reviews, nil
}

func orAll(tool string) string {
	if tool == "" {
		return "every tool"
	}
	return fmt.Sprintf("tool %q", tool)
}

// definitionReviewer is the workspace as the orchestrator's
// DefinitionReviewer.
type definitionReviewer struct{ w *Workspace }

var _ orchestrator.DefinitionReviewer = definitionReviewer{}

// CurrentReview reads t's server's manifest again: a review done in
// another process (the CLI, another sidecar) since the tools were
// registered counts at once. If the reviews changed, the server's tools
// are registered anew.
func (r definitionReviewer) CurrentReview(_ context.Context, t *orchestrator.Tool) *orchestrator.Review {
	w := r.w
	p := w.pins
	p.mu.Lock()
	defer p.mu.Unlock()
	lt := p.live[t.Server]
	if lt == nil || lt.entry.PinningOff {
		return t.Review
	}
	if !w.recheckLocked(t.Server, lt) {
		return t.Review // nothing on disk to go by: the review stands
	}
	for _, tr := range lt.reviews {
		if tr.Tool == t.Name {
			return &orchestrator.Review{Kind: tr.Kind, Rejected: tr.Rejected, Hidden: tr.Hidden, Hash: tr.Hash, Change: tr.Change}
		}
	}
	return nil
}

// recheckLocked judges server's live tools again against the pins of its
// manifest on disk, and registers them anew if their reviews changed. It
// reports whether there was a manifest to judge by. The caller holds
// pins.mu.
func (w *Workspace) recheckLocked(server string, lt *liveTools) bool {
	m, err := w.pins.store.Load(w.entryKey(lt.entry))
	if err != nil {
		return false
	}
	// The manifest on disk may be of an older list than the live one
	// (this process could not write it): judge the live list by its pins.
	if err := m.Observe(lt.tools, true); err != nil {
		w.logger.Warn("pinning a server's tools", "server", server, "error", err)
	}
	if _, reviews := w.review(server, lt, m); !sameReviews(lt.reviews, reviews) {
		lt.reason = "reviewed"
		w.registerLocked(server, lt, m)
	}
	return true
}

// AcceptDefinition accepts t's definition of hash, as the user did in
// answer to a permission prompt.
func (r definitionReviewer) AcceptDefinition(ctx context.Context, t *orchestrator.Tool, hash string) error {
	_, err := r.w.AcceptDefinition(ctx, t.Server, t.Name, hash)
	return err
}
