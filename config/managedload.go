package config

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tailscale/hujson"
)

// The managed files in ManagedDir: the main file, and the directory of
// drop-ins read after it.
const (
	ManagedSettingsName = "managed-settings.json"
	ManagedDropInsName  = "managed-settings.d"
)

// LoadManaged reads the machine's managed settings from ManagedDir:
// managed-settings.json, then managed-settings.d/*.json in name order
// (hidden files, and files not ending in .json, are not read). No
// directory or no file is no policy: an empty Managed and no error. A
// file that cannot be read or does not parse is an error (a *ParseError
// with line and column for the latter), and nothing of the others
// applies either: the caller keeps the policy it had, since half of one
// could be looser than all of it. What a file that parses holds but
// FreeCode cannot apply is in Managed.Problems.
func LoadManaged() (*Managed, error) { return loadManaged(ManagedDir()) }

// loadManaged is LoadManaged reading dir.
func loadManaged(dir string) (*Managed, error) {
	paths, err := managedPaths(dir)
	if err != nil {
		return nil, err
	}
	mg := &managedMerge{m: &Managed{}, serverFrom: map[string]string{}}
	for _, p := range paths {
		data, err := ReadFile(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue // removed since the listing: the next reload sees the rest
		}
		if err != nil {
			return nil, fmt.Errorf("reading the managed settings: %w", err)
		}
		part, err := parseManaged(p, data)
		if err != nil {
			return nil, err
		}
		dirs := []string{filepath.Dir(p)}
		if filepath.Dir(p) != dir {
			dirs = append(dirs, dir) // the drop-in directory could be renamed away
		}
		part.file.UserWritable = userWritable(p, dirs...)
		mg.add(part)
	}
	return mg.m, nil
}

// managedPaths lists the managed files of dir in the order they apply.
func managedPaths(dir string) ([]string, error) {
	var out []string
	main := filepath.Join(dir, ManagedSettingsName)
	if _, err := os.Stat(main); err == nil {
		out = append(out, main)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("reading the managed settings: %w", err)
	}
	dropIns := filepath.Join(dir, ManagedDropInsName)
	entries, err := os.ReadDir(dropIns) // sorted by name
	if errors.Is(err, fs.ErrNotExist) {
		return out, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the managed settings: %w", err)
	}
	for _, e := range entries {
		if name := e.Name(); !e.IsDir() && strings.HasSuffix(name, ".json") && !strings.HasPrefix(name, ".") {
			out = append(out, filepath.Join(dropIns, name))
		}
	}
	return out, nil
}

// managedPart is what one managed file says, before it is merged with
// the others.
type managedPart struct {
	file       ManagedFile
	allowedSet bool // "allowedMcpServers" is there, even if empty
	allowed    []ServerMatch
	denied     []ServerMatch
	servers    []Server
	serverAt   []Problem // where each of servers is: Key, Line, Col
	exclusive  bool
	rulesOnly  bool
	rules      []ManagedRule
	require    string
	ceilingSet bool
	ceiling    []string
	denyRead   []string
	audit      ManagedAudit
	auditSet   struct{ dir, arguments, maxFileBytes bool }
	registry   string // "registry.url", "" if not set
	telemetry  Telemetry
	telSet     telemetrySet
	message    string
	problems   []Problem
}

// The keys of a managed file FreeCode reads; any other is a warning.
const (
	keyAllowed   = "allowedMcpServers"
	keyDenied    = "deniedMcpServers"
	keyMCPServer = "mcpServers"
)

var managedKeys = []string{keyAllowed, keyDenied, keyMCPServer, "exclusive", "allowManagedPermissionRulesOnly",
	"allowManagedMcpServersOnly", "permissions", "sandbox", "audit", "registry", "telemetry", "message"}

// parseManaged parses one managed file (JSON with comments, as every
// file FreeCode reads). Only a file that does not parse is an error.
func parseManaged(path string, data []byte) (*managedPart, error) {
	part := &managedPart{file: ManagedFile{Path: path}}
	data, _ = trimBOM(data)
	if len(bytes.TrimSpace(data)) == 0 {
		return part, nil
	}
	v, err := ParseJSONC(path, data)
	if err != nil {
		return nil, err
	}
	d := &managedDecoder{
		decoder: &decoder{path: path, scope: ScopeManaged, pos: &positions{data: data, root: new(v.Clone())}},
		part:    part,
	}
	v.Standardize()
	var root map[string]json.RawMessage
	if err := json.Unmarshal(v.Pack(), &root); err != nil || root == nil {
		return nil, &ParseError{Path: path, Line: 1, Col: 1, Msg: "the file must hold a JSON object"}
	}
	if top, ok := d.pos.root.Value.(*hujson.Object); ok {
		// A key written twice counts once, the last time, as the JSON
		// decoder reads it: what the first said is lost, which for a
		// deny-list or a switch is a policy looser than written. So it
		// is an error, not the config's warning.
		n := len(d.warnings)
		d.dupObject(top, "", "", func(name string) bool { return slices.Contains(managedKeys, name) })
		for _, p := range d.warnings[n:] {
			p.Warning = false
			d.problems = append(d.problems, p)
		}
		d.warnings = d.warnings[:n]
	}
	for _, k := range slices.Sorted(maps.Keys(root)) {
		raw := root[k]
		if isNull(raw) {
			continue
		}
		switch k {
		case keyAllowed:
			part.allowedSet = true
			part.allowed = d.serverList(k, raw)
			part.file.Allowlist = true
		case keyDenied:
			part.denied = d.serverList(k, raw)
		case keyMCPServer:
			d.servers(&v)
		case "exclusive":
			d.boolean(k, "", raw, &part.exclusive)
			part.file.Exclusive = part.exclusive
		case "allowManagedPermissionRulesOnly":
			d.boolean(k, "", raw, &part.rulesOnly)
		case "allowManagedMcpServersOnly":
			// Claude Code's: only the managed allow-list applies. A
			// user's or project's file has none in FreeCode, so it always
			// is; the value is checked and otherwise changes nothing.
			var b bool
			d.boolean(k, "", raw, &b)
		case "permissions":
			d.permissions(raw)
		case "sandbox":
			d.sandbox(raw)
		case "audit":
			d.audit(raw)
		case "registry":
			d.registry(raw)
		case "telemetry":
			d.telemetry(raw)
		case "message":
			d.str(k, "", raw, &part.message)
		case "managedMcpServers":
			// Claude Code's servers provided beside the user's own: the
			// same as FreeCode's, under the other name.
			line, col := d.pos.at(k, true)
			d.warnings = append(d.warnings, Problem{Key: k, Line: line, Col: col, Warning: true,
				Msg: `unknown key "managedMcpServers" is ignored: FreeCode's managed servers are "mcpServers", servers by name as Claude Code writes them`})
		default:
			d.unknown(k, "", managedKeys)
		}
	}
	d.place()
	part.problems = append(d.problems, d.warnings...)
	slices.SortStableFunc(part.problems, func(a, b Problem) int {
		return cmp.Or(cmp.Compare(a.Line, b.Line), cmp.Compare(a.Col, b.Col))
	})
	slices.SortStableFunc(part.rules, func(a, b ManagedRule) int {
		return cmp.Or(cmp.Compare(a.Line, b.Line), cmp.Compare(a.Col, b.Col))
	})
	return part, nil
}

// managedMerge joins the managed files, each read after the ones before.
type managedMerge struct {
	m          *Managed
	serverFrom map[string]string // a managed server's name → the file it is from
	ceilingSet bool
}

// add merges part into the policy so that a later file can only add to
// it, but for the values one file at a time decides (the message, the
// audit settings, a server's entry), where the later file's holds.
func (mg *managedMerge) add(part *managedPart) {
	m := mg.m
	m.Files = append(m.Files, part.file)
	if part.allowedSet {
		if m.Allowed == nil {
			m.Allowed = []ServerMatch{}
		}
		m.Allowed = append(m.Allowed, part.allowed...)
	}
	m.Denied = append(m.Denied, part.denied...)
	for i, s := range part.servers {
		j := slices.IndexFunc(m.Servers, func(o Server) bool { return o.Name == s.Name })
		if j < 0 {
			m.Servers = append(m.Servers, s)
			mg.serverFrom[s.Name] = part.file.Path
			continue
		}
		at := part.serverAt[i]
		m.Problems = append(m.Problems, ManagedProblem{Path: part.file.Path, Problem: Problem{
			Key: at.Key, Server: s.Name, Line: at.Line, Col: at.Col, Warning: true,
			Msg: fmt.Sprintf("server %q replaces the managed server of that name in %s", s.Name, mg.serverFrom[s.Name]),
		}})
		m.Servers[j] = s
		mg.serverFrom[s.Name] = part.file.Path
	}
	m.Exclusive = m.Exclusive || part.exclusive
	m.ManagedRulesOnly = m.ManagedRulesOnly || part.rulesOnly
	m.Permissions = append(m.Permissions, part.rules...)
	if requireRank(part.require) > requireRank(m.Sandbox.Require) {
		m.Sandbox.Require = part.require
	}
	if part.ceilingSet {
		if !mg.ceilingSet {
			m.Sandbox.AllowedDomains = slices.Clone(part.ceiling)
		} else {
			m.Sandbox.AllowedDomains = intersectDomains(m.Sandbox.AllowedDomains, part.ceiling)
		}
		mg.ceilingSet = true
	}
	m.Sandbox.DenyRead = appendNew(m.Sandbox.DenyRead, part.denyRead)
	if part.auditSet.dir {
		m.Audit.Dir = part.audit.Dir
	}
	if part.auditSet.arguments {
		m.Audit.Arguments = part.audit.Arguments
	}
	if part.auditSet.maxFileBytes {
		m.Audit.MaxFileBytes = part.audit.MaxFileBytes
	}
	if part.registry != "" {
		m.Registry = ManagedRegistry{URL: part.registry, Path: part.file.Path}
	}
	for _, f := range []struct {
		key string
		set bool
		to  func()
	}{
		{"enabled", part.telSet.enabled, func() { m.Telemetry.Enabled = part.telemetry.Enabled }},
		{"endpoint", part.telSet.endpoint, func() { m.Telemetry.Endpoint = part.telemetry.Endpoint }},
		{"protocol", part.telSet.protocol, func() { m.Telemetry.Protocol = part.telemetry.Protocol }},
		{"headers", part.telSet.headers, func() { m.Telemetry.Headers = part.telemetry.Headers }},
		{"arguments", part.telSet.arguments, func() { m.Telemetry.Arguments = part.telemetry.Arguments }},
	} {
		if !f.set {
			continue
		}
		f.to()
		if m.Telemetry.From == nil {
			m.Telemetry.From = map[string]string{}
		}
		m.Telemetry.From[f.key] = part.file.Path
	}
	if part.message != "" {
		m.Message = part.message
	}
	for _, p := range part.problems {
		m.Problems = append(m.Problems, ManagedProblem{Path: part.file.Path, Problem: p})
	}
}

// requireRank orders the sandbox minimums, the strictest last.
func requireRank(r string) int {
	switch r {
	case RequireSandboxAll:
		return 2
	case RequireSandboxProject:
		return 1
	}
	return 0
}

// intersectDomains is the ceiling two files' ceilings leave: each entry
// of either that the other covers (api.example.com of one and
// *.example.com of the other leave api.example.com), in a's order then
// b's, once each. Never nil: two ceilings that share nothing leave no
// network.
func intersectDomains(a, b []string) []string {
	out := []string{}
	for _, d := range a {
		if withinCeiling(d, b) && !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	for _, d := range b {
		if withinCeiling(d, a) && !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	return out
}
