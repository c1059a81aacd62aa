package config

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
)

// ProjectSettingsPath returns the path of the project settings file of the
// project in dir: <dir>/.freecode/settings.json.
func ProjectSettingsPath(dir string) string {
	return filepath.Join(dir, ".freecode", "settings.json")
}

// ProjectSettingsAreUsers reports whether the project settings file of
// the project in dir is one of the user's own files: the config file at
// configPath, or the user's settings.json beside it. So it is when the
// project is the user's home directory, and then it is read once, as the
// user's: not for project servers awaiting approval, nor for project rules.
func ProjectSettingsAreUsers(dir, configPath string) bool {
	p := ProjectSettingsPath(dir)
	return SameFile(p, configPath) || SameFile(p, filepath.Join(filepath.Dir(configPath), filepath.Base(p)))
}

// SameFile reports whether the paths a and b name one file: the same
// cleaned absolute path, the same path once the symbolic links of the part
// of it that exists are resolved, or, both existing, one file to
// os.SameFile (a hard link, a bind mount). A project whose root is the
// user's home has the user's ~/.freecode/settings.json as its
// .freecode/settings.json: what reads both asks this, to read it once.
func SameFile(a, b string) bool {
	ra, errA := ResolvePath(a)
	rb, errB := ResolvePath(b)
	if errA == nil && errB == nil && ra == rb {
		return true
	}
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(fa, fb)
}

// ResolvePath is p absolute, cleaned, the symbolic links of the part of it
// that exists resolved: where p leads now, whether or not all of it exists.
func ResolvePath(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	rest := ""
	for dir := abs; ; dir = filepath.Dir(dir) {
		if r, err := filepath.EvalSymlinks(dir); err == nil {
			return filepath.Join(r, rest), nil
		}
		if filepath.Dir(dir) == dir {
			return abs, nil
		}
		rest = filepath.Join(filepath.Base(dir), rest)
	}
}

// LoadProject reads the MCP servers a project ships in
// <dir>/.freecode/settings.json (the same mcp.servers key as the config
// file). They have Scope "project" and relative paths resolve against dir.
// A missing file means no servers. Such a server must not start before the
// user approved it: see ApprovalKey and Config.Approved.
func LoadProject(dir string) ([]Server, error) {
	servers, _, err := LoadProjectWarnings(dir)
	return servers, err
}

// LoadProjectWarnings is LoadProject, and the keys of the file's mcp
// section that FreeCode ignores (see Config.Warnings).
func LoadProjectWarnings(dir string) ([]Server, []Problem, error) {
	path := ProjectSettingsPath(dir)
	data, err := ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	cfg, err := parse(path, data, ScopeProject, dir)
	if err != nil {
		return nil, nil, err
	}
	return cfg.MCP.Servers, cfg.Warnings, nil
}

// approvalEntry is what an approval covers: everything that decides what
// runs, where it connects, what it is given and how what it lists is
// checked. Only the enabled flag is left out: turning a server off asks
// nothing, and turning it back on runs what was approved.
//
// RunSettings were added later; each is left out at its default, so the
// approvals of entries that do not set them hold.
type approvalEntry struct {
	Name       string            `json:"name"`
	Type       string            `json:"type"`
	Command    []string          `json:"command"`
	Env        map[string]string `json:"env"`
	Cwd        string            `json:"cwd"`
	InheritEnv bool              `json:"inheritEnv"`
	URL        string            `json:"url"`
	Transport  string            `json:"transport"`
	Headers    map[string]string `json:"headers"`
	CABundle   string            `json:"caBundle"`
	ClientCert string            `json:"clientCert"`
	ClientKey  string            `json:"clientKey"`
	// Left out when absent, so approvals given before the key existed hold.
	OAuth *fileOAuth `json:"oauth,omitempty"`
	// Left out when absent: such an entry runs in the default sandbox,
	// and approvals given before the key existed hold (they approved a
	// server that ran unsandboxed).
	Sandbox *fileSandbox `json:"sandbox,omitempty"`
	// Resolved are the paths of the entry (its cwd, its sandbox's
	// allowWrite) whose symbolic links lead elsewhere than their text
	// says, and where: a pull that turns an approved "cwd": "data" into a
	// link to ".." asks again. Left out when every path is what it says,
	// so approvals given before it existed hold.
	Resolved map[string]string `json:"resolved,omitempty"`
	// Registry is the MCP Registry identity the entry claims (name,
	// version, registry, digest): approving it approves that identity too,
	// which the organization's registryName entries match. Left out when
	// absent, so approvals given before the key existed hold.
	Registry *Registry `json:"registry,omitempty"`

	RunSettings
}

// RunSettings are the keys of a server entry that decide, beyond what runs
// and what it is given, how it runs and how what it lists is checked: each
// left at its zero value where the entry leaves it at its default. A
// project that could change these unasked could switch pinning off, start
// its server on demand, or stretch its timeouts and message cap, so
// approving a project server covers them (EntryHash), and the approval
// shows them.
type RunSettings struct {
	Pinning         string `json:"pinning,omitempty"` // "off"
	Start           string `json:"start,omitempty"`   // "onDemand"
	DeferTools      *bool  `json:"deferTools,omitempty"`
	TimeoutMs       int64  `json:"timeout,omitempty"`
	ToolTimeoutMs   int64  `json:"toolTimeout,omitempty"`
	IdleTimeoutMs   int64  `json:"idleTimeout,omitempty"`
	MaxMessageBytes int    `json:"maxMessageBytes,omitempty"`
	ProtocolVersion string `json:"protocolVersion,omitempty"`
}

// RunSettings returns s's RunSettings, defaults left out.
func (s Server) RunSettings() RunSettings {
	r := RunSettings{DeferTools: s.DeferTools, ProtocolVersion: s.ProtocolVersion}
	if s.PinningOff {
		r.Pinning = pinningOff
	}
	if s.OnDemand() {
		r.Start = StartOnDemand
	}
	if s.Timeout != DefaultTimeout {
		r.TimeoutMs = s.Timeout.Milliseconds()
	}
	if s.ToolTimeout != DefaultToolTimeout {
		r.ToolTimeoutMs = s.ToolTimeout.Milliseconds()
	}
	if s.MaxMessageBytes != DefaultMaxMessageBytes {
		r.MaxMessageBytes = s.MaxMessageBytes
	}
	r.IdleTimeoutMs = s.IdleTimeout.Milliseconds()
	return r
}

// approvalOf returns what approving s covers.
func approvalOf(s Server) approvalEntry {
	e := approvalEntry{
		Name: s.Name, Type: s.Type, Command: s.Command, Env: s.Env, Cwd: s.Cwd, InheritEnv: s.InheritEnv,
		URL: s.URL, Transport: s.Transport, Headers: s.Headers,
		CABundle: s.CABundle, ClientCert: s.ClientCert, ClientKey: s.ClientKey,
		OAuth:       toFileOAuth(s.OAuth),
		Sandbox:     toFileSandbox(s.Sandbox),
		Registry:    s.Registry.clone(),
		RunSettings: s.RunSettings(),
	}
	paths := []string{s.Cwd}
	if s.Sandbox != nil {
		paths = append(paths, s.Sandbox.AllowWrite...)
	}
	for _, p := range paths {
		if p == "" || !filepath.IsAbs(p) {
			continue
		}
		if r, err := ResolvePath(p); err == nil && r != filepath.Clean(p) {
			if e.Resolved == nil {
				e.Resolved = map[string]string{}
			}
			e.Resolved[p] = r
		}
	}
	// encoding/json writes struct fields in order and map keys sorted, and
	// nil and empty encode alike here, so equal entries hash alike.
	if len(e.Command) == 0 {
		e.Command = nil
	}
	if len(e.Env) == 0 {
		e.Env = nil
	}
	if len(e.Headers) == 0 {
		e.Headers = nil
	}
	return e
}

// ApprovalKey returns the key under which the user's approval of the
// project server s, from the project in projectDir, is stored: the
// project's real path, ":", and EntryHash(s), so that any change to what
// the entry runs, is given or how it is checked asks again.
func ApprovalKey(projectDir string, s Server) string {
	dir, err := realPath(projectDir)
	if err != nil {
		dir = filepath.Clean(projectDir)
	}
	return dir + ":" + EntryHash(s)
}

// EntryHash returns the hex SHA-256 of a canonical encoding of what
// approving the project server s covers (command, url, env, headers, cwd
// and where its symbolic links lead, type, transport, TLS files,
// inheritEnv, name, oauth, sandbox, the registry identity, and pinning, start, deferTools, the
// timeouts, maxMessageBytes and protocolVersion where they are not the
// defaults): the part of its ApprovalKey that names the entry. A frontend
// is shown it with the entry and approves by it, so that an entry the
// project rewrote in between is not approved unseen.
func EntryHash(s Server) string {
	// Not canonjson: approvals already stored were keyed with this
	// encoding (encoding/json, HTML-escaped), and a new encoding would ask
	// the user to approve every project server again.
	b, _ := json.Marshal(approvalOf(s)) // cannot fail: strings, bools, numbers and string maps only
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// Approved reports whether the user approved the project server entry
// whose ApprovalKey is key.
func (c *Config) Approved(key string) bool {
	return slices.Contains(c.Approvals, key)
}

// IsTrusted reports whether the user trusts the project in dir. Paths are
// compared by their real paths, so a symbolic link to a trusted project is
// trusted and a look-alike path is not.
func (c *Config) IsTrusted(dir string) bool {
	real, err := realPath(dir)
	if err != nil {
		return false
	}
	return slices.ContainsFunc(c.Trusted, func(p string) bool {
		r, err := realPath(p)
		return err == nil && r == real
	})
}
