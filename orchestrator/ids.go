package orchestrator

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// MaxNameLen is the longest tool name the providers accept; a longer id is
// sent under an alias.
const MaxNameLen = 64

// MCPPrefix starts every MCP tool id: mcp__<server>__<tool>.
const MCPPrefix = "mcp__"

// sanitizeToolName maps an MCP tool name onto [A-Za-z0-9_-]. Runs of
// underscores collapse to one and leading or trailing ones are dropped: the id separator is "__" and permission rules
// match on "__" boundaries, so a tool named "read__all" must not become an id
// that the rule for a tool named "read" covers.
func sanitizeToolName(name string) string {
	var b strings.Builder
	b.Grow(len(name))
	lastUnderscore := false
	for _, r := range name {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_'
		if !ok {
			r = '_'
		}
		if r == '_' {
			if lastUnderscore {
				continue
			}
			lastUnderscore = true
		} else {
			lastUnderscore = false
		}
		b.WriteRune(r)
	}
	// Leading or trailing underscores would glue onto the "__" separator.
	if out := strings.Trim(b.String(), "_"); out != "" {
		return out
	}
	return "tool"
}

func hashHex(s string, n int) string {
	sum := sha256.Sum256([]byte(s))
	h := hex.EncodeToString(sum[:])
	return h[:min(n, len(h))]
}

// toolParts returns, for every tool name of one server, the tool part of its
// id. The result depends only on the set of names, never on their order:
// a name that sanitizes to itself keeps it, and every other name whose
// sanitized form is taken by another name gets "_" and a hash of its original
// name appended (longer hashes only in the astronomically unlikely case that
// the suffixed form is taken too).
func toolParts(names []string) map[string]string {
	bySan := make(map[string][]string, len(names))
	for _, n := range names {
		s := sanitizeToolName(n)
		bySan[s] = append(bySan[s], n)
	}
	out := make(map[string]string, len(names))
	taken := make(map[string]bool, len(names))
	for s, group := range bySan {
		if len(group) == 1 {
			out[group[0]] = s
			taken[s] = true
			continue
		}
		for _, n := range group {
			if n == s { // the unchanged name keeps its plain form
				out[n] = s
				taken[s] = true
			}
		}
	}
	for s, group := range bySan {
		if len(group) == 1 {
			continue
		}
		for _, n := range group {
			if n == s {
				continue
			}
			// Suffix lengths grow only on a clash, so the id of a name is
			// stable across list orders unless hashes collide.
			for l := 6; ; l += 2 {
				id := strings.TrimSuffix(s, "_") + "_" + hashHex(n, l)
				if !taken[id] || l >= 64 {
					out[n] = id
					taken[id] = true
					break
				}
			}
		}
	}
	return out
}

// MCPToolID returns the id of a tool of server whose sanitized, de-collided
// tool part is part.
func MCPToolID(server, part string) string {
	return MCPPrefix + server + "__" + part
}

// aliasFor returns the provider-facing alias of an id longer than
// MaxNameLen: its first 55 characters (without trailing underscores), "_",
// and 8 hex characters of its hash: at most 64 characters. Shorter ids have no alias ("").
func aliasFor(id string) string {
	return aliasVariant(id, 0)
}

// aliasVariant is aliasFor with another hash when k > 0: the k-th
// alternative, for an alias that is taken by a tool's id.
func aliasVariant(id string, k int) string {
	if len(id) <= MaxNameLen {
		return ""
	}
	h := id
	if k > 0 {
		h = fmt.Sprintf("%s#%d", id, k)
	}
	return strings.TrimRight(id[:MaxNameLen-9], "_") + "_" + hashHex(h, 8)
}

// assignAliases gives every tool of one server whose id is too long an
// alias that is no tool's id and no other tool's alias. Without this, a
// server could name a tool exactly like another tool's alias: the provider
// would see one name twice (and reject the whole tools array), and a call
// by that name would reach only one of them. The result depends only on the
// set of ids: aliases are handed out in id order, and an alias moves to an
// alternative hash only when a collision forces it.
func assignAliases(tools map[string]*Tool) {
	ids := slices.Sorted(maps.Keys(tools))
	used := make(map[string]bool, len(ids))
	for _, id := range ids {
		used[id] = true
	}
	for _, id := range ids {
		t := tools[id]
		t.alias = ""
		if len(id) <= MaxNameLen {
			continue
		}
		for k := 0; ; k++ {
			if a := aliasVariant(id, k); !used[a] || k >= 1000 {
				t.alias = a
				used[a] = true
				break
			}
		}
	}
}
