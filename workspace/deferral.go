package workspace

import (
	"github.com/freecode/freecode/config"
	"github.com/freecode/freecode/defscache"
	"github.com/freecode/freecode/orchestrator"
)

// deferral is what decides which tools are deferred: left out of the
// provider definitions, to be found with tool_search. It is immutable;
// apply swaps it.
type deferral struct {
	mcp     config.MCP               // mode and thresholds
	servers map[string]config.Server // the servers run, by name
}

// deferred reports whether t is deferred. Built-ins never are.
func (w *Workspace) deferred(t *orchestrator.Tool) bool {
	if t.Server == "" {
		return false
	}
	d := w.deferPolicy.Load()
	if d == nil {
		return false
	}
	return d.mcp.Deferred(d.servers[t.Server], w.autoDeferOn.Load())
}

// applyDeferral puts the config's deferral in force: tool_search is
// registered while any tool may be deferred, and a change that moves a
// tool in or out of the provider definitions rebuilds them. The caller
// holds reloadMu.
func (w *Workspace) applyDeferral(cfg *config.Config, running []config.Server) {
	next := &deferral{mcp: cfg.MCP, servers: make(map[string]config.Server, len(running))}
	for _, s := range running {
		next.servers[s.Name] = s
	}
	prev := w.deferPolicy.Swap(next)
	if prev == nil && !next.mcp.DefersAny(running) {
		return // the first config defers nothing: nothing to rebuild
	}
	if prev != nil && prev.mcp.DeferTools == next.mcp.DeferTools &&
		prev.mcp.AutoDeferTools == next.mcp.AutoDeferTools && prev.mcp.AutoDeferTokens == next.mcp.AutoDeferTokens &&
		sameDeferTools(prev.servers, next.servers) {
		return
	}
	// New thresholds or mode: auto starts over.
	if prev == nil || prev.mcp.DeferTools != next.mcp.DeferTools ||
		prev.mcp.AutoDeferTools != next.mcp.AutoDeferTools || prev.mcp.AutoDeferTokens != next.mcp.AutoDeferTokens {
		w.autoDeferOn.Store(false)
		w.checkAutoDefer()
	}
	wantSearch := next.mcp.DefersAny(running)
	switch {
	case wantSearch && !w.searchRegistered:
		if err := w.reg.RegisterBuiltin(w.search.Tool()); err != nil {
			w.logger.Error("registering tool_search", "err", err)
		} else {
			w.searchRegistered = true
		}
	case !wantSearch && w.searchRegistered:
		w.reg.RemoveBuiltin(orchestrator.ToolSearchName)
		w.searchRegistered = false
	}
	w.definitionsChanged(orchestrator.ToolsChanged{Reason: "deferTools"})
}

// sameDeferTools reports whether two sets of servers defer alike: the
// same names, each with the same deferTools.
func sameDeferTools(a, b map[string]config.Server) bool {
	if len(a) != len(b) {
		return false
	}
	for name, s := range a {
		o, ok := b[name]
		if !ok || (s.DeferTools == nil) != (o.DeferTools == nil) || s.DeferTools != nil && *s.DeferTools != *o.DeferTools {
			return false
		}
	}
	return true
}

// checkAutoDefer turns the auto mode on once the MCP tools outgrow its
// thresholds: more tools than mcp.autoDeferTools, or more estimated tokens
// than mcp.autoDeferTokens in their names, descriptions and input schemas
// (defscache.EstimateTokens of their bytes, whatever the format). Once on
// it stays on until the mode or a threshold changes: switching back and
// forth as servers come and go would change the provider definitions, and
// lose the prompt cache, each time. It reports whether it turned it on.
func (w *Workspace) checkAutoDefer() bool {
	d := w.deferPolicy.Load()
	if d == nil || d.mcp.DeferTools != config.DeferAuto || w.autoDeferOn.Load() {
		return false
	}
	tools, size := 0, 0
	for _, t := range w.reg.Tools("") {
		if t.Server == "" {
			continue
		}
		tools++
		size += len(t.ID) + len(t.Description) + len(t.InputSchema)
	}
	if tools <= d.mcp.AutoDeferTools && defscache.EstimateTokens(size) <= d.mcp.AutoDeferTokens {
		return false
	}
	w.logger.Info("deferring MCP tools: the workspace outgrew mcp.autoDeferTools or mcp.autoDeferTokens",
		"tools", tools, "estimatedTokens", defscache.EstimateTokens(size),
		"maxTools", d.mcp.AutoDeferTools, "maxTokens", d.mcp.AutoDeferTokens)
	return w.autoDeferOn.CompareAndSwap(false, true)
}
