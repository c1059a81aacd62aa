package toolid

import (
	"slices"
	"strings"
	"testing"
)

// FuzzToolIDs: whatever names a server gives its tools, their ids are
// distinct and read one way (mcp__<server>__<part>, part without "__" or
// an edge "_"), and every alias is short enough, is no tool's id and names
// the right server.
func FuzzToolIDs(f *testing.F) {
	f.Add("srv", "read__all", "read_all", "_x_")
	f.Add("srv", "get.item", "get_item", "get item")
	f.Add("srv", "délete", "d_lete", "DELETE")
	f.Add("srv", "a*b", "a__", "__")
	f.Add("srv", strings.Repeat("x", 90), "mcp__s__x", "")
	f.Add(strings.Repeat("s", 48), strings.Repeat("x", 20), "y", "z")
	f.Add(strings.Repeat("s", 47), strings.Repeat("x", 20), "y", "z")
	f.Fuzz(func(t *testing.T, server, a, b, c string) {
		if CheckServer(server) != nil {
			return
		}
		// One server's tool names: distinct and not empty.
		names := slices.DeleteFunc(slices.Compact(slices.Sorted(slices.Values([]string{a, b, c}))), func(n string) bool { return n == "" })
		parts := ToolParts(names)
		ids := map[string]string{}
		var idList []string
		for _, n := range names {
			p := parts[n]
			if p == "" || strings.Contains(p, Sep) || strings.HasPrefix(p, "_") || strings.HasSuffix(p, "_") || !onlyNameChars(p) {
				t.Fatalf("part of %q = %q", n, p)
			}
			id := Format(server, p)
			if other, dup := ids[id]; dup {
				t.Fatalf("%q and %q share id %q", other, n, id)
			}
			ids[id] = n
			idList = append(idList, id)
			if rs, k := Readings(id); k != 1 || rs[0].Server != server || rs[0].Tool != p {
				t.Fatalf("Readings(%q) = %v", id, rs[:k])
			}
			if s, ok := ServerOf(id); !ok || s != server {
				t.Fatalf("ServerOf(%q) = %q, %v", id, s, ok)
			}
		}
		for id, alias := range Aliases(idList) {
			if len(alias) > MaxNameLen || CheckProviderName(alias) != nil || !LooksLikeAlias(alias) {
				t.Fatalf("alias of %q = %q", id, alias)
			}
			if _, taken := ids[alias]; taken {
				t.Fatalf("alias of %q is the id of %q", id, ids[alias])
			}
			if s, ok := ServerOf(alias); !ok || s != server {
				t.Fatalf("ServerOf(alias %q) = %q, %v; want %q", alias, s, ok, server)
			}
		}
	})
}
