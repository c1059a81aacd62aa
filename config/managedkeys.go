package config

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tailscale/hujson"
)

// managedDecoder reads the keys of one managed file into its part. Like
// the config's decoder (whose helpers it uses), it reports a value of the
// wrong type at its key and reads on. Where a value cannot be read the
// policy errs on the strict side, so that a typo of the organization's
// never lets through what it meant to stop: a broken allow-list entry
// allows nothing, a broken deny-list entry denies by each key that reads.
type managedDecoder struct {
	*decoder
	part *managedPart
}

// matchKeys are the keys of an entry of allowedMcpServers or
// deniedMcpServers; an entry has exactly one.
var matchKeys = []string{"serverName", "serverCommand", "serverUrl", "registryName"}

const matchShapes = `{"serverName": "github"}, {"serverCommand": ["npx", "-y", "pkg@1.2.3"]}, {"serverUrl": "https://mcp.example.com/*"} or {"registryName": "io.github.owner/server"}`

// serverList decodes allowedMcpServers or deniedMcpServers, list. An
// allow-list that is not an array allows no server (the caller has it
// set all the same); a deny-list that is not one denies nothing.
func (d *managedDecoder) serverList(list string, raw json.RawMessage) []ServerMatch {
	var entries []json.RawMessage
	if err := json.Unmarshal(raw, &entries); err != nil {
		msg := "want an array of entries, each one of " + matchShapes
		if list == keyAllowed {
			msg += "; until it is one, no server but the managed ones is allowed"
		} else {
			msg += "; until it is one, it denies nothing"
		}
		d.fail(list, "", "%s", msg)
		return nil
	}
	out := []ServerMatch{}
	for i, e := range entries {
		out = append(out, d.serverMatch(list, i, e)...)
	}
	return out
}

// serverMatch decodes entry i of list. Of the allow-list it returns the
// entry, Invalid if it is broken; of the deny-list one entry for each of
// its keys that reads, so that an entry with two denies by either.
func (d *managedDecoder) serverMatch(list string, i int, raw json.RawMessage) []ServerMatch {
	key := fmt.Sprintf("%s[%d]", list, i)
	line, col := d.pos.at(key, false)
	base := ServerMatch{List: list, Index: i, Path: d.path, Line: line, Col: col}
	deny := list == keyDenied
	obj, ok := d.object(key, "", raw)
	if !ok {
		return nil
	}
	var (
		read    []ServerMatch // one per key that reads
		entry   = base        // every key together, as written
		keys    int           // matcher keys present
		broken  bool
		rangeOK bool // registryVersion read
	)
	for _, k := range slices.Sorted(maps.Keys(obj)) {
		v := obj[k]
		if isNull(v) {
			continue
		}
		fk := key + "." + k
		one := base
		var s string
		isString := json.Unmarshal(v, &s) == nil
		switch k {
		case "serverName", "serverUrl", "registryName":
			keys++
			valid := isString && s != ""
			if !valid {
				d.fail(fk, "", "want a non-empty string")
				s, broken = jsonText(v), true
			} else if k == "serverUrl" && !strings.Contains(s, "://") {
				l, c := d.pos.at(fk, false)
				d.warnings = append(d.warnings, Problem{Key: fk, Line: l, Col: c, Warning: true,
					Msg: fmt.Sprintf(`%q has no scheme: a pattern is matched against the whole URL, "https://" included`, s)})
			}
			entry.set(k, s)
			if !valid {
				continue
			}
			one.set(k, s)
		case "serverCommand":
			keys++
			var argv []string
			if json.Unmarshal(v, &argv) != nil || len(argv) == 0 || argv[0] == "" {
				d.fail(fk, "", `want the command and its arguments, matched exactly: an array of strings such as ["npx", "-y", "pkg@1.2.3"]`)
				broken = true
				argv = nil
				// A command line a deny-list names is read as a shell
				// would split it: denying that too is only stricter.
				if isString {
					if a, err := SplitCommand(s); err == nil && len(a) > 0 && a[0] != "" {
						argv = a
					}
				}
				if argv == nil {
					entry.Command = []string{jsonText(v)}
					continue
				}
				entry.Command = argv
				if !deny {
					continue
				}
			}
			one.Command, entry.Command = argv, argv
		case "registryVersion":
			// Not an entry of its own: it narrows the registryName
			// beside it, below.
			err := fmt.Errorf(`want a string such as ">=1.2.0 <2.0.0"`)
			if isString {
				_, err = parseVersionRange(s)
			}
			if err != nil {
				d.fail(fk, "", "%s", err.Error())
				broken = true
				entry.RegistryVersion = jsonText(v)
				continue
			}
			entry.RegistryVersion, rangeOK = s, true
			continue
		default:
			msg := fmt.Sprintf("unknown key %q: an entry is one of %s", k, matchShapes)
			if near := nearest(k, append(matchKeys, "registryVersion")); near != "" {
				msg = fmt.Sprintf("unknown key %q; did you mean %q? An entry is one of %s", k, near, matchShapes)
			}
			d.fail(fk, "", "%s", msg)
			broken = true
			continue
		}
		read = append(read, one)
	}
	if entry.RegistryVersion != "" {
		if entry.Registry == "" {
			d.fail(key+".registryVersion", "", `registryVersion narrows a registryName: {"registryName": "io.github.owner/server", "registryVersion": ">=1.2.0"}`)
			broken = true
		}
		// A deny entry's registryName denies only those versions; one
		// whose range did not read denies every version.
		for i := range read {
			if read[i].Registry != "" && rangeOK {
				read[i].RegistryVersion = entry.RegistryVersion
			}
		}
	}
	switch {
	case keys == 0:
		d.fail(key, "", "the entry names no server: want one of %s", matchShapes)
		broken = true
	case keys > 1 && deny:
		d.fail(key, "", "an entry has one key, not %d: each of them denies on its own", keys)
		broken = true
	case keys > 1:
		d.fail(key, "", "an entry has one key, not %d: this one allows no server", keys)
		broken = true
	}
	if deny {
		return read
	}
	entry.Invalid = broken
	return []ServerMatch{entry}
}

// set sets the field of matcher key k.
func (m *ServerMatch) set(k, v string) {
	switch k {
	case "serverName":
		m.Name = v
	case "serverUrl":
		m.URL = v
	case "registryName":
		m.Registry = v
	}
}

// jsonText is a value of the wrong type as written, for showing.
func jsonText(raw json.RawMessage) string {
	s := strings.TrimSpace(string(raw))
	if r := []rune(s); len(r) > 60 {
		s = string(r[:57]) + "..."
	}
	return s
}

// servers decodes "mcpServers", Claude Code's map of name to entry, with
// the importer of Claude Code's files (std is the standardized file).
// What the importer could not carry over is a warning at the entry; an
// entry it left out is an error there.
func (d *managedDecoder) servers(std *hujson.Value) {
	var obj *hujson.Object
	if v := std.Find("/" + keyMCPServer); v != nil {
		obj, _ = v.Value.(*hujson.Object)
	}
	if obj == nil {
		d.fail(keyMCPServer, "", `want an object of servers by name, as Claude Code's: {"github": {"type": "http", "url": "https://api.githubcopilot.com/mcp/"}}`)
		return
	}
	var written *hujson.Object // the same members, at their offsets in the file
	if v, _ := child(d.pos.root, keyMCPServer); v != nil {
		written, _ = v.Value.(*hujson.Object)
	}
	for i := range obj.Members {
		orig := literalString(obj.Members[i].Name)
		at := Problem{Key: keyMCPServer + "." + orig}
		if written != nil && len(written.Members) == len(obj.Members) {
			at.Line, at.Col = offsetLineCol(d.pos.data, written.Members[i].Value.StartOffset)
		} else {
			at.Line, at.Col = d.pos.at(keyMCPServer, false)
		}
		// One importer per entry: a name written twice is the later
		// entry replacing the earlier (as across files), not a rename.
		im := &importer{kind: ImportClaudeCode, taken: map[string]bool{}}
		s, ok := im.entry(orig, obj.Members[i].Value.Pack())
		for _, w := range im.warnings {
			p := at
			p.Server, p.Msg, p.Warning = cmp.Or(s.Name, orig), w, ok
			if ok {
				d.warnings = append(d.warnings, p)
			} else {
				d.problems = append(d.problems, p)
			}
		}
		if !ok {
			continue
		}
		s.Scope = ScopeManaged
		d.part.servers = append(d.part.servers, s)
		d.part.serverAt = append(d.part.serverAt, at)
	}
}

// permissions decodes the managed rules, {"allow": [...], "ask": [...],
// "deny": [...]}. The patterns are the permissions package's to check.
func (d *managedDecoder) permissions(raw json.RawMessage) {
	m, ok := d.object("permissions", "", raw)
	if !ok {
		return
	}
	effects := []string{"allow", "ask", "deny"}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		v := m[k]
		if isNull(v) {
			continue
		}
		fk := "permissions." + k
		if !slices.Contains(effects, k) {
			d.unknown(fk, "", effects)
			continue
		}
		var list []json.RawMessage
		if json.Unmarshal(v, &list) != nil {
			d.fail(fk, "", "want an array of rules, each a string")
			continue
		}
		for i, e := range list {
			ek := fmt.Sprintf("%s[%d]", fk, i)
			var s string
			if json.Unmarshal(e, &s) != nil || strings.TrimSpace(s) == "" {
				d.fail(ek, "", "want a rule: a non-empty string")
				continue
			}
			line, col := d.pos.at(ek, false)
			d.part.rules = append(d.part.rules, ManagedRule{Pattern: s, Effect: k, Path: d.path, Line: line, Col: col})
		}
	}
}

var managedSandboxKeys = []string{"require", "allowedDomainsCeiling", "denyRead"}

// sandbox decodes the sandbox minimum. A require that is not one of its
// values is read as "all", and a ceiling that is not an array of domains
// as no domain at all: until the file is fixed, the strictest reading.
func (d *managedDecoder) sandbox(raw json.RawMessage) {
	m, ok := d.object("sandbox", "", raw)
	if !ok {
		return
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		v := m[k]
		if isNull(v) {
			continue
		}
		fk := "sandbox." + k
		switch k {
		case "require":
			var s string
			if json.Unmarshal(v, &s) != nil || s != RequireSandboxProject && s != RequireSandboxAll {
				d.fail(fk, "", `want "project" (every project server runs sandboxed) or "all" (every local server does); read as "all" until it is one`)
				s = RequireSandboxAll
			}
			d.part.require = s
		case "allowedDomainsCeiling":
			d.part.ceilingSet = true
			d.part.ceiling = []string{}
			var list []json.RawMessage
			if json.Unmarshal(v, &list) != nil {
				d.fail(fk, "", "want an array of domains such as \"api.example.com\" or \"*.example.com\"; until it is one, sandboxed servers reach no domain")
				continue
			}
			for i, e := range list {
				var dom string
				err := json.Unmarshal(e, &dom)
				if err == nil {
					_, err = ParseAllowedDomain(dom)
				}
				if err != nil {
					d.fail(fmt.Sprintf("%s[%d]", fk, i), "", "%v; left out of the ceiling", err)
					continue
				}
				d.part.ceiling = appendNew(d.part.ceiling, []string{strings.ToLower(dom)})
			}
		case "denyRead":
			for i, p := range d.strings(fk, "", v) {
				abs, err := absOrHome(p)
				if err != nil {
					d.fail(fmt.Sprintf("%s[%d]", fk, i), "", "%v", err)
					continue
				}
				d.part.denyRead = appendNew(d.part.denyRead, []string{abs})
			}
		default:
			d.unknown(fk, "", managedSandboxKeys)
		}
	}
}

// absOrHome returns p, an absolute path or one under ~/ (the home of the
// user FreeCode runs as), cleaned and with ~ expanded.
func absOrHome(p string) (string, error) {
	if p == "~" || strings.HasPrefix(p, "~/") {
		home, err := os.UserHomeDir()
		if err != nil || home == "" {
			return "", fmt.Errorf("%q: no home directory to expand ~ against", p)
		}
		return filepath.Join(home, p[1:]), nil
	}
	if !filepath.IsAbs(p) {
		return "", fmt.Errorf("want an absolute path, or one under ~/, not %q", p)
	}
	return filepath.Clean(p), nil
}

var managedAuditKeys = []string{"dir", "arguments", "maxFileBytes"}

// audit decodes the audit block; each field it sets replaces an earlier
// file's.
func (d *managedDecoder) audit(raw json.RawMessage) {
	m, ok := d.object("audit", "", raw)
	if !ok {
		return
	}
	a, set := &d.part.audit, &d.part.auditSet
	for _, k := range slices.Sorted(maps.Keys(m)) {
		v := m[k]
		if isNull(v) {
			continue
		}
		fk := "audit." + k
		switch k {
		case "dir":
			var s string
			if json.Unmarshal(v, &s) != nil || !filepath.IsAbs(s) {
				d.fail(fk, "", "want the absolute path of a directory")
				continue
			}
			a.Dir, set.dir = filepath.Clean(s), true
		case "arguments":
			if json.Unmarshal(v, &a.Arguments) != nil {
				d.fail(fk, "", "want true or false")
				continue
			}
			set.arguments = true
		case "maxFileBytes":
			var f float64
			if json.Unmarshal(v, &f) != nil || f != math.Trunc(f) || f <= 0 || f > 1<<53 {
				d.fail(fk, "", "want a whole number of bytes greater than 0")
				continue
			}
			a.MaxFileBytes, set.maxFileBytes = int64(f), true
		default:
			d.unknown(fk, "", managedAuditKeys)
		}
	}
}

var managedRegistryKeys = []string{"url"}

// registry decodes the registry block; a URL it sets replaces an earlier
// file's. One that FreeCode may not dial (not https, nor http to a
// loopback address) is an error and fixes nothing.
func (d *managedDecoder) registry(raw json.RawMessage) {
	m, ok := d.object("registry", "", raw)
	if !ok {
		return
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		v := m[k]
		if isNull(v) {
			continue
		}
		fk := "registry." + k
		switch k {
		case "url":
			var s string
			if json.Unmarshal(v, &s) != nil {
				d.fail(fk, "", "want the URL of an MCP Registry, such as %q", DefaultRegistryURL)
				continue
			}
			s = strings.TrimRight(s, "/")
			if err := CheckRegistryURL(s); err != nil {
				d.fail(fk, "", "%s", err.Error())
				continue
			}
			d.part.registry = s
		default:
			d.unknown(fk, "", managedRegistryKeys)
		}
	}
}

// telemetry decodes the telemetry block (decodeTelemetry); each field it
// sets replaces an earlier file's. A value that cannot be read leaves that
// field to the files before it (and the user's), and is an error:
// "enabled" that is not a boolean turns nothing on, an endpoint that is
// not an http(s) URL redirects nothing.
func (d *managedDecoder) telemetry(raw json.RawMessage) {
	m, ok := d.object("telemetry", "", raw)
	if !ok {
		return
	}
	d.part.telemetry, d.part.telSet = decodeTelemetry("telemetry", m,
		func(fk, msg string) { d.fail(fk, "", "%s", msg) },
		func(fk string) { d.unknown(fk, "", telemetryKeys) })
}

// validHeaderName reports whether name is an HTTP header name (RFC 9110's
// token).
func validHeaderName(name string) bool {
	if name == "" {
		return false
	}
	for _, c := range []byte(name) {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}
