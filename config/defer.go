package config

import (
	"bytes"
	"encoding/json"
)

// DeferMode is mcp.deferTools: whether the tools of MCP servers are left out
// of the tool definitions sent to model providers, to be found with the
// tool_search built-in instead. A server's own "deferTools" overrides it.
type DeferMode int

// The values of mcp.deferTools.
const (
	// DeferOff (false, the default): every tool is sent, unless its
	// server says "deferTools": true.
	DeferOff DeferMode = iota
	// DeferOn (true): no MCP tool is sent, unless its server says
	// "deferTools": false.
	DeferOn
	// DeferAuto ("auto"): like DeferOn once the workspace holds more than
	// mcp.autoDeferTools tools or their definitions more than
	// mcp.autoDeferTokens tokens, and like DeferOff before.
	DeferAuto
)

// Defaults of the auto mode's thresholds. 60 tools is where tool lists
// start to crowd out the task in practice; 20,000 tokens is a tenth of a
// 200,000-token context window.
const (
	DefaultAutoDeferTools  = 60
	DefaultAutoDeferTokens = 20000
)

// String returns the mode as the file writes it: false, true or auto.
func (m DeferMode) String() string {
	switch m {
	case DeferOn:
		return "true"
	case DeferAuto:
		return "auto"
	}
	return "false"
}

// deferMode decodes mcp.deferTools: true, false or "auto".
func (d *decoder) deferMode(key string, raw json.RawMessage, dst *DeferMode) {
	switch string(bytes.TrimSpace(raw)) {
	case "true":
		*dst = DeferOn
	case "false":
		*dst = DeferOff
	case `"auto"`:
		*dst = DeferAuto
	default:
		d.fail(key, "", `want true, false or "auto"`)
	}
}

// Deferred reports whether the tools of server s are deferred under the
// mcp section's mode, with the auto mode's thresholds reached (autoOn) or
// not.
func (m MCP) Deferred(s Server, autoOn bool) bool {
	if s.DeferTools != nil {
		return *s.DeferTools
	}
	switch m.DeferTools {
	case DeferOn:
		return true
	case DeferAuto:
		return autoOn
	}
	return false
}

// DefersAny reports whether any server's tools can be deferred: the mode
// is not off, or a server says "deferTools": true.
func (m MCP) DefersAny(servers []Server) bool {
	if m.DeferTools != DeferOff {
		return true
	}
	for _, s := range servers {
		if s.DeferTools != nil && *s.DeferTools {
			return true
		}
	}
	return false
}
