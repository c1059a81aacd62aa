package config

import (
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/tailscale/hujson"
)

// Kinds of files Import reads.
const (
	ImportClaudeDesktop = "claude-desktop" // claude_desktop_config.json
	ImportCursor        = "cursor"         // ~/.cursor/mcp.json, .cursor/mcp.json
	ImportClaudeCode    = "claude-code"    // .mcp.json, ~/.claude.json
	ImportVSCode        = "vscode"         // .vscode/mcp.json
)

// ImportKinds lists the kinds Import accepts.
var ImportKinds = []string{ImportClaudeDesktop, ImportClaudeCode, ImportCursor, ImportVSCode}

// importEntry is a server entry as other MCP clients write it.
type importEntry struct {
	Type     string            `json:"type"`
	Command  string            `json:"command"`
	Args     []string          `json:"args"`
	Env      map[string]string `json:"env"`
	EnvFile  string            `json:"envFile"`
	Cwd      string            `json:"cwd"`
	URL      string            `json:"url"`
	Headers  map[string]string `json:"headers"`
	Disabled bool              `json:"disabled"`
}

// importKeys are the entry keys importEntry understands; others are
// reported as not carried over.
var importKeys = []string{"type", "command", "args", "env", "envFile", "cwd", "url", "headers", "disabled"}

// Import converts the MCP server list of another client's config file to
// FreeCode servers, with defaults applied and in the file's order. It
// never reads a file: the caller passes its contents. The warnings say
// what could not be carried over as it was (a renamed server, a VS Code
// ${input:…} prompt, an envFile, a variable FreeCode does not expand…);
// entries that cannot be used at all are left out with a warning. The
// error is for data that is not such a file.
func Import(kind string, data []byte) ([]Server, []string, error) {
	servers, _, warnings, err := ImportWithSecrets(kind, data)
	return servers, warnings, err
}

// ImportedSecret is a prompt of the imported file that became a
// ${secret:NAME}: a VS Code input with "password": true, whose value the
// user keeps in FreeCode's secret store (freecode secret set NAME) as VS
// Code kept it in its own.
type ImportedSecret struct {
	Name        string   // as in ${secret:Name}
	Input       string   // the input's id, ${input:Input}
	Description string   // the input's, the file's text: escape it before a terminal
	Servers     []string // the imported servers that reference it, in the file's order
}

// ImportWithSecrets is Import, and the secrets the servers reference in
// place of the file's password prompts.
func ImportWithSecrets(kind string, data []byte) ([]Server, []ImportedSecret, []string, error) {
	im, err := importData(kind, data)
	if err != nil {
		return nil, nil, nil, err
	}
	return im.out, im.secrets, im.warnings, nil
}

// importData reads the server maps of kind's file data.
func importData(kind string, data []byte) (*importer, error) {
	root, err := ParseJSONC(kind, data)
	if err != nil {
		return nil, err
	}
	root.Standardize()
	im := &importer{kind: kind, taken: make(map[string]bool)}
	switch kind {
	case ImportClaudeDesktop, ImportCursor:
		if err := im.servers(&root, "/mcpServers", ""); err != nil {
			return nil, err
		}
	case ImportClaudeCode:
		if err := im.servers(&root, "/mcpServers", ""); err != nil {
			return nil, err
		}
		if projects, ok := member(&root, "/projects"); ok {
			obj, _ := projects.Value.(*hujson.Object)
			for i := range obj.Members {
				dir := literalString(obj.Members[i].Name)
				ptr := "/projects/" + escapePointer(dir) + "/mcpServers"
				if err := im.servers(&root, ptr, dir); err != nil {
					return nil, err
				}
			}
		}
	case ImportVSCode:
		im.readInputs(&root, "/inputs")
		if err := im.servers(&root, "/servers", ""); err != nil {
			return nil, err
		}
		if !im.found {
			// VS Code's settings.json: "mcp": {"servers": {…}}, which is
			// also what a FreeCode config whose servers were copied from
			// another client as they were has.
			if _, ok := member(&root, "/mcp/servers"); ok {
				im.readInputs(&root, "/mcp/inputs")
				if err := im.servers(&root, "/mcp/servers", ""); err != nil {
					return nil, err
				}
			}
		}
	default:
		return nil, fmt.Errorf("unknown import kind %q: want one of %s", kind, strings.Join(ImportKinds, ", "))
	}
	if !im.found {
		key := "mcpServers"
		if kind == ImportVSCode {
			key = "servers"
		}
		return nil, fmt.Errorf("%s: no %q object: not a %s MCP config", kind, key, kind)
	}
	return im, nil
}

type importer struct {
	kind     string
	out      []Server
	warnings []string
	taken    map[string]bool
	found    bool     // the file has a server map at all
	from     []string // the pointers of the server maps read

	// VS Code's password inputs by id, and the secrets they became.
	inputs   map[string]vscodeInput
	secretOf map[string]string // input id → secret name
	inputOf  map[string]string // secret name → input id
	secrets  []ImportedSecret
}

// vscodeInput is an entry of VS Code's "inputs": a prompt its variables
// ${input:id} are answered by.
type vscodeInput struct {
	Type        string `json:"type"`
	ID          string `json:"id"`
	Description string `json:"description"`
	Password    bool   `json:"password"`
}

// readInputs reads VS Code's inputs at ptr, if there are any: an entry
// that is not one is ignored, and its ${input:…} treated as undeclared.
func (im *importer) readInputs(root *hujson.Value, ptr string) {
	v := root.Find(ptr)
	if v == nil {
		return
	}
	var inputs []json.RawMessage
	if err := json.Unmarshal(v.Pack(), &inputs); err != nil {
		return
	}
	for _, raw := range inputs {
		var in vscodeInput
		if json.Unmarshal(raw, &in) != nil || in.ID == "" {
			continue
		}
		if im.inputs == nil {
			im.inputs = make(map[string]vscodeInput)
		}
		im.inputs[in.ID] = in
	}
}

var badSecretChars = regexp.MustCompile(`[^A-Za-z0-9_.-]+`)

// maxSecretName is the longest name of a secret (internal/secretstore's
// ValidName, which config does not import: it would bring the keychain).
const maxSecretName = 128

// secretName returns the name of the secret the password input id
// becomes: id where it is a valid name, else made one, distinct from the
// names other inputs became.
func (im *importer) secretName(id string) string {
	if n, ok := im.secretOf[id]; ok {
		return n
	}
	n := strings.Trim(badSecretChars.ReplaceAllString(id, "_"), "_")
	if len(n) > maxSecretName {
		n = n[:maxSecretName]
	}
	if n == "" {
		n = "input"
	}
	base := n
	for i := 2; im.inputOf[n] != ""; i++ {
		suffix := fmt.Sprintf("-%d", i)
		n = base[:min(len(base), maxSecretName-len(suffix))] + suffix
	}
	if im.secretOf == nil {
		im.secretOf, im.inputOf = make(map[string]string), make(map[string]string)
	}
	im.secretOf[id], im.inputOf[n] = n, id
	return n
}

// noteSecrets records which of the secrets password inputs became s, an
// imported server, references.
func (im *importer) noteSecrets(s Server) {
	for _, name := range SecretRefs(s) {
		id, ok := im.inputOf[name]
		if !ok {
			continue
		}
		i := slices.IndexFunc(im.secrets, func(x ImportedSecret) bool { return x.Name == name })
		if i < 0 {
			im.secrets = append(im.secrets, ImportedSecret{Name: name, Input: id, Description: im.inputs[id].Description})
			i = len(im.secrets) - 1
		}
		im.secrets[i].Servers = append(im.secrets[i].Servers, s.Name)
	}
}

func (im *importer) warn(format string, args ...any) {
	im.warnings = append(im.warnings, fmt.Sprintf(format, args...))
}

// member returns the value at ptr if it is an object.
func member(root *hujson.Value, ptr string) (*hujson.Value, bool) {
	v := root.Find(ptr)
	if v == nil {
		return nil, false
	}
	_, ok := v.Value.(*hujson.Object)
	return v, ok
}

func literalString(v hujson.Value) string {
	if lit, ok := v.Value.(hujson.Literal); ok {
		return lit.String()
	}
	return ""
}

func escapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// servers imports the name → entry object at ptr, if there is one.
// project is the Claude Code project the servers belong to, if any.
func (im *importer) servers(root *hujson.Value, ptr, project string) error {
	v, ok := member(root, ptr)
	if !ok {
		if root.Find(ptr) != nil {
			return fmt.Errorf("%s: %s: want an object of servers by name", im.kind, strings.ReplaceAll(ptr[1:], "/", "."))
		}
		return nil
	}
	im.found = true
	im.from = append(im.from, ptr)
	obj := v.Value.(*hujson.Object)
	var names []string
	for i := range obj.Members {
		orig := literalString(obj.Members[i].Name)
		raw := obj.Members[i].Value.Pack()
		s, ok := im.entry(orig, raw)
		if !ok {
			continue
		}
		im.out = append(im.out, s)
		names = append(names, s.Name)
	}
	if project != "" && len(names) > 0 {
		im.warn("project %s: %s imported as user servers (they will run in every project)", project, strings.Join(names, ", "))
	}
	return nil
}

// entry converts one entry; false means it was left out (and said why).
func (im *importer) entry(orig string, raw []byte) (Server, bool) {
	var e importEntry
	if err := json.Unmarshal(raw, &e); err != nil {
		im.warn("server %q left out: not a server entry (%v)", orig, err)
		return Server{}, false
	}
	var keys map[string]json.RawMessage
	_ = json.Unmarshal(raw, &keys)
	var unknown []string
	for k := range keys {
		if !slices.Contains(importKeys, k) {
			unknown = append(unknown, k)
		}
	}
	name := im.name(orig)
	if len(unknown) > 0 {
		slices.Sort(unknown)
		im.warn("server %q: %s not carried over (FreeCode has no such setting)", name, strings.Join(unknown, ", "))
	}
	s := Server{Name: name, Enabled: !e.Disabled, Scope: ScopeUser}.WithDefaults()
	typ := strings.ToLower(e.Type)
	switch {
	case typ == "stdio" || typ == "" && e.Command != "":
		s.Type = TypeLocal
		s.Command = append([]string{e.Command}, e.Args...)
		s.Env = e.Env
		s.Cwd = e.Cwd
	case e.URL != "":
		s.Type = TypeRemote
		s.URL = e.URL
		s.Headers = e.Headers
		switch typ {
		case "http", "streamable-http", "streamablehttp":
			s.Transport = TransportHTTP
		case "sse":
			s.Transport = TransportSSE
		default:
			if typ != "" {
				im.warn("server %q: type %q unknown, transport set to auto", name, e.Type)
			}
			s.Transport = TransportAuto
		}
	default:
		im.warn("server %q left out: it has neither a command nor a url", name)
		return Server{}, false
	}
	if e.EnvFile != "" {
		im.warn("server %q: envFile %q not carried over; put its variables in env", name, e.EnvFile)
	}
	im.variables(&s)
	for _, p := range checkServer(s.WithDefaults()) {
		im.warn("server %q left out: %s: %s", name, strings.TrimPrefix(p.Key, "."), p.Msg)
		return Server{}, false
	}
	im.taken[s.Name] = true
	im.noteSecrets(s)
	return s, true
}

var badNameChars = regexp.MustCompile(`[^A-Za-z0-9_-]+`)

// name turns orig into a valid, unused server name, and says so if it had
// to change it.
func (im *importer) name(orig string) string {
	n := badNameChars.ReplaceAllString(orig, "-")
	for strings.Contains(n, "__") {
		n = strings.ReplaceAll(n, "__", "_")
	}
	n = strings.Trim(n, "-_")
	if len(n) > 48 {
		n = n[:48]
	}
	if n == "" {
		n = "server"
	}
	base := n
	for i := 2; im.taken[n]; i++ {
		suffix := fmt.Sprintf("-%d", i)
		n = base[:min(len(base), 48-len(suffix))] + suffix
	}
	if n != orig {
		im.warn("server %q imported as %q (names are 1 to 48 of A-Z a-z 0-9 _ -, unique, without \"__\", not starting or ending with _)", orig, n)
	}
	return n
}

// Variable references in the other clients' syntaxes.
var (
	// ${input:id} (VS Code prompts), ${workspaceFolder}, ${userHome}…
	vscodeVar = regexp.MustCompile(`\$\{(input|env|workspaceFolder|workspaceFolderBasename|userHome|pathSeparator|config|command)(:[^}]*)?\}`)
	// ${NAME} and ${NAME:-default} (Claude Code).
	shellVar = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)(:-[^}]*)?\}`)
	envVar   = regexp.MustCompile(`\$\{env:([^}]*)\}`)
	notIdent = regexp.MustCompile(`[^A-Z0-9_]+`)
)

// variables rewrites the variable references of the source format into
// ${env:NAME} where FreeCode can expand them (env, headers, url), VS Code's
// password prompts into ${secret:NAME}, and warns about the rest.
func (im *importer) variables(s *Server) {
	conv := func(where, v string) string {
		switch im.kind {
		case ImportClaudeCode:
			return shellVar.ReplaceAllStringFunc(v, func(m string) string {
				sub := shellVar.FindStringSubmatch(m)
				if sub[2] != "" {
					im.warn("server %q: %s: default in %s dropped; FreeCode reports an unset variable instead", s.Name, where, m)
				}
				return "${env:" + sub[1] + "}"
			})
		case ImportVSCode, ImportCursor:
			return vscodeVar.ReplaceAllStringFunc(v, func(m string) string {
				sub := vscodeVar.FindStringSubmatch(m)
				arg := strings.TrimPrefix(sub[2], ":")
				switch sub[1] {
				case "env":
					return m // our syntax already
				case "input":
					if in, ok := im.inputs[arg]; ok && in.Password {
						// A password VS Code kept in its secret
						// storage: FreeCode keeps it in its own.
						return secretRef + im.secretName(arg) + "}"
					}
					env := strings.Trim(notIdent.ReplaceAllString(strings.ToUpper(arg), "_"), "_")
					im.warn("server %q: %s: %s is a prompt FreeCode cannot show; replaced by ${env:%s}: set that variable", s.Name, where, m, env)
					return "${env:" + env + "}"
				case "userHome":
					return "${env:HOME}"
				}
				im.warn("server %q: %s: %s cannot be carried over; edit it by hand", s.Name, where, m)
				return m
			})
		}
		return v
	}
	for _, k := range slices.Sorted(maps.Keys(s.Env)) {
		s.Env[k] = conv("env "+k, s.Env[k])
	}
	for _, k := range slices.Sorted(maps.Keys(s.Headers)) {
		s.Headers[k] = conv("header "+k, s.Headers[k])
	}
	s.URL = conv("url", s.URL)
	for i, a := range s.Command {
		c := conv("command", a)
		if envVar.MatchString(c) || strings.Contains(c, secretRef) {
			im.warn("server %q: command: %s is not expanded in a command; pass it through env instead", s.Name, a)
			c = a
		}
		s.Command[i] = c
	}
}

// ImportResult is what ImportFile did, or would do.
type ImportResult struct {
	Added    []Server // in the file's order
	Skipped  []Server // a server of that name is in mcp.servers already
	Warnings []string // what could not be carried over as it was (see Import)
	// Secrets are those the file's password prompts became (see
	// ImportWithSecrets), each with the servers that reference it, added
	// or skipped.
	Secrets []ImportedSecret
}

// ImportFile turns the config file at path, saved in kind's shape (another
// client's server map, which Parse reports as a problem: the file's own
// top-level "servers" or "mcpServers", or an object as "mcp.servers"),
// into FreeCode's, in one edit: the map's servers are added to
// mcp.servers, but for those whose name is there already, and the map
// goes, the file's other keys staying as they were. With dryRun the file
// is only read. It is how `freecode mcp import` imports the config file
// itself: adding to a file that keeps the other client's map would leave
// it a problem.
func ImportFile(path, kind string, dryRun bool) (*ImportResult, error) {
	var res *ImportResult
	convert := func(root *hujson.Value) error {
		im, err := importData(kind, root.Pack())
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		res = &ImportResult{Warnings: im.warnings, Secrets: im.secrets}
		for _, ptr := range im.from {
			switch ptr {
			case "/mcp/servers":
				// The array takes the object's place in the mcp section.
				if err := patch(root, "replace", ptr, []byte("[]")); err != nil {
					return err
				}
			case "/servers", "/mcpServers":
				if err := patch(root, "remove", ptr, nil); err != nil {
					return err
				}
			}
		}
		names, err := serverNames(path, root)
		if err != nil {
			return err
		}
		if err := ensure(root, "/mcp", "{}", "/mcp/servers", "[]"); err != nil {
			return err
		}
		for _, s := range im.out {
			if slices.Contains(names, s.Name) {
				res.Skipped = append(res.Skipped, s)
				continue
			}
			entry, err := marshal(toFile(s))
			if err != nil {
				return err
			}
			if err := patch(root, "add", "/mcp/servers/-", entry); err != nil {
				return err
			}
			res.Added = append(res.Added, s)
		}
		return nil
	}
	if !dryRun {
		if err := UpdateFile(path, convert); err != nil {
			return nil, err
		}
		return res, nil
	}
	f, err := readForUpdate(path)
	if err != nil {
		return nil, err
	}
	root, err := ParseJSONC(path, f.data)
	if err != nil {
		return nil, err
	}
	if err := convert(&root); err != nil {
		return nil, err
	}
	return res, nil
}
