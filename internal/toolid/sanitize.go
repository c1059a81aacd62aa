package toolid

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// SanitizeTool maps an MCP tool name onto [A-Za-z0-9_-]. Runs of
// underscores collapse to one and leading or trailing ones are dropped: the
// id separator is "__" and permission rules match on "__" boundaries, so a
// tool named "read__all" must not become an id that the rule for a tool
// named "read" covers. A name with nothing left becomes "tool".
func SanitizeTool(name string) string {
	var b strings.Builder
	b.Grow(len(name))
	lastUnderscore := false
	for _, r := range name {
		if r >= 0x80 || !IsNameChar(byte(r)) {
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

// hashHex returns the first n hex characters of the SHA-256 of s.
func hashHex(s string, n int) string {
	sum := sha256.Sum256([]byte(s))
	h := hex.EncodeToString(sum[:])
	return h[:min(n, len(h))]
}

// ToolParts returns, for every tool name of one server, the tool part of
// its id. The result depends only on the set of names, never on their
// order: a name that sanitizes to itself keeps it, and every other name
// whose sanitized form is taken by another name gets "_" and a hash of its
// original name appended (longer hashes only in the astronomically unlikely
// case that the suffixed form is taken too).
func ToolParts(names []string) map[string]string {
	bySan := make(map[string][]string, len(names))
	for _, n := range names {
		s := SanitizeTool(n)
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
