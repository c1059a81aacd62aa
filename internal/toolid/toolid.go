// Package toolid is the grammar of FreeCode's tool ids, in one place for
// the config (server names), the registry (ids and aliases), the permission
// rules (how an id reads) and the provider definitions (name limits).
//
// A built-in tool's id is its bare name: read, bash. An MCP tool's id is
// mcp__<server>__<tool>: the server's name from the config, the "__"
// separator, and the tool's name sanitized to [A-Za-z0-9_-] (SanitizeTool,
// ToolParts). Server names never contain "__" and never start or end with
// "_", and sanitized tool parts never contain "__" and never start or end
// with "_", so an id FreeCode makes reads one way: the server ends at the
// first "__" after the prefix.
//
// Providers accept tool names of at most MaxNameLen characters. A longer id
// is sent under an alias (Alias, Aliases): its first characters and 8 hex
// characters of a hash.
package toolid

import (
	"errors"
	"fmt"
	"strings"
)

// Prefix starts every MCP tool id: mcp__<server>__<tool>.
const Prefix = "mcp__"

// Sep separates the server and the tool in an MCP tool id.
const Sep = "__"

// MaxNameLen is the longest tool name the providers (Anthropic, OpenAI)
// accept; a longer id is sent under its alias.
const MaxNameLen = 64

// MaxServerLen is the longest server name.
const MaxServerLen = 48

// IsNameChar reports whether c may appear in a tool id or a server name:
// A-Z a-z 0-9 _ -, what both providers accept in a tool name.
func IsNameChar(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-'
}

// onlyNameChars reports whether every byte of s is a name character.
func onlyNameChars(s string) bool {
	for i := 0; i < len(s); i++ {
		if !IsNameChar(s[i]) {
			return false
		}
	}
	return true
}

// CheckServer reports why name is not a valid server name, or nil. A
// server name is 1 to MaxServerLen name characters, without "__" (it
// separates server and tool in an id) and not starting or ending with "_"
// (next to the separator it would make an id read two ways).
func CheckServer(name string) error {
	switch {
	case name == "":
		return errors.New("a server needs a name")
	case len(name) > MaxServerLen || !onlyNameChars(name):
		return fmt.Errorf("name %q must be 1 to %d characters of A-Z, a-z, 0-9, _ and -", name, MaxServerLen)
	case strings.Contains(name, Sep):
		return fmt.Errorf("name %q must not contain \"__\": it separates server and tool in tool ids (mcp__<server>__<tool>)", name)
	case strings.HasPrefix(name, "_") || strings.HasSuffix(name, "_"):
		// mcp__a___x could be server "a_" with tool "x" or server "a" with
		// tool "_x": a permission rule must read every id one way only.
		return fmt.Errorf("name %q must not start or end with \"_\": next to the \"__\" of a tool id (mcp__<server>__<tool>) it would make the id ambiguous", name)
	}
	return nil
}

// CheckBuiltin reports why name cannot name a built-in tool, or nil. A
// built-in is named by a bare name of at most MaxNameLen characters that
// SanitizeTool leaves unchanged (so without "__"), never starting with
// Prefix, and other than "mcp", which as a rule means every MCP tool.
func CheckBuiltin(name string) error {
	if name == "" || len(name) > MaxNameLen || SanitizeTool(name) != name || strings.HasPrefix(name, Prefix) || name == "mcp" {
		return fmt.Errorf("%q: a built-in is named by a bare [A-Za-z0-9_-] name of at most %d characters, without __ and other than \"mcp\"", name, MaxNameLen)
	}
	return nil
}

// CheckProviderName reports why name cannot be sent to a provider as a tool
// name, or nil: it must be 1 to MaxNameLen name characters.
func CheckProviderName(name string) error {
	if name == "" || len(name) > MaxNameLen {
		return fmt.Errorf("tool name %q: want 1 to %d characters", name, MaxNameLen)
	}
	for i := 0; i < len(name); i++ {
		if !IsNameChar(name[i]) {
			return fmt.Errorf("tool name %q: character %q is not one of [A-Za-z0-9_-]", name, name[i])
		}
	}
	return nil
}

// Format returns the id of the tool of server whose tool part (sanitized
// and de-collided by ToolParts) is part.
func Format(server, part string) string {
	return Prefix + server + Sep + part
}

// Reading is one way to read an MCP tool id as server and tool.
type Reading struct {
	Server, Tool string
	HasTool      bool // false for "mcp__x": no "__" after the server
}

// Readings splits an MCP tool id (it must start with Prefix) into server
// and tool. A server name never contains "__", so the server ends at the
// first "__" after the prefix — unless that run of underscores is longer
// than two: "mcp__a___x" is server "a" with tool "_x", or server "a_" with
// tool "x". Both readings are returned; there are never more than two. Ids
// FreeCode makes read one way (see the package comment); the permission
// rules still consider both, so that an odd name can only make them
// stricter.
func Readings(id string) (rs [2]Reading, n int) {
	rest := id[len(Prefix):]
	i := strings.Index(rest, Sep)
	if i < 0 {
		rs[0] = Reading{Server: rest}
		return rs, 1
	}
	rs[0] = Reading{Server: rest[:i], Tool: rest[i+2:], HasTool: true}
	if i+2 < len(rest) && rest[i+2] == '_' {
		rs[1] = Reading{Server: rest[:i+1], Tool: rest[i+3:], HasTool: true}
		return rs, 2
	}
	return rs, 1
}

// ServerOf returns the server an MCP tool id or alias names, and false for
// anything else (a built-in's name). An id's server ends at the first "__"
// after the prefix. So does an alias's, except for a server name of
// MaxServerLen characters: there the cut falls on the separator, and the
// alias is mcp__<server>_<8 hex>.
func ServerOf(name string) (string, bool) {
	rest, ok := strings.CutPrefix(name, Prefix)
	if !ok {
		return "", false
	}
	if i := strings.Index(rest, Sep); i > 0 {
		return rest[:i], true
	}
	if strings.Contains(rest, Sep) || !LooksLikeAlias(name) {
		return "", false
	}
	return rest[:len(rest)-1-aliasHashLen], true
}
