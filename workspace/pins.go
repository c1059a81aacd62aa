package workspace

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
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
// were pinned already.
type ToolReview struct {
	Server string
	// Tool is the server's name for the tool; ID is its tool id.
	Tool string
	ID   string
	// Kind is "changed" or "new".
	Kind string
	// Rejected: the user rejected the definition listed; calls are denied.
	Rejected bool
	// Hidden: the tool is kept from models meanwhile (see
	// orchestrator.Review).
	Hidden bool
	// Hash names the listed definition: accepting or rejecting with it
	// fails if the server changed the tool again meanwhile.
	Hash   string
	Change *manifest.Change
	// Diff is Change as lines to read; the server's text, to be escaped
	// before it reaches a terminal.
	Diff string
}

// ErrNoReview means a server's tools cannot be reviewed: it has no
// manifest yet, or its pinning is off.
var ErrNoReview = errors.New("nothing to review")

// pinner pins the tools of every server against its manifest and
// registers them as reviewed: what the Manager reports of a server's
// tools (onTools), a review (act) and a manifest written by another
// process (manifestwatch.go) are what register them; reading a tool's
// review (currentReview) registers nothing.
type pinner struct {
	store   *manifest.Store
	root    string // the workspace's, for the manifest keys
	reg     *orchestrator.Registry
	runner  func(server string) orchestrator.Runner
	publish func(...Event)
	logger  *slog.Logger
	// watchOpts are the manifest watcher's options, but for OnChange.
	watchOpts config.WatchOptions

	// mu serializes a server's registration with the manifest update it
	// comes from, and a review's update with the registration it makes.
	// It guards live.
	mu sync.Mutex
	// live holds, by server, what the server was last registered from.
	// A *liveTools stored here is not changed but for its reviews, under
	// mu: entry and tools may be read without it.
	live map[string]*liveTools

	// adoptMu guards adopted: the earlier keys (config.LegacyManifestKey)
	// already looked for, so each is looked for once per workspace.
	adoptMu sync.Mutex
	adopted map[string]bool

	// watchMu guards the fields below. It is held while the watcher of
	// the manifests is closed, which waits for its report (onManifests,
	// which takes mu): mu is never held while watchMu is taken.
	watchMu sync.Mutex
	watch   manifestWatch
	closed  bool // Close began: watchManifests starts no watcher
}

func newPinner(store *manifest.Store, root string, reg *orchestrator.Registry, runner func(string) orchestrator.Runner,
	publish func(...Event), logger *slog.Logger, watchOpts config.WatchOptions) *pinner {
	return &pinner{store: store, root: root, reg: reg, runner: runner, publish: publish, logger: logger, watchOpts: watchOpts,
		live: make(map[string]*liveTools), adopted: make(map[string]bool)}
}

// Close stops following the manifests. The registrations stay, and what
// the Manager reports while it stops is still registered.
func (p *pinner) Close() {
	p.watchMu.Lock()
	defer p.watchMu.Unlock()
	p.closed = true
	p.closeWatchLocked()
}

// liveTools is a server's last registration: the entry and tools it came
// from and the reviews it was made with.
type liveTools struct {
	entry      config.Server
	tools      []*mcpsdk.Tool
	serverInfo *mcp.ServerInfo
	protoVer   string
	reason     string
	reviews    []ToolReview // guarded by pinner.mu

	// hashes are the entry's and the tools' hashes, for the audit trail
	// (audit.go): computed at the first call of the registration, which
	// gives every liveTools its own.
	hashes *lazyHashes
}

// entryKey returns the manifest key of srv in this workspace (see
// ManifestKey), looking for a manifest under its earlier key once per
// workspace.
func (p *pinner) entryKey(srv config.Server) string {
	legacy := config.LegacyManifestKey(p.root, srv)
	p.adoptMu.Lock()
	defer p.adoptMu.Unlock()
	if p.adopted[legacy] {
		return config.ManifestKey(p.root, srv)
	}
	p.adopted[legacy] = true
	key, err := ManifestKey(context.Background(), p.store, p.root, srv)
	if err != nil {
		p.logger.Warn("carrying a server's manifest over to its new key; its tools are pinned anew", "server", srv.Name, "error", err)
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
func (p *pinner) listing(srv config.Server) *mcp.Listing {
	m, err := p.store.Load(p.entryKey(srv))
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			p.logger.Warn("ignoring a server's manifest", "server", srv.Name, "error", err)
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
func (p *pinner) hasManifest(srv config.Server) (*manifest.Manifest, bool) {
	m, err := p.store.Load(p.entryKey(srv))
	return m, err == nil
}

// onTools is the Manager's OnToolsChanged, from a Conn goroutine (or the
// Manager's, for a server registered from its manifest): the tools are
// compared with their pins, the manifest written, and the tools registered
// as they are to be shown.
func (p *pinner) onTools(ev mcp.ToolsChanged) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if ev.Tools == nil {
		p.reg.RemoveServer(ev.Server, ev.Reason)
		if lt := p.live[ev.Server]; lt != nil {
			delete(p.live, ev.Server)
			if len(lt.reviews) > 0 {
				p.publish(&ReviewEvent{Server: ev.Server, Reviews: []ToolReview{}})
			}
		}
		return
	}
	var m *manifest.Manifest
	if ev.Reason != "manifest" {
		m = p.observe(ev)
	} else if loaded, err := p.store.Load(p.entryKey(ev.Entry)); err == nil {
		m = loaded
	}
	p.registerLocked(ev.Server, &liveTools{entry: ev.Entry, tools: ev.Tools, serverInfo: ev.ServerInfo,
		protoVer: ev.ProtocolVersion, reason: ev.Reason}, m)
}

// applyPinning registers anew the tools of the servers whose pinning was
// turned on or off, as their last list is to be registered now.
func (p *pinner) applyPinning(running []config.Server) {
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
			m = p.observe(mcp.ToolsChanged{Server: s.Name, Tools: lt.tools, Entry: next.entry,
				ServerInfo: lt.serverInfo, ProtocolVersion: lt.protoVer})
		}
		p.registerLocked(s.Name, &next, m)
	}
}

// observe records a server's new list in its manifest, pinning what is
// new, and returns the manifest. When the manifest cannot be written (the
// disk, the bound) the list is compared with the manifest on disk all the
// same, so that a change is never waved through for want of a write.
func (p *pinner) observe(ev mcp.ToolsChanged) *manifest.Manifest {
	key := p.entryKey(ev.Entry)
	pin := !ev.Entry.PinningOff
	m, err := p.store.Update(context.Background(), key, func(m *manifest.Manifest, corrupt error) error {
		if corrupt != nil {
			p.logger.Warn("ignoring a server's manifest; its tools are pinned anew", "server", ev.Server, "error", corrupt)
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
	p.logger.Warn("writing a server's manifest", "server", ev.Server, "error", err)
	m, lerr := p.store.Load(key)
	if lerr != nil {
		m = &manifest.Manifest{Key: key}
	}
	if oerr := m.Observe(ev.Tools, pin); oerr != nil {
		p.logger.Warn("pinning a server's tools", "server", ev.Server, "error", oerr)
	}
	return m
}

// registerLocked registers lt's tools, reviewed against m (nil: no
// manifest, nothing to review), and publishes a *ReviewEvent if the
// server's reviews changed. The caller holds mu.
func (p *pinner) registerLocked(server string, lt *liveTools, m *manifest.Manifest) {
	reviewed, reviews := p.review(server, lt, m)
	prev, had := p.live[server]
	var before []ToolReview
	if had {
		before = prev.reviews
	}
	lt.hashes = new(lazyHashes)
	p.live[server] = lt
	p.reg.SetReviewedTools(server, reviewed, p.runner(server), lt.reason)
	reviews = p.withIDs(reviews)
	lt.reviews = reviews
	if !had && len(reviews) == 0 || had && sameReviews(before, reviews) {
		return
	}
	p.publish(&ReviewEvent{Server: server, Reviews: reviews})
}

// review returns lt's tools as they are to be registered, and the reviews
// among them. It only reads: lt, m and what it returns are its caller's.
func (p *pinner) review(server string, lt *liveTools, m *manifest.Manifest) ([]orchestrator.ReviewedTool, []ToolReview) {
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

// withIDs fills in the tool ids of reviews from the registry. Each
// server's tools are read once, not once a review: a server that changed
// every tool has as many reviews as tools.
func (p *pinner) withIDs(rs []ToolReview) []ToolReview {
	out := make([]ToolReview, len(rs))
	ids := make(map[string]map[string]string) // server → tool name → id
	for i, r := range rs {
		byName, ok := ids[r.Server]
		if !ok {
			byName = make(map[string]string)
			for _, t := range p.reg.Tools(r.Server) {
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
