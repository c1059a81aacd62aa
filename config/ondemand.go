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

// entryKey is what an EntryKey covers: what an approval covers (what
// runs, where it connects, what it is given), and where the entry comes
// from.
type entryKey struct {
	Entry   approvalEntry `json:"entry"`
	Scope   string        `json:"scope"`
	Project string        `json:"project,omitempty"`
}

// EntryKey returns the hex SHA-256 that names the server entry s for the
// files FreeCode keeps about it (its manifest and pinned tools): a change
// of its command, url, env, headers, cwd, type, transport, TLS files,
// OAuth settings, inheritEnv or name makes it a different server, as it
// does for a project server's approval (ApprovalKey). A project server's
// key also holds the project's real path (projectDir), so the same entry
// shipped by two repositories is two servers. Timeouts, enabled, start,
// pinning and deferTools are left out: they change how the server is
// run, not which.
func EntryKey(projectDir string, s Server) string {
	k := entryKey{
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
		dir, err := realPath(projectDir)
		if err != nil {
			dir = filepath.Clean(projectDir)
		}
		k.Project = dir
	}
	b, _ := canonjson.AppendValue(nil, k) // cannot fail: strings, bools and string maps only
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
