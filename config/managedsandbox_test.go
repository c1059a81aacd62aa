package config

import (
	"slices"
	"testing"
)

func TestHoldSandbox(t *testing.T) {
	local := func(scope string, sb *Sandbox) Server {
		return Server{Name: "s", Type: TypeLocal, Command: []string{"x"}, Scope: scope, Sandbox: sb}
	}
	for _, tc := range []struct {
		name    string
		min     ManagedSandbox
		in      Server
		changed bool
		sandbox bool     // Sandboxed() after
		network string   // Net()'s network after, if sandboxed
		domains []string // Net()'s domains after
		deny    []string
	}{
		{name: "no minimum", in: local(ScopeUser, nil), sandbox: false},
		{name: "all required", min: ManagedSandbox{Require: RequireSandboxAll}, in: local(ScopeUser, &Sandbox{Off: true}), changed: true, sandbox: true, network: NetworkDomains, domains: DefaultAllowedDomains},
		{name: "project required leaves user", min: ManagedSandbox{Require: RequireSandboxProject}, in: local(ScopeUser, &Sandbox{Off: true}), sandbox: false},
		{name: "project required", min: ManagedSandbox{Require: RequireSandboxProject}, in: local(ScopeProject, &Sandbox{Off: true}), changed: true, sandbox: true, network: NetworkDomains, domains: DefaultAllowedDomains},
		{name: "network all capped", min: ManagedSandbox{AllowedDomains: []string{"api.example.com"}}, in: local(ScopeUser, &Sandbox{Network: NetworkAll}), changed: true, sandbox: true, network: NetworkDomains, domains: []string{"api.example.com"}},
		{name: "domains outside dropped", min: ManagedSandbox{AllowedDomains: []string{"*.example.com", "10.0.0.1:5432"}}, in: local(ScopeUser, &Sandbox{AllowedDomains: []string{"a.example.com", "evil.test", "*.b.example.com", "10.0.0.1:5432", "10.0.0.1"}}), changed: true, sandbox: true, network: NetworkDomains, domains: []string{"a.example.com", "*.b.example.com", "10.0.0.1:5432"}},
		{name: "default registry outside ceiling", min: ManagedSandbox{AllowedDomains: []string{"api.example.com"}}, in: local(ScopeProject, nil), changed: true, sandbox: true, network: NetworkNone},
		{name: "default registry inside ceiling", min: ManagedSandbox{AllowedDomains: []string{"registry.npmjs.org"}}, in: local(ScopeProject, nil), sandbox: true, network: NetworkDomains, domains: DefaultAllowedDomains},
		{name: "none stays none", min: ManagedSandbox{AllowedDomains: []string{"x.test"}}, in: local(ScopeUser, &Sandbox{Network: NetworkNone}), sandbox: true, network: NetworkNone},
		{name: "wildcard not within exact", min: ManagedSandbox{AllowedDomains: []string{"example.com"}}, in: local(ScopeUser, &Sandbox{AllowedDomains: []string{"*.example.com"}}), changed: true, sandbox: true, network: NetworkNone},
		{name: "deny read added", min: ManagedSandbox{DenyRead: []string{"/secret"}}, in: local(ScopeUser, &Sandbox{DenyRead: []string{"/a"}}), changed: true, sandbox: true, network: NetworkDomains, domains: DefaultAllowedDomains, deny: []string{"/a", "/secret"}},
		{name: "unsandboxed untouched by ceiling", min: ManagedSandbox{AllowedDomains: []string{"x.test"}, DenyRead: []string{"/secret"}}, in: local(ScopeUser, nil), sandbox: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := &Managed{Sandbox: tc.min}
			out, changed := m.HoldSandbox(tc.in)
			if changed != tc.changed {
				t.Errorf("changed = %v, want %v", changed, tc.changed)
			}
			if out.Sandboxed() != tc.sandbox {
				t.Fatalf("Sandboxed() = %v, want %v", out.Sandboxed(), tc.sandbox)
			}
			if !tc.sandbox {
				return
			}
			b := out.SandboxOf()
			network, domains := b.Net()
			if network != tc.network || !slices.Equal(domains, tc.domains) {
				t.Errorf("Net() = %q %q, want %q %q", network, domains, tc.network, tc.domains)
			}
			if tc.deny != nil && !slices.Equal(b.DenyRead, tc.deny) {
				t.Errorf("DenyRead = %q, want %q", b.DenyRead, tc.deny)
			}
		})
	}
	var nilPolicy *Managed
	if _, changed := nilPolicy.HoldSandbox(local(ScopeProject, nil)); changed {
		t.Error("a nil policy changed a server")
	}
	if in := local(ScopeProject, &Sandbox{AllowedDomains: []string{"a.test"}}); true {
		(&Managed{Sandbox: ManagedSandbox{AllowedDomains: []string{"b.test"}}}).HoldSandbox(in)
		if !slices.Equal(in.Sandbox.AllowedDomains, []string{"a.test"}) {
			t.Error("HoldSandbox changed its argument's sandbox")
		}
	}
}
