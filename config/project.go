package config

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io/fs"
	"path/filepath"
	"slices"
)

// ProjectSettingsPath returns the path of the project settings file of the
// project in dir: <dir>/.freecode/settings.json.
func ProjectSettingsPath(dir string) string {
	return filepath.Join(dir, ".freecode", "settings.json")
}

// LoadProject reads the MCP servers a project ships in
// <dir>/.freecode/settings.json (the same mcp.servers key as the config
// file). They have Scope "project" and relative paths resolve against dir.
// A missing file means no servers. Such a server must not start before the
// user approved it: see ApprovalKey and Config.Approved.
func LoadProject(dir string) ([]Server, error) {
	path := ProjectSettingsPath(dir)
	data, err := ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	cfg, err := parse(path, data, ScopeProject, dir)
	if err != nil {
		return nil, err
	}
	return cfg.MCP.Servers, nil
}

// approvalEntry is what an approval covers: everything that decides what
// runs, where it connects and what it is given. Timeouts and the enabled
// flag are left out: changing them does not ask again.
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
}

// ApprovalKey returns the key under which the user's approval of the
// project server s, from the project in projectDir, is stored: the
// project's real path, ":", and EntryHash(s), so that any change to what
// the entry runs or is given asks again.
func ApprovalKey(projectDir string, s Server) string {
	dir, err := realPath(projectDir)
	if err != nil {
		dir = filepath.Clean(projectDir)
	}
	return dir + ":" + EntryHash(s)
}

// EntryHash returns the hex SHA-256 of a canonical encoding of what
// approving the project server s covers (command, url, env, headers, cwd,
// type, transport, TLS files, inheritEnv, name, oauth): the part of its
// ApprovalKey that names the entry. A frontend is shown it with the entry
// and approves by it, so that an entry the project rewrote in between is
// not approved unseen.
func EntryHash(s Server) string {
	e := approvalEntry{
		Name: s.Name, Type: s.Type, Command: s.Command, Env: s.Env, Cwd: s.Cwd, InheritEnv: s.InheritEnv,
		URL: s.URL, Transport: s.Transport, Headers: s.Headers,
		CABundle: s.CABundle, ClientCert: s.ClientCert, ClientKey: s.ClientKey,
		OAuth: toFileOAuth(s.OAuth),
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
	// Not canonjson: approvals already stored were keyed with this
	// encoding (encoding/json, HTML-escaped), and a new encoding would ask
	// the user to approve every project server again.
	b, _ := json.Marshal(e) // cannot fail: strings, bools and string maps only
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
