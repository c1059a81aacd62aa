package config

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Sandbox networks: what a sandboxed server may reach.
const (
	// NetworkDomains (the default) lets the server reach the domains of
	// its allow-list, through FreeCode's filtering proxy, and nothing else.
	NetworkDomains = "domains"
	NetworkNone    = "none" // no network at all, not even the host's loopback
	NetworkAll     = "all"  // the host's network, unfiltered
)

// DefaultAllowedDomains is the allow-list of a sandbox that names none:
// npm's registry, so that npx can install the package it runs.
var DefaultAllowedDomains = []string{"registry.npmjs.org"}

// Sandbox is a local server's "sandbox" key, or mcp.sandbox, as written:
//
//	"sandbox": false                    run unsandboxed
//	"sandbox": true                     the default sandbox
//	"sandbox": {
//	  "filesystem": {"allowWrite": ["~/notes"], "allowRead": ["/tmp/data"], "denyRead": ["~/.config/gh"]},
//	  "network": "none" | "all" | {"allowedDomains": ["api.example.com", "127.0.0.1:5432"]},
//	  "allowUnixSockets": true
//	}
//
// The system is read-only, the server's cwd, npm's cache and a private
// /tmp are writable, and a list of secrets is unreadable (see package
// mcp/sandbox); AllowWrite and DenyRead add to that. Network "" is
// NetworkDomains with DefaultAllowedDomains.
type Sandbox struct {
	Off        bool     // "sandbox": false
	AllowWrite []string // absolute, ~ expanded
	DenyRead   []string // absolute, ~ expanded
	// AllowRead are paths the server may read where the sandbox would
	// hide them by having its own empty copy of their directory (/tmp,
	// /run/user); everywhere else it reads what the system holds.
	AllowRead      []string // absolute, ~ expanded
	Network        string   // "", NetworkNone, NetworkAll or NetworkDomains
	AllowedDomains []string // with NetworkDomains
	// AllowUnixSockets lets the server open unix sockets (socket(AF_UNIX)),
	// which the sandbox refuses by default: the network namespace does not
	// cover them, so they reach the host's D-Bus, nscd, docker and the like
	// wherever their socket is visible.
	AllowUnixSockets bool
}

// Sandboxed reports whether s runs in a sandbox: one whose entry has a
// sandbox block that is not false, and every project server whose entry
// does not say "sandbox": false (the user's mcp.sandbox was merged into
// each of the user's entries when the file was read).
func (s Server) Sandboxed() bool {
	if s.Type != TypeLocal {
		return false
	}
	if s.Sandbox != nil {
		return !s.Sandbox.Off
	}
	return s.Scope == ScopeProject
}

// SandboxOf returns the sandbox s runs in (see Sandboxed), defaults not
// filled in: that is package mcp/sandbox's job.
func (s Server) SandboxOf() Sandbox {
	if s.Sandbox == nil {
		return Sandbox{}
	}
	return s.Sandbox.clone()
}

// Net returns the sandbox's network, "" read as NetworkDomains, and its
// allow-list, DefaultAllowedDomains when it names none.
func (b Sandbox) Net() (string, []string) {
	switch b.Network {
	case NetworkNone, NetworkAll:
		return b.Network, nil
	}
	if b.AllowedDomains == nil {
		return NetworkDomains, slices.Clone(DefaultAllowedDomains)
	}
	return NetworkDomains, slices.Clone(b.AllowedDomains)
}

func (b Sandbox) clone() Sandbox {
	b.AllowWrite = slices.Clone(b.AllowWrite)
	b.DenyRead = slices.Clone(b.DenyRead)
	b.AllowRead = slices.Clone(b.AllowRead)
	b.AllowedDomains = slices.Clone(b.AllowedDomains)
	return b
}

// equalSandbox compares two sandbox keys, nil and absent alike.
func equalSandbox(a, b *Sandbox) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Off == b.Off && slices.Equal(a.AllowWrite, b.AllowWrite) && slices.Equal(a.DenyRead, b.DenyRead) && slices.Equal(a.AllowRead, b.AllowRead) &&
		a.Network == b.Network && slices.Equal(a.AllowedDomains, b.AllowedDomains) &&
		a.AllowUnixSockets == b.AllowUnixSockets
}

// withDefaults is the entry's block b over the user's mcp.sandbox def:
// the path lists added up, the entry's network if it names one, unix
// sockets allowed if either allows them.
func (b *Sandbox) withDefaults(def *Sandbox) *Sandbox {
	if def == nil || def.Off {
		return b
	}
	if b == nil {
		c := def.clone()
		return &c
	}
	if b.Off {
		return b
	}
	out := b.clone()
	out.AllowWrite = appendNew(def.AllowWrite, out.AllowWrite)
	out.DenyRead = appendNew(def.DenyRead, out.DenyRead)
	out.AllowRead = appendNew(def.AllowRead, out.AllowRead)
	out.AllowUnixSockets = out.AllowUnixSockets || def.AllowUnixSockets
	if out.Network == "" && out.AllowedDomains == nil {
		out.Network, out.AllowedDomains = def.Network, slices.Clone(def.AllowedDomains)
	}
	return &out
}

func appendNew(base, more []string) []string {
	out := slices.Clone(base)
	for _, m := range more {
		if !slices.Contains(out, m) {
			out = append(out, m)
		}
	}
	return out
}

// sandboxes refuses a sandbox key on a remote entry and merges
// mcp.sandbox into every local entry of the user's file. A project's
// entries get the built-in defaults only: a repository's file has no say
// over the user's other servers, and the user's mcp.sandbox is not part of
// what a project server's approval covers.
func (d *decoder) sandboxes(cfg *Config, scope string) {
	for i, s := range cfg.MCP.Servers {
		switch {
		case s.Type == TypeRemote && s.Sandbox != nil && !s.Sandbox.Off:
			d.fail(d.entries[i]+".sandbox", s.Name, "only a local server runs in a sandbox: a remote one is a URL, not a process")
		case s.Type == TypeLocal && scope == ScopeUser:
			cfg.MCP.Servers[i].Sandbox = s.Sandbox.withDefaults(cfg.MCP.Sandbox)
		}
	}
}

// sandbox decodes a "sandbox" key: false, true or an object.
func (d *decoder) sandbox(key, server string, raw json.RawMessage, baseDir string) *Sandbox {
	var on bool
	if json.Unmarshal(raw, &on) == nil {
		return &Sandbox{Off: !on}
	}
	m, ok := d.object(key, server, raw)
	if !ok {
		return nil
	}
	b := &Sandbox{}
	for k, v := range m {
		if isNull(v) {
			continue
		}
		fk := key + "." + k
		switch k {
		case "filesystem":
			fs, ok := d.object(fk, server, v)
			if !ok {
				continue
			}
			for fkey, fv := range fs {
				switch fkey {
				case "allowWrite":
					b.AllowWrite = d.paths(fk+"."+fkey, server, fv, baseDir)
				case "denyRead":
					b.DenyRead = d.paths(fk+"."+fkey, server, fv, baseDir)
				case "allowRead":
					b.AllowRead = d.paths(fk+"."+fkey, server, fv, baseDir)
				default:
					d.fail(fk+"."+fkey, server, "unknown key: want allowWrite, allowRead or denyRead")
				}
			}
		case "network":
			var s string
			if json.Unmarshal(v, &s) == nil {
				if s != NetworkNone && s != NetworkAll {
					d.fail(fk, server, `want "none", "all" or {"allowedDomains": [...]}, not %q`, s)
				}
				b.Network = s
				continue
			}
			nm, ok := d.object(fk, server, v)
			if !ok {
				continue
			}
			b.Network = NetworkDomains
			b.AllowedDomains = []string{}
			if dv, ok := nm["allowedDomains"]; ok {
				for _, dom := range d.strings(fk+".allowedDomains", server, dv) {
					if _, err := ParseAllowedDomain(dom); err != nil {
						d.fail(fk+".allowedDomains", server, "%v", err)
						continue
					}
					b.AllowedDomains = append(b.AllowedDomains, strings.ToLower(dom))
				}
			}
		case "allowUnixSockets":
			d.boolean(fk, server, v, &b.AllowUnixSockets)
		default:
			d.fail(fk, server, "unknown key: want filesystem, network or allowUnixSockets")
		}
	}
	return b
}

// paths decodes a list of paths: absolute, "~/…", or relative to the file.
func (d *decoder) paths(key, server string, raw json.RawMessage, baseDir string) []string {
	var out []string
	for _, p := range d.strings(key, server, raw) {
		if p == "" {
			d.fail(key, server, "an empty path")
			continue
		}
		out = append(out, filepath.Clean(resolve(baseDir, p)))
	}
	return out
}

// AllowedDomain is an entry of a sandbox's allowedDomains, parsed:
//
//	api.example.com           the name, on ports 80 and 443
//	*.example.com             the names below example.com (not itself)
//	api.example.com:8443      the name on that port only
//	*.example.com:8443        the names below example.com, on that port
//	10.0.0.5, ::1             the address, on ports 80 and 443
//	127.0.0.1:5432, [::1]:80  the address on that port only
//
// A name lets the sandbox's proxy reach the public addresses it resolves
// to; an address entry is how a user allows one that is not public
// (loopback, private, link-local…) on purpose, whether the server names
// the address or a listed name resolves to it.
type AllowedDomain struct {
	Host     string     // a host name, lower case, without "*."; "" for an address
	Wildcard bool       // Host's subdomains, not Host itself
	Addr     netip.Addr // an exact address (IPv4-mapped ones as IPv4); the zero Addr for a name
	Port     uint16     // 0 for ports 80 and 443
}

// ParseAllowedDomain parses an entry of allowedDomains: a host name, or
// "*." and one, or an IP address (IPv6 in brackets when a port follows),
// each with ":port" or without; no scheme, path or user.
func ParseAllowedDomain(s string) (AllowedDomain, error) {
	bad := func(why string) (AllowedDomain, error) {
		return AllowedDomain{}, fmt.Errorf("%q is not a domain: %s; want a host name such as api.example.com, *.example.com, api.example.com:8443, or an IP address such as 127.0.0.1:5432 or [::1]:8080", s, why)
	}
	if strings.ContainsAny(s, "/@ ") {
		return bad("no scheme, path or user")
	}
	var a AllowedDomain
	host, port, hasPort := strings.ToLower(s), "", false
	if rest, ok := strings.CutPrefix(host, "["); ok {
		inner, after, ok := strings.Cut(rest, "]")
		if !ok {
			return bad("no closing ]")
		}
		if port, hasPort = strings.CutPrefix(after, ":"); !hasPort && after != "" {
			return bad("text after ]")
		}
		if addr, err := netip.ParseAddr(inner); err != nil || !addr.Is6() {
			return bad("brackets hold an IPv6 address")
		}
		host = inner
	} else if _, err := netip.ParseAddr(host); err != nil {
		// Not an address as it is: a name or an IPv4 address, with a
		// port or not. An IPv6 address with a port wants brackets.
		if strings.Count(host, ":") > 1 {
			return bad("an IPv6 address with a port is written [::1]:8080")
		}
		host, port, hasPort = strings.Cut(host, ":")
	}
	if hasPort {
		n, err := strconv.ParseUint(port, 10, 16)
		if err != nil || n == 0 {
			return bad("the port is not a number from 1 to 65535")
		}
		a.Port = uint16(n)
	}
	if addr, err := netip.ParseAddr(host); err == nil {
		if addr.Zone() != "" {
			return bad("an address with a zone")
		}
		a.Addr = addr.Unmap()
		return a, nil
	}
	if h, ok := strings.CutPrefix(host, "*."); ok {
		if _, err := netip.ParseAddr(h); err == nil {
			return bad("*. goes before a name, not an address")
		}
		a.Wildcard, host = true, h
	}
	if host == "" || strings.ContainsAny(host, "/:*@[]% ") || strings.HasPrefix(host, ".") || strings.HasSuffix(host, ".") {
		return bad("not a host name")
	}
	a.Host = host
	return a, nil
}

// fileSandbox is a sandbox key as a project server's approval hashes it.
type fileSandbox struct {
	Off            bool     `json:"off,omitempty"`
	AllowWrite     []string `json:"allowWrite,omitempty"`
	DenyRead       []string `json:"denyRead,omitempty"`
	Network        string   `json:"network,omitempty"`
	AllowedDomains []string `json:"allowedDomains,omitempty"`
	// Omitted when false, so that an approval given before the key
	// existed still holds.
	AllowUnixSockets bool `json:"allowUnixSockets,omitempty"`
	// Omitted when empty, for the same reason.
	AllowRead []string `json:"allowRead,omitempty"`
}

func toFileSandbox(b *Sandbox) *fileSandbox {
	if b == nil {
		return nil
	}
	return &fileSandbox{Off: b.Off, AllowWrite: b.AllowWrite, DenyRead: b.DenyRead, Network: b.Network, AllowedDomains: b.AllowedDomains,
		AllowUnixSockets: b.AllowUnixSockets, AllowRead: b.AllowRead}
}
