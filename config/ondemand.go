package config

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"path/filepath"
	"time"

	"github.com/freecode/freecode/internal/canonjson"
)

// The values of a server's "start".
const (
	// StartEager starts the server with FreeCode (the default).
	StartEager = "eager"
	// StartOnDemand registers the server's tools from its manifest (its
	// last tools/list, kept under the config file's directory) without
	// starting it, starts it at the first call of one of its tools or the
	// first tool_search that finds one, and stops it again after its idle
	// timeout without a call. A server with no manifest yet is started
	// once to learn its tools, and stopped as soon as they are listed.
	StartOnDemand = "onDemand"
)

// DefaultIdleTimeout is mcp.idleTimeout's default.
const DefaultIdleTimeout = 10 * time.Minute

// pinningOff is the value of "pinning" that turns pinning off.
const pinningOff = "off"

// OnDemand reports whether the entry says "start": "onDemand".
func (s Server) OnDemand() bool { return s.Start == StartOnDemand }

// IdleTimeoutOf returns how long s, started on demand, may run without a
// call: its own idleTimeout, else mcp.idleTimeout, else the default.
func (m MCP) IdleTimeoutOf(s Server) time.Duration {
	switch {
	case s.IdleTimeout > 0:
		return s.IdleTimeout
	case m.IdleTimeout > 0:
		return m.IdleTimeout
	}
	return DefaultIdleTimeout
}

// start decodes a server's "start": "eager" or "onDemand".
func (d *decoder) start(key, server string, raw json.RawMessage, dst *string) {
	switch string(bytes.TrimSpace(raw)) {
	case `"eager"`:
		*dst = StartEager
	case `"onDemand"`:
		*dst = StartOnDemand
	default:
		d.fail(key, server, `want "eager" or "onDemand"`)
	}
}

// pinning decodes a server's "pinning": "on" or "off".
func (d *decoder) pinning(key, server string, raw json.RawMessage, off *bool) {
	switch string(bytes.TrimSpace(raw)) {
	case `"on"`:
		*off = false
	case `"off"`:
		*off = true
	default:
		d.fail(key, server, `want "on" or "off"`)
	}
}

// serverIdentity is what a ManifestKey covers: which server this is,
// whatever its entry says.
type serverIdentity struct {
	Name    string `json:"name"`
	Scope   string `json:"scope"`
	Project string `json:"project,omitempty"`
}

// ManifestKey returns the hex SHA-256 that names the server s for the
// files FreeCode keeps about it (its manifest: its last tools/list and
// its pinned tool definitions): its identity, which is its scope and name
// and, for a project server, the project's real path (projectDir), so the
// same entry shipped by two repositories is two servers.
//
// An edit of the entry keeps the key: its command, env, url or anything
// else. Pins belong to the server, not to one way of running it, so that
// what awaits review, and what was accepted, is not forgotten when the
// entry changes (adding DEBUG=1 to its env would otherwise pin a poisoned
// definition as if first seen).
func ManifestKey(projectDir string, s Server) string {
	k := serverIdentity{Name: s.Name, Scope: s.Scope}
	if s.Scope == ScopeProject {
		k.Project = projectPath(projectDir)
	}
	b, _ := canonjson.AppendValue(nil, k) // cannot fail: strings only
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// legacyEntryKey is what the key of a manifest covered before manifests
// were keyed by identity (ManifestKey).
type legacyEntryKey struct {
	Entry   approvalEntry `json:"entry"`
	Scope   string        `json:"scope"`
	Project string        `json:"project,omitempty"`
}

// LegacyManifestKey returns the key a manifest of s had when manifests
// were keyed by a hash of the entry (command, url, env, headers, cwd,
// type, transport, TLS files, OAuth settings, inheritEnv, name, scope
// and project), so that such a file is found once and carried over to
// ManifestKey (manifest.Store.Adopt) instead of leaving the server with
// nothing pinned.
func LegacyManifestKey(projectDir string, s Server) string {
	k := legacyEntryKey{
		Entry: approvalEntry{
			Name: s.Name, Type: s.Type, Command: s.Command, Env: s.Env, Cwd: s.Cwd, InheritEnv: s.InheritEnv,
			URL: s.URL, Transport: s.Transport, Headers: s.Headers,
			CABundle: s.CABundle, ClientCert: s.ClientCert, ClientKey: s.ClientKey,
			OAuth: toFileOAuth(s.OAuth),
		},
		Scope: s.Scope,
	}
	if len(k.Entry.Command) == 0 {
		k.Entry.Command = nil
	}
	if len(k.Entry.Env) == 0 {
		k.Entry.Env = nil
	}
	if len(k.Entry.Headers) == 0 {
		k.Entry.Headers = nil
	}
	if s.Scope == ScopeProject {
		k.Project = projectPath(projectDir)
	}
	b, _ := canonjson.AppendValue(nil, k) // cannot fail: strings, bools and string maps only
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// projectPath is a project directory as keys hold it: its real path, or
// the cleaned one where it has none.
func projectPath(dir string) string {
	if real, err := realPath(dir); err == nil {
		return real
	}
	return filepath.Clean(dir)
}
