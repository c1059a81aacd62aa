package orchestrator

import (
	"fmt"
	"slices"
)

// The MCP Apps extension (SEP-1865, "io.modelcontextprotocol/ui"): a server
// may ship HTML views (ui:// resources) that a host renders beside a tool's
// result, and may say of each tool who it is for. What binds every host,
// whether it renders apps or not, is the audience: a tool whose
// visibility lacks "model" is for its server's app alone, and no model
// may be offered it or call it; a tool whose visibility lacks "app" is
// not the app's to call.

// The audiences of a tool's _meta.ui.visibility.
const (
	AudienceModel = "model"
	AudienceApp   = "app"
)

// ToolUI is what a tool declares of the MCP Apps extension in its _meta.
// A nil *ToolUI is a tool that declares nothing: for both audiences, with
// no view.
type ToolUI struct {
	// ResourceURI is the ui:// resource that renders the tool's results:
	// _meta.ui.resourceUri, else the older flat _meta["ui/resourceUri"].
	ResourceURI string
	// Visibility is _meta.ui.visibility as the server listed it, unknown
	// values left out; nil when the server listed none, which means both
	// audiences.
	Visibility []string
}

// ForModel reports whether a model may be offered the tool and call it.
func (u *ToolUI) ForModel() bool {
	return u == nil || u.Visibility == nil || slices.Contains(u.Visibility, AudienceModel)
}

// ForApp reports whether its server's app may call the tool.
func (u *ToolUI) ForApp() bool {
	return u == nil || u.Visibility == nil || slices.Contains(u.Visibility, AudienceApp)
}

// toolUIOf reads a tools/list entry's _meta. A visibility that is not a
// list is as good as none (both audiences, as the extension's default),
// but a list, even an empty one or one of unknown words only, is taken at
// its word: what it does not name is left out.
func toolUIOf(meta map[string]any) *ToolUI {
	if meta == nil {
		return nil
	}
	var u ToolUI
	declared := false
	if ui, ok := meta["ui"].(map[string]any); ok {
		if s, ok := ui["resourceUri"].(string); ok && s != "" {
			u.ResourceURI, declared = s, true
		}
		if list, ok := ui["visibility"].([]any); ok {
			u.Visibility, declared = []string{}, true
			for _, v := range list {
				if s, ok := v.(string); ok && (s == AudienceModel || s == AudienceApp) && !slices.Contains(u.Visibility, s) {
					u.Visibility = append(u.Visibility, s)
				}
			}
		}
	}
	if u.ResourceURI == "" {
		if s, ok := meta["ui/resourceUri"].(string); ok && s != "" {
			u.ResourceURI, declared = s, true
		}
	}
	if !declared {
		return nil
	}
	return &u
}

// sameUI reports whether two tools declare the same of the extension.
func sameUI(a, b *ToolUI) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.ResourceURI == b.ResourceURI && (a.Visibility == nil) == (b.Visibility == nil) && slices.Equal(a.Visibility, b.Visibility)
}

// offeredToModels reports whether a model is shown the tool: in the
// provider definitions, tool_search's results and the list of FreeCode's
// MCP server. A tool awaiting review that its accepted definition cannot
// stand for is not, nor one that is for its server's app alone.
func (t *Tool) offeredToModels() bool { return !t.Hidden() && t.UI.ForModel() }

// audienceRefusal returns why call may not call t, or "": a model (a call
// with no App) may call only what is for models, and an app only the tools
// of its own server that are for apps.
func audienceRefusal(c ToolCall, t *Tool) string {
	if c.App == "" {
		if !t.UI.ForModel() {
			return fmt.Sprintf("%s is for the app of server %q only (its _meta.ui.visibility lacks %q): it is not offered to models and a model cannot call it; the tool was not called", t.ID, t.Server, AudienceModel)
		}
		return ""
	}
	if t.Server != c.App {
		return fmt.Sprintf("the app of server %q cannot call %s: an app calls only its own server's tools; the tool was not called", c.App, t.ID)
	}
	if !t.UI.ForApp() {
		return fmt.Sprintf("the app of server %q cannot call %s: its _meta.ui.visibility lacks %q; the tool was not called", c.App, t.ID, AudienceApp)
	}
	return ""
}
