// Package orchestrator runs the tool calls a model asks for: a registry of
// built-in and MCP tools under stable ids, argument validation, the
// permission gate, batching (read-only calls together, everything else
// alone), timeouts, retries and result capping.
package orchestrator

import (
	"bytes"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/freecode/freecode/internal/toolid"
)

// ToolsChanged is published whenever the registry's tool set changes.
type ToolsChanged struct {
	Server string // "" for built-ins
	Reason string // "added", "updated", "removed", or the MCP client's reason
}

// RegistryOptions configures a Registry. A nil *RegistryOptions means defaults.
type RegistryOptions struct {
	Logger *slog.Logger
}

// Registry holds every tool by id. It is safe for concurrent use; events are
// delivered synchronously, outside the registry's lock, in the order the
// changes happened.
type Registry struct {
	logger *slog.Logger

	// eventMu serializes changes with their events, so subscribers see
	// events in the order of the changes they report.
	eventMu sync.Mutex

	mu       sync.RWMutex
	tools    map[string]*Tool            // by id
	aliases  map[string]string           // alias → id
	byServer map[string]map[string]*Tool // server → id → tool; "" holds built-ins
	subs     map[int]func(ToolsChanged)
	nextSub  int
}

// NewRegistry returns an empty registry.
func NewRegistry(opts *RegistryOptions) *Registry {
	r := &Registry{
		logger:   slog.New(slog.DiscardHandler),
		tools:    map[string]*Tool{},
		aliases:  map[string]string{},
		byServer: map[string]map[string]*Tool{},
		subs:     map[int]func(ToolsChanged){},
	}
	if opts != nil && opts.Logger != nil {
		r.logger = opts.Logger
	}
	return r
}

// Subscribe calls fn on every change of the tool set until the returned
// function is called. fn runs synchronously on the goroutine that made the
// change; it may read the registry but must not change it (that would
// deadlock), and should hand slow work to its own goroutine.
func (r *Registry) Subscribe(fn func(ToolsChanged)) (cancel func()) {
	r.mu.Lock()
	id := r.nextSub
	r.nextSub++
	r.subs[id] = fn
	r.mu.Unlock()
	return func() {
		r.mu.Lock()
		delete(r.subs, id)
		r.mu.Unlock()
	}
}

func (r *Registry) publish(ev ToolsChanged) {
	r.mu.RLock()
	ids := slices.Sorted(maps.Keys(r.subs))
	fns := make([]func(ToolsChanged), 0, len(ids))
	for _, id := range ids {
		fns = append(fns, r.subs[id])
	}
	r.mu.RUnlock()
	for _, fn := range fns {
		fn(ev)
	}
}

// RegisterBuiltin adds a built-in tool under its bare name (t.ID: no "__",
// so never "mcp__…", and not "mcp", which as a rule means every MCP tool and
// so could name no built-in). Built-ins are listed before MCP tools, by
// Order.
func (r *Registry) RegisterBuiltin(t *Tool) error {
	if err := toolid.CheckBuiltin(t.ID); err != nil {
		return fmt.Errorf("registering built-in %w", err)
	}
	if t.Runner == nil {
		return fmt.Errorf("registering built-in %q: no runner", t.ID)
	}
	if t.Name == "" {
		t.Name = t.ID
	}
	if len(t.InputSchema) == 0 {
		t.InputSchema = emptyObjectSchema
	}
	t.Server = ""
	t.Builtin = true
	r.eventMu.Lock()
	defer r.eventMu.Unlock()
	r.mu.Lock()
	if _, dup := r.tools[t.ID]; dup {
		r.mu.Unlock()
		return fmt.Errorf("registering built-in %q: already registered", t.ID)
	}
	r.tools[t.ID] = t
	if r.byServer[""] == nil {
		r.byServer[""] = map[string]*Tool{}
	}
	r.byServer[""][t.ID] = t
	r.mu.Unlock()
	r.publish(ToolsChanged{Reason: "added"})
	return nil
}

// SetServerTools replaces the tools of server with tools, all run by run.
// It publishes ToolsChanged only if what the tools look like changed (a
// reconnect with the same tools swaps the runner silently, so the provider
// definitions, and the prompt cache, stay put).
func (r *Registry) SetServerTools(server string, tools []*mcpsdk.Tool, run Runner) {
	r.setServerTools(server, tools, run, "", nil)
}

// setServerTools registers tools, each with its review from reviews (by
// tool name), if any.
func (r *Registry) setServerTools(server string, tools []*mcpsdk.Tool, run Runner, reason string, reviews map[string]*Review) {
	names := make([]string, 0, len(tools))
	seen := make(map[string]bool, len(tools))
	for _, t := range tools {
		if t == nil || t.Name == "" || seen[t.Name] {
			r.logger.Warn("skipping MCP tool with an empty or repeated name", "server", server)
			continue
		}
		seen[t.Name] = true
		names = append(names, t.Name)
	}
	parts := toolid.ToolParts(names)
	next := make(map[string]*Tool, len(names))
	for _, st := range tools {
		if st == nil || parts[st.Name] == "" {
			continue
		}
		id := toolid.Format(server, parts[st.Name])
		if _, dup := next[id]; dup {
			continue // a repeated name, skipped above
		}
		t, err := newMCPTool(server, id, st, run)
		if err != nil {
			r.logger.Warn("skipping MCP tool whose input schema does not encode", "server", server, "tool", st.Name, "err", err)
			continue
		}
		t.Review = reviews[st.Name]
		next[id] = t
	}
	for id, alias := range toolid.Aliases(slices.Collect(maps.Keys(next))) {
		next[id].alias = alias
	}

	r.eventMu.Lock()
	defer r.eventMu.Unlock()
	r.mu.Lock()
	prev, existed := r.byServer[server]
	changed := !existed || !sameTools(prev, next)
	for id, t := range prev {
		delete(r.tools, id)
		if t.alias != "" {
			delete(r.aliases, t.alias)
		}
	}
	for id, t := range next {
		if old, ok := r.tools[id]; ok && old.Server != server {
			// Cannot happen with valid server names (no "__"); keep the first.
			r.logger.Warn("tool id already taken", "id", id, "server", server)
			continue
		}
		r.tools[id] = t
		if t.alias != "" {
			r.aliases[t.alias] = id
		}
	}
	r.byServer[server] = next
	r.mu.Unlock()
	if !changed {
		return
	}
	if reason == "" {
		reason = "updated"
		if !existed {
			reason = "added"
		}
	}
	r.publish(ToolsChanged{Server: server, Reason: reason})
}

// sameTools reports whether two tool sets look the same to a model, to
// the permission gate and to the clients of FreeCode's own MCP server.
func sameTools(a, b map[string]*Tool) bool {
	if len(a) != len(b) {
		return false
	}
	for id, x := range a {
		if y, ok := b[id]; !ok || !sameTool(x, y) {
			return false
		}
	}
	return true
}

// sameTool reports whether two registrations of a tool look the same to a
// model, to the permission gate and to the clients of FreeCode's own MCP
// server.
func sameTool(x, y *Tool) bool {
	return x.ID == y.ID && x.Name == y.Name && x.Title == y.Title && x.Description == y.Description &&
		x.ReadOnly == y.ReadOnly && x.Destructive == y.Destructive && x.OpenWorld == y.OpenWorld && x.Idempotent == y.Idempotent &&
		bytes.Equal(x.InputSchema, y.InputSchema) && bytes.Equal(x.OutputSchema, y.OutputSchema) &&
		x.Review.equal(y.Review) && sameUI(x.UI, y.UI)
}

// RemoveBuiltin drops the built-in id, if it is registered.
func (r *Registry) RemoveBuiltin(id string) {
	r.eventMu.Lock()
	defer r.eventMu.Unlock()
	r.mu.Lock()
	t, ok := r.byServer[""][id]
	if !ok {
		r.mu.Unlock()
		return
	}
	delete(r.byServer[""], id)
	if r.tools[id] == t {
		delete(r.tools, id)
	}
	r.mu.Unlock()
	r.publish(ToolsChanged{Reason: "removed"})
}

// RemoveServer drops every tool of server, publishing reason ("" means
// "removed"): the MCP client's, such as "failed" or "stopped".
func (r *Registry) RemoveServer(server, reason string) {
	if reason == "" {
		reason = "removed"
	}
	r.eventMu.Lock()
	defer r.eventMu.Unlock()
	r.mu.Lock()
	prev, existed := r.byServer[server]
	if !existed || server == "" {
		r.mu.Unlock()
		return
	}
	for id, t := range prev {
		delete(r.tools, id)
		if t.alias != "" {
			delete(r.aliases, t.alias)
		}
	}
	delete(r.byServer, server)
	r.mu.Unlock()
	r.publish(ToolsChanged{Server: server, Reason: reason})
}

// Lookup finds a tool by id or by alias.
func (r *Registry) Lookup(name string) (*Tool, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if t, ok := r.tools[name]; ok {
		return t, true
	}
	if id, ok := r.aliases[name]; ok {
		t, ok := r.tools[id]
		return t, ok
	}
	return nil, false
}

// Tools returns every tool of server ("" for all, built-ins included) in
// the stable order: built-ins by Order, then MCP tools by server, then id.
func (r *Registry) Tools(server string) []*Tool {
	r.mu.RLock()
	var out []*Tool
	if server == "" {
		out = slices.Collect(maps.Values(r.tools))
	} else {
		out = slices.Collect(maps.Values(r.byServer[server]))
	}
	r.mu.RUnlock()
	slices.SortFunc(out, compareTools)
	return out
}

func compareTools(a, b *Tool) int {
	switch {
	case a.Builtin != b.Builtin:
		if a.Builtin {
			return -1
		}
		return 1
	case a.Builtin && a.Order != b.Order:
		return a.Order - b.Order
	case a.Server != b.Server:
		if a.Server < b.Server {
			return -1
		}
		return 1
	case a.ID < b.ID:
		return -1
	case a.ID > b.ID:
		return 1
	}
	return 0
}

// Infos returns Tools(server) as ToolInfo values.
func (r *Registry) Infos(server string) []ToolInfo {
	tools := r.Tools(server)
	out := make([]ToolInfo, len(tools))
	for i, t := range tools {
		out[i] = t.Info()
	}
	return out
}

// Servers returns the names of the servers that have tools registered.
func (r *Registry) Servers() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	var out []string
	for s := range r.byServer {
		if s != "" {
			out = append(out, s)
		}
	}
	slices.Sort(out)
	return out
}
