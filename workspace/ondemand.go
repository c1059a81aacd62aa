package workspace

import (
	"encoding/json"
	"slices"

	"github.com/freecode/freecode/config"
	"github.com/freecode/freecode/defscache"
	"github.com/freecode/freecode/orchestrator"
)

// startModes returns the servers to run as the Manager is to run them:
// each with its idle timeout (its own, else mcp.idleTimeout), and started
// on demand if it says so, or if mcp.deferTools is "auto", its tools are
// deferred, and it has a manifest to be registered from. Whether auto
// defers is judged on the manifests too, since at start no tool is
// registered yet to judge by.
func (w *Workspace) startModes(cfg *config.Config, servers []config.Server) []config.Server {
	out := make([]config.Server, len(servers))
	var candidates []int // servers auto may run on demand
	tools, size := 0, 0
	for i, s := range servers {
		s.IdleTimeout = cfg.MCP.IdleTimeoutOf(s)
		out[i] = s
		if cfg.MCP.DeferTools != config.DeferAuto || s.OnDemand() || s.DeferTools != nil && !*s.DeferTools {
			continue
		}
		m, ok := w.pins.hasManifest(s)
		if !ok {
			continue
		}
		candidates = append(candidates, i)
		for _, t := range m.Tools {
			tools++
			size += len(t.Name) + len(t.Description) + len(rawOf(t.InputSchema))
		}
	}
	if len(candidates) == 0 {
		return out
	}
	// The registry's MCP tools of servers that are not candidates count
	// as well: they are what auto judges by once running.
	for _, t := range w.reg.Tools("") {
		if t.Server != "" && !slices.ContainsFunc(candidates, func(i int) bool { return servers[i].Name == t.Server }) {
			tools++
			size += len(t.ID) + len(t.Description) + len(t.InputSchema)
		}
	}
	autoOn := w.autoDeferOn.Load() || tools > cfg.MCP.AutoDeferTools || defscache.EstimateTokens(size) > cfg.MCP.AutoDeferTokens
	for _, i := range candidates {
		if cfg.MCP.Deferred(out[i], autoOn) {
			out[i].Start = config.StartOnDemand
		}
	}
	return out
}

// rawOf returns a schema as a Conn or a manifest holds it: JSON bytes.
func rawOf(v any) json.RawMessage {
	b, _ := v.(json.RawMessage)
	return b
}

// warm is tool_search's OnFound: the idle servers on demand of the tools
// found start in the background, for the call likely to follow.
func (w *Workspace) warm(found []*orchestrator.Tool) {
	var done []string
	for _, t := range found {
		if t.Server == "" || slices.Contains(done, t.Server) {
			continue
		}
		done = append(done, t.Server)
		w.mgr.Warm(t.Server)
	}
}
