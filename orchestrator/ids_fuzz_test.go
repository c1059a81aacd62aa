package orchestrator

import (
	"strings"
	"testing"

	"github.com/freecode/freecode/permissions"
)

// FuzzToolIDs: whatever names a server gives its tools, their ids are
// distinct, read one way (mcp__<server>__<part>, part without "__" or an
// edge "_"), are covered by the server's rule, and a rule naming one id
// covers no other tool, so no tool name can slip under or out of a rule
// written for another.
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
		parts := toolParts(names)
		ids := map[string]string{}
		for _, n := range names {
			p := parts[n]
			if p == "" || strings.Contains(p, "__") || strings.HasPrefix(p, "_") || strings.HasSuffix(p, "_") {
				t.Fatalf("part of %q = %q", n, p)
			}
			for _, r := range p {
				if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
					t.Fatalf("part of %q = %q has %q", n, p, r)
				}
			}
			id := MCPToolID("srv", p)
			if other, dup := ids[id]; dup {
				t.Fatalf("%q and %q share id %q", other, n, id)
			}
			ids[id] = n
			if !permissions.MatchAllow("mcp__srv", id) || permissions.Match("mcp__sr", id) || permissions.Match("mcp__srv2", id) {
				t.Fatalf("server rules on %q are wrong", id)
			}
		}
		for id := range ids {
			for other := range ids {
				if other != id && (permissions.Match(id, other) || permissions.MatchAllow(id, other)) {
					t.Fatalf("rule %q covers %q", id, other)
				}
			}
		}
	})
}
