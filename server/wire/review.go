package wire

import (
	"encoding/json"

	"github.com/freecode/freecode/internal/manifest"
	"github.com/freecode/freecode/internal/protocol"
	"github.com/freecode/freecode/orchestrator"
	"github.com/freecode/freecode/workspace"
)

// ToolReview is a tool awaiting review as freecode/tools/review and
// freecode/tools/reviewNeeded have it.
func ToolReview(r workspace.ToolReview) protocol.ToolReview {
	return protocol.ToolReview{
		Server: r.Server, Tool: r.Tool, ID: r.ID, Kind: protocol.ReviewKind(r.Kind), Rejected: r.Rejected,
		Hidden: r.Hidden, Hash: r.Hash, Diff: r.Diff, Change: DefinitionChange(r.Change),
	}
}

// PermissionReview is the change a permission request shows; nil for a
// request that shows none.
func PermissionReview(r *orchestrator.RequestReview) *protocol.PermissionReview {
	if r == nil {
		return nil
	}
	return &protocol.PermissionReview{Kind: protocol.ReviewKind(r.Kind), Hash: r.Hash, Diff: r.Diff, Change: DefinitionChange(r.Change)}
}

// DefinitionChange is what differs between a tool's accepted definition
// and the one its server lists; an annotation's values are JSON (booleans,
// or a title's strings).
func DefinitionChange(c *manifest.Change) protocol.DefinitionChange {
	if c == nil {
		return protocol.DefinitionChange{}
	}
	out := protocol.DefinitionChange{Tool: c.Tool, Kind: protocol.ReviewKind(c.Kind),
		Title: textChange(c.Title), Description: textChange(c.Description),
		InputSchema: pointerChanges(c.InputSchema), OutputSchema: pointerChanges(c.OutputSchema)}
	for _, h := range c.Annotations {
		old, _ := json.Marshal(h.Old)
		nw, _ := json.Marshal(h.New)
		out.Annotations = append(out.Annotations, protocol.HintChange{Hint: protocol.Hint(h.Hint), Old: old, New: nw})
	}
	return out
}

func textChange(t *manifest.TextChange) *protocol.TextChange {
	if t == nil {
		return nil
	}
	return &protocol.TextChange{Old: t.Old, New: t.New, Diff: t.Diff}
}

func pointerChanges(ps []manifest.PointerChange) []protocol.PointerChange {
	if len(ps) == 0 {
		return nil
	}
	out := make([]protocol.PointerChange, len(ps))
	for i, p := range ps {
		out[i] = protocol.PointerChange{Pointer: p.Pointer, Op: protocol.PointerOp(p.Op), Old: p.Old, New: p.New}
	}
	return out
}
