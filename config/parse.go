package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Scopes a Server comes from.
const (
	ScopeUser    = "user"
	ScopeProject = "project"
)

// File keys this package owns. Everything else in the file is someone
// else's and is neither read nor rewritten.
const (
	keyMCP      = "mcp"
	keyServers  = "servers"
	keyTrusted  = "trustedProjects"
	keyApproved = "approvedProjectServers"
)

// DefaultPath returns the config file's path: $FREECODE_CONFIG if set, else
// ~/.freecode/config.json.
func DefaultPath() (string, error) {
	if p := os.Getenv("FREECODE_CONFIG"); p != "" {
		return p, nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("locating the config file: %w", err)
	}
	return filepath.Join(home, ".freecode", "config.json"), nil
}

// SecretsDir returns ~/.freecode/auth, the directory of what FreeCode keeps
// for the user alone: the OAuth tokens of remote servers (where no OS
// keychain takes them) and the token of freecode mcp serve. It does not
// follow the config file: one named by --config or $FREECODE_CONFIG may
// sit in a repository, and nothing a repository controls may hold a
// secret. Only $HOME moves it.
func SecretsDir() (string, error) {
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("locating the directory of sign-ins: %w", err)
	}
	return filepath.Join(home, ".freecode", "auth"), nil
}

// Load reads and parses the config file at path. A missing file is not an
// error: it is an empty config with defaults, as if the user had not
// configured anything yet.
func Load(path string) (*Config, error) {
	data, err := ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Parse(path, nil)
	}
	if err != nil {
		return nil, err
	}
	return Parse(path, data)
}

// Parse parses the contents of the config file at path (JSON with comments
// and trailing commas) and validates it. Empty data is an empty config with
// defaults. A file that is not JSON is a *ParseError; a file whose mcp
// section breaks the rules is a *ValidationError listing every problem.
// Relative caBundle, clientCert, clientKey and cwd values resolve against
// the file's directory. Keys of the mcp section and of server entries that
// FreeCode does not know are ignored, each a warning in Config.Warnings
// (shapes.go); every problem carries its line and column.
func Parse(path string, data []byte) (*Config, error) {
	return parse(path, data, ScopeUser, filepath.Dir(path))
}

// decodeRoot reads a config file's text, JSON with comments, into its
// top-level members, and a decoder of scope whose positions point into
// the text as written (counted from after a byte order mark, as editors
// count). Members are nil, and the error too, when the text holds
// nothing but space; the error is a ParseError when it is not a JSON
// object.
func decodeRoot(path string, data []byte, scope string) (map[string]json.RawMessage, *decoder, error) {
	data, _ = trimBOM(data)
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, nil, nil
	}
	v, err := ParseJSONC(path, data)
	if err != nil {
		return nil, nil, err
	}
	d := &decoder{path: path, scope: scope, pos: &positions{data: data, root: new(v.Clone())}}
	v.Standardize()
	var root map[string]json.RawMessage
	if err := json.Unmarshal(v.Pack(), &root); err != nil || root == nil {
		return nil, nil, &ParseError{Path: path, Line: 1, Col: 1, Msg: "the file must hold a JSON object"}
	}
	return root, d, nil
}

func parse(path string, data []byte, scope, baseDir string) (*Config, error) {
	cfg := &Config{MCP: MCP{PollInterval: DefaultPollInterval, MaxResultChars: DefaultMaxResultChars, MaxParallel: DefaultMaxParallel,
		AutoDeferTools: DefaultAutoDeferTools, AutoDeferTokens: DefaultAutoDeferTokens, IdleTimeout: DefaultIdleTimeout, LogLevel: DefaultLogLevel}}
	root, d, err := decodeRoot(path, data, scope)
	if err != nil {
		return nil, err
	}
	if root == nil {
		return cfg, nil // nothing but space
	}
	if scope == ScopeUser {
		d.otherClientFile(root)
	}
	if raw, ok := root[keyMCP]; ok && !isNull(raw) {
		d.mcp(raw, cfg, scope, baseDir)
	}
	if _, ok := root["telemetry"]; ok && scope == ScopeProject {
		// Not FreeCode's key in a user's file, which is shared; in a
		// project's, a telemetry block anywhere is refused.
		d.refuseProjectTelemetry("telemetry")
	}
	d.duplicates()
	d.sandboxes(cfg, scope)
	d.validate(cfg)
	d.place()
	sortProblems(d.warnings)
	if len(d.problems) > 0 {
		sortProblems(d.problems)
		return nil, &ValidationError{Path: path, Problems: d.problems, Warnings: d.warnings}
	}
	cfg.Warnings = d.warnings
	return cfg, nil
}

// decoder reads the mcp section field by field, so that a value of the
// wrong JSON type is reported with its key and the rest is still checked.
type decoder struct {
	path     string // the file, for hints that name it
	scope    string // ScopeUser or ScopeProject
	problems []Problem
	warnings []Problem // keys ignored: the file loads all the same
	entries  []string  // the key of each decoded server, e.g. "mcp.servers[2]"
	pos      *positions
}

func (d *decoder) fail(key, server, format string, args ...any) {
	d.problems = append(d.problems, Problem{Key: key, Server: server, Msg: fmt.Sprintf(format, args...)})
}

func isNull(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "null" }

// object decodes raw as a JSON object, or reports that key is not one.
func (d *decoder) object(key, server string, raw json.RawMessage) (map[string]json.RawMessage, bool) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		d.fail(key, server, "want an object")
		return nil, false
	}
	return m, true
}

func (d *decoder) str(key, server string, raw json.RawMessage, dst *string) {
	if err := json.Unmarshal(raw, dst); err != nil {
		d.fail(key, server, "want a string")
	}
}

func (d *decoder) boolean(key, server string, raw json.RawMessage, dst *bool) {
	if err := json.Unmarshal(raw, dst); err != nil {
		d.fail(key, server, "want true or false")
	}
}

// millis decodes a positive whole number of milliseconds.
func (d *decoder) millis(key, server string, raw json.RawMessage, dst *time.Duration) {
	var f float64
	if err := json.Unmarshal(raw, &f); err != nil {
		d.fail(key, server, "want a number of milliseconds")
		return
	}
	if f != math.Trunc(f) || f <= 0 || f > float64(math.MaxInt64/int64(time.Millisecond)) {
		d.fail(key, server, "want a whole number of milliseconds greater than 0, not %v", f)
		return
	}
	*dst = time.Duration(f) * time.Millisecond
}

// count decodes a positive whole number.
func (d *decoder) count(key, server string, raw json.RawMessage, dst *int) {
	var f float64
	if err := json.Unmarshal(raw, &f); err != nil {
		d.fail(key, server, "want a number")
		return
	}
	if f != math.Trunc(f) || f <= 0 || f > math.MaxInt32 {
		d.fail(key, server, "want a whole number greater than 0, not %v", f)
		return
	}
	*dst = int(f)
}

// between decodes a whole number from lo to hi.
func (d *decoder) between(key, server string, raw json.RawMessage, lo, hi int, dst *int) {
	var f float64
	if err := json.Unmarshal(raw, &f); err != nil || f != math.Trunc(f) || f < float64(lo) || f > float64(hi) {
		shown := string(bytes.TrimSpace(raw))
		if r := []rune(shown); len(r) > 40 {
			shown = string(r[:37]) + "..."
		}
		d.fail(key, server, "want a whole number from %d to %d, not %s", lo, hi, shown)
		return
	}
	*dst = int(f)
}

// logLevel decodes one of LogLevels.
func (d *decoder) logLevel(key string, raw json.RawMessage, dst *string) {
	var s string
	if err := json.Unmarshal(raw, &s); err != nil || !slices.Contains(LogLevels, s) {
		d.fail(key, "", "want an MCP log level: %s", strings.Join(LogLevels, ", "))
		return
	}
	*dst = s
}

func (d *decoder) strings(key, server string, raw json.RawMessage) []string {
	var s []string
	if err := json.Unmarshal(raw, &s); err != nil {
		d.fail(key, server, "want an array of strings")
		return nil
	}
	return s
}

func (d *decoder) stringMap(key, server string, raw json.RawMessage) map[string]string {
	var m map[string]string
	if err := json.Unmarshal(raw, &m); err != nil {
		d.fail(key, server, "want an object whose values are strings")
		return nil
	}
	return m
}

func (d *decoder) mcp(raw json.RawMessage, cfg *Config, scope, baseDir string) {
	m, ok := d.object(keyMCP, "", raw)
	if !ok {
		return
	}
	for k, v := range m {
		if isNull(v) {
			continue
		}
		key := keyMCP + "." + k
		switch k {
		case keyServers:
			var list []json.RawMessage
			if err := json.Unmarshal(v, &list); err != nil {
				d.serversNotArray(key, v)
				continue
			}
			for i, e := range list {
				if s, ok := d.server(fmt.Sprintf("%s[%d]", key, i), e, scope, baseDir); ok {
					cfg.MCP.Servers = append(cfg.MCP.Servers, s)
				}
			}
		case "pollInterval":
			d.millis(key, "", v, &cfg.MCP.PollInterval)
		case "maxResultChars":
			d.count(key, "", v, &cfg.MCP.MaxResultChars)
		case "maxParallel":
			d.between(key, "", v, 1, MaxParallelLimit, &cfg.MCP.MaxParallel)
		case "deferTools":
			d.deferMode(key, v, &cfg.MCP.DeferTools)
		case "autoDeferTools":
			d.count(key, "", v, &cfg.MCP.AutoDeferTools)
		case "autoDeferTokens":
			d.count(key, "", v, &cfg.MCP.AutoDeferTokens)
		case "idleTimeout":
			d.millis(key, "", v, &cfg.MCP.IdleTimeout)
		case "logLevel":
			d.logLevel(key, v, &cfg.MCP.LogLevel)
		case "sandbox":
			cfg.MCP.Sandbox = d.sandbox(key, "", v, baseDir)
		case "registry":
			d.mcpRegistry(key, v, &cfg.MCP.RegistryURL)
		case "telemetry":
			if scope == ScopeProject {
				d.refuseProjectTelemetry(key)
				continue
			}
			cfg.MCP.Telemetry = d.telemetry(key, v)
		case keyTrusted:
			cfg.Trusted = d.strings(key, "", v)
		case keyApproved:
			cfg.Approvals = d.strings(key, "", v)
		default:
			d.unknown(key, "", mcpKeys)
		}
	}
}

// server decodes one entry of mcp.servers and applies the defaults. It
// returns false only if the entry is not an object at all.
func (d *decoder) server(key string, raw json.RawMessage, scope, baseDir string) (Server, bool) {
	// The entry's own values replace the defaults as they are decoded.
	s := Server{Enabled: true, Scope: scope}.WithDefaults()
	m, ok := d.object(key, "", raw)
	if !ok {
		return s, false
	}
	if v, ok := m["name"]; ok {
		d.str(key+".name", "", v, &s.Name)
	}
	// key names the entry from here on; the server's name goes beside it.
	sh := d.shape(key, m)
	for k, v := range m {
		if isNull(v) || k == "name" {
			continue
		}
		fk := key + "." + k
		switch k {
		case "type":
			d.str(fk, s.Name, v, &s.Type)
		case "args":
			// Decoded by shape, before the command it goes with.
		case "command":
			var one string
			if json.Unmarshal(v, &one) == nil && sh.args != nil {
				s.Command = []string{one} // the program alone: "args" holds the rest
				continue
			}
			if json.Unmarshal(v, &one) == nil {
				argv, err := SplitCommand(one)
				if err != nil {
					d.fail(fk, s.Name, "%v", err)
				}
				s.Command = argv
				continue
			}
			var argv []string
			if err := json.Unmarshal(v, &argv); err != nil {
				d.fail(fk, s.Name, "want an array of strings (argv) or one command line string")
				continue
			}
			s.Command = argv
		case "env":
			s.Env = d.stringMap(fk, s.Name, v)
		case "cwd":
			d.str(fk, s.Name, v, &s.Cwd)
		case "inheritEnv":
			d.boolean(fk, s.Name, v, &s.InheritEnv)
		case "enabled":
			d.boolean(fk, s.Name, v, &s.Enabled)
		case "timeout":
			d.millis(fk, s.Name, v, &s.Timeout)
		case "toolTimeout":
			d.millis(fk, s.Name, v, &s.ToolTimeout)
		case "protocolVersion":
			d.str(fk, s.Name, v, &s.ProtocolVersion)
		case "maxMessageBytes":
			d.count(fk, s.Name, v, &s.MaxMessageBytes)
		case "url":
			d.str(fk, s.Name, v, &s.URL)
		case "transport":
			d.str(fk, s.Name, v, &s.Transport)
		case "headers":
			s.Headers = d.stringMap(fk, s.Name, v)
		case "caBundle":
			d.str(fk, s.Name, v, &s.CABundle)
		case "clientCert":
			d.str(fk, s.Name, v, &s.ClientCert)
		case "clientKey":
			d.str(fk, s.Name, v, &s.ClientKey)
		case "oauth":
			s.OAuth = d.oauth(fk, s.Name, v)
		case "deferTools":
			var b bool
			d.boolean(fk, s.Name, v, &b)
			s.DeferTools = &b
		case "start":
			d.start(fk, s.Name, v, &s.Start)
		case "idleTimeout":
			d.millis(fk, s.Name, v, &s.IdleTimeout)
		case "sandbox":
			s.Sandbox = d.sandbox(fk, s.Name, v, baseDir)
		case "registry":
			s.Registry = d.registry(fk, s.Name, v)
		case "pinning":
			d.pinning(fk, s.Name, v, &s.PinningOff)
			if s.PinningOff && scope == ScopeProject {
				// The repository would decide that its own server's
				// definitions go unchecked.
				d.fail(fk, s.Name, `a project cannot turn pinning off: the definitions of the servers a repository ships are always checked`)
			}
		default:
			d.unknown(fk, s.Name, serverKeys)
		}
	}
	sh.apply(d, key, &s)
	if s.Type == "" && sh.typ == "" {
		// An entry that has only one of command or url means what it says.
		_, hasCommand := m["command"]
		_, hasURL := m["url"]
		switch {
		case hasCommand && !hasURL:
			s.Type = TypeLocal
		case hasURL && !hasCommand:
			s.Type = TypeRemote
		}
	}
	if s.Type == TypeRemote && s.Transport == "" {
		s.Transport = TransportAuto
	}
	s.Cwd = resolve(baseDir, s.Cwd)
	s.CABundle = resolve(baseDir, s.CABundle)
	s.ClientCert = resolve(baseDir, s.ClientCert)
	s.ClientKey = resolve(baseDir, s.ClientKey)
	d.entries = append(d.entries, key)
	return s, true
}

// resolve makes a relative file path absolute against the directory of the
// file that named it, so a config means the same wherever the sidecar runs.
func resolve(baseDir, p string) string {
	if p == "" || filepath.IsAbs(p) || baseDir == "" {
		return p
	}
	if p == "~" || strings.HasPrefix(p, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			return filepath.Join(home, p[1:])
		}
	}
	return filepath.Join(baseDir, p)
}
