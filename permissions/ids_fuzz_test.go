package permissions

import (
	"strings"
	"testing"

	"github.com/freecode/freecode/internal/toolid"
)

// FuzzToolIDs: whatever names a server gives its tools, the ids the
// registry makes of them (toolid.ToolParts) are covered by the server's
// rule and by no other server's, and a rule naming one id covers no other
// tool, so no tool name can slip under or out of a rule written for
// another.
func FuzzToolIDs(f *testing.F) {
	f.Add("read__all", "read_all", "_x_")
	f.Add("get.item", "get_item", "get item")
	f.Add("délete", "d_lete", "DELETE")
	f.Add("a*b", "a__", "__")
	f.Add(strings.Repeat("x", 90), "mcp__s__x", "")
	f.Fuzz(func(t *testing.T, a, b, c string) {
		names := []string{}
		seen := map[string]bool{}
		for _, n := range []string{a, b, c} {
			if n != "" && !seen[n] {
				seen[n] = true
				names = append(names, n)
			}
		}
		parts := toolid.ToolParts(names)
		var ids []string
		for _, n := range names {
			id := toolid.Format("srv", parts[n])
			ids = append(ids, id)
			if !matchAllow("mcp__srv", id) || match("mcp__sr", id) || match("mcp__srv2", id) {
				t.Fatalf("server rules on %q are wrong", id)
			}
		}
		for _, id := range ids {
			for _, other := range ids {
				if other != id && (match(id, other) || matchAllow(id, other)) {
					t.Fatalf("rule %q covers %q", id, other)
				}
			}
		}
	})
}
