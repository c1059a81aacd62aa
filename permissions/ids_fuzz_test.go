package permissions

import (
	"slices"
	"strings"
	"testing"

	"github.com/freecode/freecode/internal/toolid"
)

// FuzzToolIDs: whatever names a server gives its tools, the ids the
// registry makes of them (toolid.ToolParts) are covered by the server's
// rule and by no other server's, and a rule naming one id or one alias
// covers no other tool, so no tool name can slip under or out of a rule
// written for another.
func FuzzToolIDs(f *testing.F) {
	f.Add("read__all", "read_all", "_x_")
	f.Add("get.item", "get_item", "get item")
	f.Add("délete", "d_lete", "DELETE")
	f.Add("a*b", "a__", "__")
	f.Add(strings.Repeat("x", 90), "mcp__s__x", "")
	f.Add(strings.Repeat("x", 90), strings.Repeat("x", 91), strings.Repeat("x", 50)+"_"+strings.Repeat("x", 40))
	f.Fuzz(func(t *testing.T, a, b, c string) {
		// One server's tool names: distinct and not empty.
		names := slices.DeleteFunc(slices.Compact(slices.Sorted(slices.Values([]string{a, b, c}))), func(n string) bool { return n == "" })
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
		// A rule naming a tool's alias covers that tool and no other.
		aliases := toolid.Aliases(ids)
		for id, alias := range aliases {
			for _, e := range []Effect{Allow, Deny} {
				x := buildIndex([]Rule{{Pattern: alias, Effect: e, Source: SourceUser}}, "")
				for _, other := range ids {
					if got := x.decide(other, aliases[other]) == 0; got != (other == id) {
						t.Fatalf("%s rule %q (alias of %q) covers %q: %v", e, alias, id, other, got)
					}
				}
			}
		}
	})
}
