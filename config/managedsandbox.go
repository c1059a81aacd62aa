package config

import (
	"slices"
	"strings"
)

// HoldSandbox returns s held to the policy's sandbox minimum, and whether
// that changed it. A local server the minimum requires to be sandboxed
// runs in the default sandbox if its entry said "sandbox": false; a
// sandboxed server gets the minimum's denyRead paths, and its network
// within the ceiling of allowed domains: "all" becomes the ceiling's
// domains, a domain of its allow-list the ceiling does not cover is
// dropped, and an allow-list left empty becomes no network. Remote
// servers and a nil policy are left as they are.
func (m *Managed) HoldSandbox(s Server) (Server, bool) {
	if m == nil || s.Type != TypeLocal {
		return s, false
	}
	min := m.Sandbox
	required := min.Require == RequireSandboxAll || min.Require == RequireSandboxProject && s.Scope == ScopeProject
	changed := false
	if required && !s.Sandboxed() {
		s.Sandbox = &Sandbox{}
		changed = true
	}
	if !s.Sandboxed() || len(min.DenyRead) == 0 && min.AllowedDomains == nil {
		return s, changed
	}
	b := s.SandboxOf()
	if deny := appendNew(b.DenyRead, min.DenyRead); len(deny) != len(b.DenyRead) {
		b.DenyRead, changed = deny, true
	}
	if min.AllowedDomains != nil {
		network, domains := b.Net()
		switch network {
		case NetworkAll:
			b.Network, b.AllowedDomains, changed = NetworkDomains, slices.Clone(min.AllowedDomains), true
		case NetworkDomains:
			kept := slices.DeleteFunc(slices.Clone(domains), func(d string) bool { return !withinCeiling(d, min.AllowedDomains) })
			switch {
			case len(kept) == 0:
				b.Network, b.AllowedDomains, changed = NetworkNone, nil, true
			case len(kept) != len(domains):
				b.Network, b.AllowedDomains, changed = NetworkDomains, kept, true
			}
		}
	}
	if changed {
		s.Sandbox = &b
	}
	return s, changed
}

// withinCeiling reports whether the allowed domain d is covered by one of
// the ceiling's entries: the same entry, or a wildcard entry over a name
// (or narrower wildcard) it covers, on the same port.
func withinCeiling(d string, ceiling []string) bool {
	ad, err := ParseAllowedDomain(d)
	if err != nil {
		return false
	}
	for _, c := range ceiling {
		cd, err := ParseAllowedDomain(c)
		if err != nil || cd.Port != ad.Port {
			continue
		}
		switch {
		case cd.Addr.IsValid() || ad.Addr.IsValid():
			if cd.Addr == ad.Addr && cd.Host == ad.Host {
				return true
			}
		case cd.Wildcard:
			if ad.Wildcard && ad.Host == cd.Host || strings.HasSuffix(ad.Host, "."+cd.Host) {
				return true
			}
		case !ad.Wildcard && ad.Host == cd.Host:
			return true
		}
	}
	return false
}
