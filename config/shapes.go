package config

import (
	"encoding/json"
	"fmt"
	"strings"
)

// The keys FreeCode reads, in the mcp section and in a server entry: any
// other is a warning (the file loads; the key is ignored and left in the
// file as it is). config.schema.json lists the same keys; the schema test
// holds them to it, so a key added here is added there too.
var (
	mcpKeys = []string{keyServers, "pollInterval", "maxResultChars", "maxParallel", "deferTools",
		"autoDeferTools", "autoDeferTokens", "idleTimeout", "logLevel", "sandbox", "registry", "telemetry", keyTrusted, keyApproved}
	serverKeys = []string{"name", "type", "command", "args", "env", "cwd", "inheritEnv", "enabled",
		"timeout", "toolTimeout", "protocolVersion", "maxMessageBytes", "url", "transport", "headers",
		"caBundle", "clientCert", "clientKey", "oauth", "deferTools", "start", "idleTimeout", "pinning", "sandbox", "registry"}
)

// Other clients' words for a server's type (Claude Desktop, Cursor, VS Code
// and most servers' READMEs): "stdio" is a local server, "http" and "sse"
// a remote one over that transport.
const (
	typeStdio = "stdio"
	typeHTTP  = "http"
	typeSSE   = "sse"
)

// otherClientKeys are keys other clients' configs have that FreeCode spells
// otherwise: the warning says how.
var otherClientKeys = map[string]string{
	"disabled":    `FreeCode's is "enabled": false`,
	"envFile":     `FreeCode does not read env files: put the variables in "env"`,
	"alwaysAllow": `FreeCode's rules are in settings.json's "permissions"`,
	"autoApprove": `FreeCode's rules are in settings.json's "permissions"`,
}

// entryShape is what decides how an entry's other keys read: its "args"
// (beside a "command" that then is the program alone, not a command line)
// and another client's word for its "type".
type entryShape struct {
	args []string // non-nil when the entry has "args"
	typ  string   // typeStdio, typeHTTP, typeSSE, or "" for FreeCode's own types
}

// shape reads the keys of entry m that decide how the others read.
func (d *decoder) shape(key string, m map[string]json.RawMessage) entryShape {
	var sh entryShape
	if v, ok := m["args"]; ok && !isNull(v) {
		if args := d.strings(key+".args", "", v); args != nil {
			sh.args = args
		} else {
			sh.args = []string{}
		}
	}
	var typ string
	if v, ok := m["type"]; ok && json.Unmarshal(v, &typ) == nil {
		switch typ {
		case typeStdio, typeHTTP, typeSSE:
			sh.typ = typ
		}
	}
	return sh
}

// apply puts the shape's meaning in s, once the entry's keys are decoded.
func (sh entryShape) apply(d *decoder, key string, s *Server) {
	if sh.args != nil {
		if len(s.Command) == 0 {
			d.fail(key+".args", s.Name, `"args" go with a "command": the program they are given to`)
		} else {
			s.Command = append(s.Command, sh.args...)
		}
	}
	switch sh.typ {
	case typeStdio:
		s.Type = TypeLocal
	case typeHTTP, typeSSE:
		s.Type = TypeRemote
		if s.Transport == "" {
			s.Transport = sh.typ
		} else if s.Transport != sh.typ && s.Transport != TransportAuto {
			d.fail(key+".transport", s.Name, "transport %q contradicts type %q", s.Transport, sh.typ)
		}
	}
}

// unknown records key, which FreeCode does not read, as a warning at the
// key's name. known are the keys of its object, to suggest one that was
// meant.
func (d *decoder) unknown(key, server string, known []string) {
	name := key[strings.LastIndexByte(key, '.')+1:]
	msg := fmt.Sprintf("unknown key %q is ignored", name)
	if why, ok := otherClientKeys[name]; ok {
		msg += ": " + why
	} else if near := nearest(name, known); near != "" {
		msg += fmt.Sprintf("; did you mean %q?", near)
	}
	line, col := d.pos.at(key, true)
	d.warnings = append(d.warnings, Problem{Key: key, Server: server, Msg: msg, Line: line, Col: col, Warning: true})
}

// place gives every problem found without a position the position of its
// key in the file.
func (d *decoder) place() {
	for i := range d.problems {
		if p := &d.problems[i]; p.Line == 0 {
			p.Line, p.Col = d.pos.at(p.Key, false)
		}
	}
}

// nearest returns the key of known that name is most likely a misspelling
// of (the same but for case, or at most two edits away), or "".
func nearest(name string, known []string) string {
	best, bestDist := "", 3
	for _, k := range known {
		if strings.EqualFold(k, name) {
			return k
		}
		if dist := editDistance(strings.ToLower(name), strings.ToLower(k)); dist < bestDist {
			best, bestDist = k, dist
		}
	}
	return best
}

// editDistance is the Levenshtein distance of a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// otherClientMaps are the keys other clients keep their servers under, a
// map by name at the top of their file, with the kind of Import that reads
// them. FreeCode's config has neither.
var otherClientMaps = []struct{ key, shape, kind string }{
	{"servers", `VS Code's mcp.json shape ("servers" at the top)`, ImportVSCode},
	{"mcpServers", `Claude's MCP config shape ("mcpServers" at the top, as Claude Desktop, Claude Code and Cursor write it)`, ImportClaudeDesktop},
}

// otherClientFile reports another client's MCP config saved as FreeCode's:
// a server map at the top (otherClientMaps). Read as FreeCode's, such a
// file has no servers and no mcp section, so every server stopped and the
// trusted projects and approvals of the mcp section went with it, without
// a word; as a problem, the last good config stays in force (the
// workspace keeps it while the file does not load) and the problem, at
// the key, says how import turns the file into FreeCode's.
func (d *decoder) otherClientFile(root map[string]json.RawMessage) {
	for _, o := range otherClientMaps {
		raw, ok := root[o.key]
		var m map[string]json.RawMessage
		if !ok || json.Unmarshal(raw, &m) != nil || m == nil {
			continue // not a server map: someone else's key
		}
		line, col := d.pos.at(o.key, true)
		d.problems = append(d.problems, Problem{Key: o.key, Line: line, Col: col,
			Msg: fmt.Sprintf(`this is %s, which FreeCode does not read: its servers go in "mcp": {"servers": [...]}, an array of entries with a "name"; %s turns this file into FreeCode's`,
				o.shape, d.importHint(o.kind))})
	}
}

// serversNotArray reports mcp.servers that is not an array, at its key.
// An object of servers by name is how other clients write them (VS Code's
// settings.json has exactly "mcp": {"servers": {…}}): import converts it.
func (d *decoder) serversNotArray(key string, raw json.RawMessage) {
	line, col := d.pos.at(key, true)
	msg := `want an array of server entries, each with a "name": [{"name": "memory", "command": …}]`
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) == nil && m != nil {
		msg += ", not an object of servers by name"
		if d.scope == ScopeUser {
			msg += "; " + d.importHint(ImportVSCode) + " converts an object of named servers"
		}
	}
	d.problems = append(d.problems, Problem{Key: key, Msg: msg, Line: line, Col: col})
}

// importHint is the command that imports the file being parsed as kind,
// in place (cmd/freecode/mcp_import.go), and the editor's way to run it.
func (d *decoder) importHint(kind string) string {
	return fmt.Sprintf("`freecode mcp import %s %s` (in VS Code: FreeCode: Import MCP Servers…, then This Config File)", kind, shellQuote(d.path))
}

// shellQuote quotes p for a POSIX shell (and PowerShell) when it holds
// anything but the characters of a plain path.
func shellQuote(p string) string {
	if p != "" && strings.Trim(p, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./:+-") == "" {
		return p
	}
	return "'" + strings.ReplaceAll(p, "'", `'\''`) + "'"
}
