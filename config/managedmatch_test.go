package config

import (
	"testing"
)

func managedServer(s Server) Server { s.Scope = ScopeManaged; return s }

// installed returns s as `freecode mcp install` writes it: with a registry
// block naming name.
func installed(s Server, name string) Server {
	s.Registry = &Registry{Name: name, Version: "1.0.0", URL: DefaultRegistryURL}
	return s
}

func lookupOf(env map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := env[k]; return v, ok }
}

// reason is Check's reason, "" when s runs.
func reason(m *Managed, s Server, env map[string]string) string {
	if b := m.Check(s, lookupOf(env)); b != nil {
		return b.Reason
	}
	return ""
}

const policy = "blocked by your organization's policy: "

func TestCheck(t *testing.T) {
	const main = "/etc/freecode/managed-settings.json"
	const dropIn = "/etc/freecode/managed-settings.d/10-x.json"
	deny := func(i int, e ServerMatch) ServerMatch {
		e.List, e.Index, e.Path = keyDenied, i, main
		return e
	}
	allow := func(e ServerMatch) ServerMatch { e.List, e.Path = keyAllowed, dropIn; return e }
	files := []ManagedFile{{Path: main, Allowlist: true}, {Path: dropIn, Allowlist: true, Exclusive: true}}
	notAllowed := policy + "not in allowedMcpServers (" + main + ", " + dropIn + ")"

	tests := []struct {
		name string
		m    *Managed
		s    Server
		env  map[string]string
		want string // "" runs
	}{
		{"nil policy", nil, local("x", "x"), nil, ""},
		{"empty policy", &Managed{}, local("x", "x"), nil, ""},

		// The deny-list.
		{"deny by name", &Managed{Denied: []ServerMatch{deny(2, ServerMatch{Name: "x"})}}, remote("x", "https://a.example.com/"), nil,
			policy + "deniedMcpServers[2] in " + main},
		{"deny by name is exact", &Managed{Denied: []ServerMatch{deny(0, ServerMatch{Name: "x"})}}, local("X", "x"), nil, ""},
		{"deny by command", &Managed{Denied: []ServerMatch{deny(0, ServerMatch{Command: []string{"npx", "-y", "bad"}})}}, local("y", "npx", "-y", "bad"), nil,
			policy + "deniedMcpServers[0] in " + main},
		{"deny by command is exact", &Managed{Denied: []ServerMatch{deny(0, ServerMatch{Command: []string{"npx", "-y", "bad"}})}}, local("y", "npx", "bad"), nil, ""},
		{"deny by command, longer argv", &Managed{Denied: []ServerMatch{deny(0, ServerMatch{Command: []string{"npx", "bad"}})}}, local("y", "npx", "bad", "--flag"), nil, ""},
		{"deny by command skips remote", &Managed{Denied: []ServerMatch{deny(0, ServerMatch{Command: []string{"x"}})}}, remote("y", "https://x/"), nil, ""},
		{"deny by url", &Managed{Denied: []ServerMatch{deny(1, ServerMatch{URL: "https://*.evil.com/*"})}}, remote("y", "https://mcp.evil.com/mcp"), nil,
			policy + "deniedMcpServers[1] in " + main},
		{"deny by url skips local", &Managed{Denied: []ServerMatch{deny(0, ServerMatch{URL: "*"})}}, local("y", "x"), nil, ""},
		{"deny by url, any port", &Managed{Denied: []ServerMatch{deny(0, ServerMatch{URL: "https://*.evil.com/*"})}}, remote("y", "https://mcp.evil.com:8443/mcp"), nil,
			policy + "deniedMcpServers[0] in " + main},
		{"deny by url behind ${env:HOST}", &Managed{Denied: []ServerMatch{deny(0, ServerMatch{URL: "https://evil.example.com/*"})}},
			remote("y", "https://${env:HOST}/mcp"), map[string]string{"HOST": "evil.example.com"}, policy + "deniedMcpServers[0] in " + main},
		{"deny by url behind ${env:PATH_PART}", &Managed{Denied: []ServerMatch{deny(0, ServerMatch{URL: "https://mcp.example.com/admin"})}},
			remote("y", "https://mcp.example.com/${env:P}"), map[string]string{"P": "admin"}, policy + "deniedMcpServers[0] in " + main},
		{"deny by url as written, unset variable", &Managed{Denied: []ServerMatch{deny(0, ServerMatch{URL: "https://mcp.example.com/${env:P}"})}},
			remote("y", "https://mcp.example.com/${env:P}"), nil, policy + "deniedMcpServers[0] in " + main},
		{"deny entry expanded too", &Managed{Denied: []ServerMatch{deny(0, ServerMatch{Command: []string{"${env:HOME}/bin/srv"}})}},
			local("y", "/home/u/bin/srv"), map[string]string{"HOME": "/home/u"}, policy + "deniedMcpServers[0] in " + main},
		{"deny by command, server expanded", &Managed{Denied: []ServerMatch{deny(0, ServerMatch{Command: []string{"/opt/bad"}})}},
			local("y", "${env:BAD}"), map[string]string{"BAD": "/opt/bad"}, policy + "deniedMcpServers[0] in " + main},
		{"deny by registry: an entry without the block", &Managed{Denied: []ServerMatch{deny(0, ServerMatch{Registry: "io.github.a/b"})}}, local("b", "b"), nil, ""},
		{"deny by registry name", &Managed{Denied: []ServerMatch{deny(0, ServerMatch{Registry: "io.github.a/b"})}},
			installed(local("x", "x"), "io.github.a/b"), nil, policy + "deniedMcpServers[0] in " + main},
		{"deny by registry: another name", &Managed{Denied: []ServerMatch{deny(0, ServerMatch{Registry: "io.github.a/b"})}},
			installed(local("x", "x"), "io.github.a/c"), nil, ""},
		{"deny blocks managed", &Managed{Denied: []ServerMatch{deny(0, ServerMatch{Name: "x"})}}, managedServer(local("x", "x")), nil,
			policy + "deniedMcpServers[0] in " + main},
		{"deny without a file", &Managed{Denied: []ServerMatch{{Name: "x", Index: 3}}}, local("x", "x"), nil, policy + "deniedMcpServers[3]"},

		// Exclusive.
		{"exclusive", &Managed{Files: files, Exclusive: true}, local("x", "x"), nil,
			policy + "only its own servers may run (exclusive in " + dropIn + ")"},
		{"exclusive runs managed", &Managed{Files: files, Exclusive: true}, managedServer(local("x", "x")), nil, ""},
		{"exclusive without files", &Managed{Exclusive: true}, local("x", "x"), nil, policy + "only its own servers may run"},

		// The allow-list.
		{"empty allow-list", &Managed{Files: files, Allowed: []ServerMatch{}}, local("x", "x"), nil, notAllowed},
		{"empty allow-list runs managed", &Managed{Files: files, Allowed: []ServerMatch{}}, managedServer(remote("x", "https://x/")), nil, ""},
		{"allowed by name", &Managed{Allowed: []ServerMatch{allow(ServerMatch{Name: "x"})}}, local("x", "anything"), nil, ""},
		{"not allowed by name", &Managed{Files: files, Allowed: []ServerMatch{allow(ServerMatch{Name: "x"})}}, local("y", "x"), nil, notAllowed},
		{"allow reason from entries", &Managed{Allowed: []ServerMatch{allow(ServerMatch{Name: "x"})}}, local("y", "x"), nil,
			policy + "not in allowedMcpServers (" + dropIn + ")"},
		{"allow reason, nothing known", &Managed{Allowed: []ServerMatch{}}, local("y", "x"), nil, policy + "not in allowedMcpServers"},
		{"allowed by command", &Managed{Allowed: []ServerMatch{allow(ServerMatch{Command: []string{"npx", "-y", "ok"}})}}, local("y", "npx", "-y", "ok"), nil, ""},
		{"command entries: a name is not enough", &Managed{Files: files, Allowed: []ServerMatch{allow(ServerMatch{Name: "x"}), allow(ServerMatch{Command: []string{"ok"}})}},
			local("x", "other"), nil, notAllowed},
		{"command entries: remote by name", &Managed{Allowed: []ServerMatch{allow(ServerMatch{Name: "x"}), allow(ServerMatch{Command: []string{"ok"}})}},
			remote("x", "https://x.example.com/"), nil, ""},
		{"url entries: a name is not enough", &Managed{Files: files, Allowed: []ServerMatch{allow(ServerMatch{Name: "x"}), allow(ServerMatch{URL: "https://ok/*"})}},
			remote("x", "https://other.example.com/"), nil, notAllowed},
		{"url entries: local by name", &Managed{Allowed: []ServerMatch{allow(ServerMatch{Name: "x"}), allow(ServerMatch{URL: "https://ok/*"})}},
			local("x", "anything"), nil, ""},
		{"allowed by url", &Managed{Allowed: []ServerMatch{allow(ServerMatch{URL: "https://*.example.com/*"})}}, remote("y", "https://mcp.example.com/mcp"), nil, ""},
		{"url entries only: local blocked", &Managed{Files: files, Allowed: []ServerMatch{allow(ServerMatch{URL: "https://*.example.com/*"})}}, local("y", "x"), nil, notAllowed},
		{"allowed by expanded url", &Managed{Allowed: []ServerMatch{allow(ServerMatch{URL: "https://mcp.example.com/t/acme"})}},
			remote("y", "https://mcp.example.com/t/${env:T}"), map[string]string{"T": "acme"}, ""},
		{"url that does not expand", &Managed{Files: files, Allowed: []ServerMatch{allow(ServerMatch{URL: "https://mcp.example.com/*"})}},
			remote("y", "https://mcp.example.com/t/${env:T}"), nil, notAllowed},
		{"allow entries are literal", &Managed{Files: files, Allowed: []ServerMatch{allow(ServerMatch{URL: "https://${env:H}/*"})}},
			remote("y", "https://mine.example.com/"), map[string]string{"H": "mine.example.com"}, notAllowed},
		{"command must match written and expanded", &Managed{Files: files, Allowed: []ServerMatch{allow(ServerMatch{Command: []string{"/opt/ok"}})}},
			local("y", "${env:X}"), map[string]string{"X": "/opt/ok"}, notAllowed},
		{"allowed by registry: an entry without the block", &Managed{Files: files, Allowed: []ServerMatch{allow(ServerMatch{Registry: "io.github.a/b"})}}, local("b", "b"), nil, notAllowed},
		{"allowed by registry name", &Managed{Files: files, Allowed: []ServerMatch{allow(ServerMatch{Registry: "io.github.a/b"})}},
			installed(local("x", "x"), "io.github.a/b"), nil, ""},
		{"allowed by registry: another name", &Managed{Files: files, Allowed: []ServerMatch{allow(ServerMatch{Registry: "io.github.a/b"})}},
			installed(local("x", "x"), "io.github.a/c"), nil, notAllowed},
		{"registry name is a name: url entries still gate remotes", &Managed{Files: files, Allowed: []ServerMatch{allow(ServerMatch{Registry: "io.github.a/b"}), allow(ServerMatch{URL: "https://ok.example.com/*"})}},
			installed(remote("x", "https://x.example.com/"), "io.github.a/b"), nil, notAllowed},
		{"invalid entry allows nothing", &Managed{Files: files, Allowed: []ServerMatch{allow(ServerMatch{Name: "x", Invalid: true})}}, local("x", "x"), nil, notAllowed},
		{"invalid url entry still gates names", &Managed{Files: files, Allowed: []ServerMatch{allow(ServerMatch{Name: "x"}), allow(ServerMatch{URL: "5", Invalid: true})}},
			remote("x", "https://x.example.com/"), nil, notAllowed},
		{"entry with two fields needs both", &Managed{Files: files, Allowed: []ServerMatch{allow(ServerMatch{Name: "x", URL: "https://*.example.com/*"})}},
			remote("y", "https://x.example.com/"), nil, notAllowed},
		{"deny wins over allow", &Managed{Allowed: []ServerMatch{allow(ServerMatch{Name: "x"})}, Denied: []ServerMatch{deny(0, ServerMatch{Name: "x"})}},
			local("x", "x"), nil, policy + "deniedMcpServers[0] in " + main},
		{"deny wins over exclusive's managed", &Managed{Exclusive: true, Denied: []ServerMatch{deny(0, ServerMatch{URL: "https://x/*"})}},
			managedServer(remote("x", "https://x/mcp")), nil, policy + "deniedMcpServers[0] in " + main},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := reason(tc.m, tc.s, tc.env); got != tc.want {
				t.Errorf("Check = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestCheckMessage(t *testing.T) {
	m := &Managed{Allowed: []ServerMatch{}, Message: "ask #it-help"}
	b := m.Check(local("x", "x"), nil)
	if b == nil || b.Message != "ask #it-help" || b.String() != policy+"not in allowedMcpServers — ask #it-help" {
		t.Errorf("Check = %+v, want the policy's message", b)
	}
}

func TestGlob(t *testing.T) {
	tests := []struct {
		pattern, s string
		want       bool
	}{
		{"", "", true},
		{"", "a", false},
		{"*", "", true},
		{"*", "anything at all", true},
		{"**", "x", true},
		{"a*", "a", true},
		{"*a", "ba", true},
		{"*a", "ab", false},
		{"a*b*c", "aXbYc", true},
		{"a*b*c", "aXbYcZ", false},
		{"a*b", "abab", true},
		{"*.example.com", "example.com", false},
		{"*.example.com", "a.b.example.com", true},
		{"a?c", "abc", false}, // only * is special
		{"a[b]c", "a[b]c", true},
		{"*a*a*a*a*a*a*a*b", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", false},
	}
	for _, tc := range tests {
		if got := glob(tc.pattern, tc.s); got != tc.want {
			t.Errorf("glob(%q, %q) = %v, want %v", tc.pattern, tc.s, got, tc.want)
		}
	}
}

func TestMatchURL(t *testing.T) {
	tests := []struct {
		pattern, url string
		allow, deny  bool
	}{
		{"https://mcp.example.com/*", "https://mcp.example.com/api", true, true},
		{"https://mcp.example.com/*", "https://mcp.example.com", true, true},
		{"https://mcp.example.com", "https://mcp.example.com/any/path?q=1", true, true},
		{"https://Mcp.Example.com/*", "https://mcp.example.com/api", true, true},
		{"https://mcp.example.com/*", "HTTPS://MCP.EXAMPLE.COM./api", true, true},
		{"https://mcp.example.com./*", "https://mcp.example.com/api", true, true},
		{"https://mcp.example.com/*", "https://mcp.example.com:443/api", true, true},
		{"https://mcp.example.com:443/*", "https://mcp.example.com/api", true, true},
		{"https://mcp.example.com/*", "https://mcp.example.com:8443/api", false, true},
		{"https://mcp.example.com:*/*", "https://mcp.example.com:8443/api", true, true},
		{"http://localhost:*/*", "http://localhost:3000/mcp", true, true},
		{"http://localhost:*/*", "http://localhost/mcp", true, true},
		{"*://mcp.example.com/*", "http://mcp.example.com/mcp", true, true},
		{"https://*.example.com/*", "https://example.com/", false, false},
		{"https://*.example.com/*", "https://evil.com/x.example.com/", false, false},
		{"https://*.example.com/*", "https://evil.com?x.example.com", false, false},
		{"https://mcp.example.com/*", "https://mcp.example.com@evil.com/", false, false},
		{"https://mcp.example.com/*", "https://evil.com@mcp.example.com/", true, true},
		{"https://mcp.example.com/*", "https://mcp.example.com/x#frag", true, true},
		{"https://mcp.example.com/API/*", "https://mcp.example.com/api/x", false, false},
		{"https://mcp.example.com/mcp", "https://mcp.example.com/mcp", true, true},
		{"https://mcp.example.com/mcp", "https://mcp.example.com/mcp/", false, true},
		{"https://mcp.example.com/mcp", "https://mcp.example.com/mcp?x=1", false, true},
		{"https://mcp.example.com/mcp", "https://mcp.example.com/%6Dcp", false, true},
		{"https://mcp.example.com/admin", "https://mcp.example.com/api/../admin", false, true},
		{"https://mcp.example.com/api/*", "https://mcp.example.com/api/../admin", false, true},
		{"https://mcp.example.com/api/*", "https://mcp.example.com/api/%2e%2e/admin", false, true},
		{"https://mcp.example.com/api/*", "https://mcp.example.com/api/..%5cadmin", false, true},
		{"https://mcp.example.com/api/*", `https://mcp.example.com/api/..\admin`, false, true},
		{"https://[::1]:*/*", "https://[::1]:8080/mcp", true, true},
		{"mcp.example.com", "https://mcp.example.com/", false, false},
		{"*mcp.example.com/*", "https://mcp.example.com/x", true, true},
		{"https://%65vil.com/*", "https://%65vil.com/", false, true},
	}
	for _, tc := range tests {
		if got := matchURL(tc.pattern, tc.url, false); got != tc.allow {
			t.Errorf("allow: matchURL(%q, %q) = %v, want %v", tc.pattern, tc.url, got, tc.allow)
		}
		if got := matchURL(tc.pattern, tc.url, true); got != tc.deny {
			t.Errorf("deny: matchURL(%q, %q) = %v, want %v", tc.pattern, tc.url, got, tc.deny)
		}
	}
}
