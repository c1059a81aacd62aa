package workspace

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/freecode/freecode/internal/audit"
	"github.com/freecode/freecode/internal/manifest"
	"github.com/freecode/freecode/mcp"
	"github.com/freecode/freecode/orchestrator"
)

// Reviews of tool definitions: read (Reviews, and the permission gate's
// currentReview) and made (AcceptDefinition, RejectDefinition, an answer
// to a permission prompt). Making one writes the server's manifest and
// registers the server's tools anew; reading one writes and registers
// nothing.
//
// A review made in another process (`freecode mcp review`, another
// sidecar on the same config) is in the server's manifest on disk. It
// counts at once in the gate, since currentReview judges the tools by the
// manifest as it is on disk, not as it was when they were registered; it
// reaches the registration (the tools' marks, the provider definitions)
// through the watcher of the manifests (manifestwatch.go), which
// registers the server's tools anew as soon as the file changes.

// errNotLive means a server has no tools registered to review.
var errNotLive = errors.New("no tools registered")

// Reviews returns the tools whose definitions await review: of server,
// or of every server when server is "", by server and tool.
func (w *Workspace) Reviews(server string) []ToolReview {
	return w.pins.reviews(server)
}

func (p *pinner) reviews(server string) []ToolReview {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := []ToolReview{}
	for _, name := range slices.Sorted(maps.Keys(p.live)) {
		if server == "" || name == server {
			out = append(out, p.live[name].reviews...)
		}
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
	rs, err := w.reviewAction(ctx, server, tool, func(m *manifest.Manifest) error { return m.Accept(tool, hash) })
	if err == nil {
		w.trail.record(audit.Event{Kind: audit.KindReview, Server: server, Tool: tool, DefinitionHash: hash, By: "freecode", Detail: "accepted the definition of " + orAll(tool)})
	}
	return rs, err
}

// RejectDefinition rejects the definition the server lists for tool
// (every tool under review when tool is ""): the pin stays, and calls of
// that very definition are denied without asking until the server lists
// another one or the user accepts it. hash as in AcceptDefinition.
func (w *Workspace) RejectDefinition(ctx context.Context, server, tool, hash string) ([]ToolReview, error) {
	rs, err := w.reviewAction(ctx, server, tool, func(m *manifest.Manifest) error { return m.Reject(tool, hash) })
	if err == nil {
		w.trail.record(audit.Event{Kind: audit.KindReview, Server: server, Tool: tool, DefinitionHash: hash, By: "freecode", Detail: "rejected the definition of " + orAll(tool)})
	}
	return rs, err
}

// reviewAction applies act to server's manifest and registers the server's
// tools anew.
func (w *Workspace) reviewAction(ctx context.Context, server, tool string, act func(*manifest.Manifest) error) ([]ToolReview, error) {
	reviews, err := w.pins.act(ctx, server, tool, act)
	if errors.Is(err, errNotLive) {
		if !w.HasServer(server) {
			return nil, fmt.Errorf("%w: %q", mcp.ErrNoServer, server)
		}
		return nil, fmt.Errorf("%w: server %q has no tools registered", ErrNoReview, server)
	}
	return reviews, err
}

// act applies act to server's manifest and registers the server's tools
// anew, returning its reviews left; errNotLive if it has no tools
// registered.
func (p *pinner) act(ctx context.Context, server, tool string, act func(*manifest.Manifest) error) ([]ToolReview, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	lt := p.live[server]
	if lt == nil {
		return nil, errNotLive
	}
	if lt.entry.PinningOff {
		return nil, fmt.Errorf("%w: server %q has pinning off", ErrNoReview, server)
	}
	m, err := p.store.Update(ctx, p.entryKey(lt.entry), func(m *manifest.Manifest, corrupt error) error {
		if corrupt != nil || !m.Pinned {
			return fmt.Errorf("%w: server %q has no manifest", ErrNoReview, server)
		}
		return act(m)
	})
	if err != nil {
		return nil, fmt.Errorf("reviewing %s of server %q: %w", orAll(tool), server, err)
	}
	next := *lt
	next.reason = "reviewed"
	p.registerLocked(server, &next, m)
	return next.reviews, nil
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

// CurrentReview returns t's review as the server's manifest on disk has
// it now: a review done in another process (the CLI, another sidecar)
// since the tools were registered counts at once. It is a read, made by
// the permission gate at every call of a tool under review: it registers
// nothing (the watcher of the manifests does, see the top of this file).
func (r definitionReviewer) CurrentReview(_ context.Context, t *orchestrator.Tool) *orchestrator.Review {
	return r.w.pins.currentReview(t)
}

// AcceptDefinition accepts t's definition of hash, as the user did in
// answer to a permission prompt.
func (r definitionReviewer) AcceptDefinition(ctx context.Context, t *orchestrator.Tool, hash string) error {
	_, err := r.w.AcceptDefinition(ctx, t.Server, t.Name, hash)
	return err
}

// currentReview judges t's server's live tools by the manifest on disk
// and returns t's review; t's own when there is no manifest to go by, or
// the server's pinning is off.
func (p *pinner) currentReview(t *orchestrator.Tool) *orchestrator.Review {
	p.mu.Lock()
	lt := p.live[t.Server]
	p.mu.Unlock()
	if lt == nil || lt.entry.PinningOff {
		return t.Review
	}
	_, reviews, ok := p.judge(t.Server, lt)
	if !ok {
		return t.Review // nothing on disk to go by: the review stands
	}
	for _, tr := range reviews {
		if tr.Tool == t.Name {
			return &orchestrator.Review{Kind: tr.Kind, Rejected: tr.Rejected, Hidden: tr.Hidden, Hash: tr.Hash, Change: tr.Change}
		}
	}
	return nil
}

// judge judges server's live tools lt by the pins of its manifest on
// disk: the manifest, and the reviews that follow. ok is false when there
// is no manifest to judge by. It reads lt's entry and tools only, which
// do not change, so it needs no lock.
func (p *pinner) judge(server string, lt *liveTools) (m *manifest.Manifest, reviews []ToolReview, ok bool) {
	m, err := p.store.Load(p.entryKey(lt.entry))
	if err != nil {
		return nil, nil, false
	}
	// The manifest on disk may be of an older list than the live one
	// (this process could not write it): judge the live list by its pins.
	if err := m.Observe(lt.tools, true); err != nil {
		p.logger.Warn("pinning a server's tools", "server", server, "error", err)
	}
	_, reviews = p.review(server, lt, m)
	return m, reviews, true
}

// recheckLocked judges server's live tools again against the pins of its
// manifest on disk, and registers them anew if their reviews changed. The
// caller holds mu.
func (p *pinner) recheckLocked(server string, lt *liveTools) {
	m, reviews, ok := p.judge(server, lt)
	if !ok || sameReviews(lt.reviews, reviews) {
		return
	}
	next := *lt
	next.reason = "reviewed"
	p.registerLocked(server, &next, m)
}
