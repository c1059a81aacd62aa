package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSandboxKey(t *testing.T) {
	home, err := os.UserHomeDir()
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := Parse("/cfg/config.json", []byte(`{"mcp": {
		"sandbox": {"filesystem": {"allowWrite": ["~/shared"], "denyRead": ["/etc/secret"]}},
		"servers": [
			{"name": "plain", "command": "x"},
			{"name": "off", "command": "x", "sandbox": false},
			{"name": "more", "command": "x", "sandbox": {
				"filesystem": {"allowWrite": ["out"]},
				"network": {"allowedDomains": ["API.example.com", "*.example.org"]}
			}},
			{"name": "none", "command": "x", "sandbox": {"network": "none"}},
			{"name": "web", "url": "https://example.com/mcp"}
		]
	}}`))
	if err != nil {
		t.Fatal(err)
	}
	shared := filepath.Join(home, "shared")
	want := map[string]*Sandbox{
		"plain": {AllowWrite: []string{shared}, DenyRead: []string{"/etc/secret"}},
		"off":   {Off: true},
		"more": {AllowWrite: []string{shared, "/cfg/out"}, DenyRead: []string{"/etc/secret"},
			Network: NetworkDomains, AllowedDomains: []string{"api.example.com", "*.example.org"}},
		"none": {AllowWrite: []string{shared}, DenyRead: []string{"/etc/secret"}, Network: NetworkNone},
		"web":  nil,
	}
	for _, s := range cfg.MCP.Servers {
		if diff := cmp.Diff(want[s.Name], s.Sandbox); diff != "" {
			t.Errorf("%s's sandbox (-want +got):\n%s", s.Name, diff)
		}
		if got := s.Sandboxed(); got != (s.Name != "off" && s.Name != "web") {
			t.Errorf("%s.Sandboxed() = %v", s.Name, got)
		}
	}
	more, _ := cfg.Server("more")
	if n, d := more.SandboxOf().Net(); n != NetworkDomains || len(d) != 2 {
		t.Errorf("more's network: %s %v", n, d)
	}
	if n, d := (Sandbox{}).Net(); n != NetworkDomains || !cmp.Equal(d, DefaultAllowedDomains) {
		t.Errorf("the default network: %s %v", n, d)
	}
}

// Without mcp.sandbox, the user's servers run as before; a project's run
// sandboxed whatever the entry says but false.
func TestSandboxDefaultsByScope(t *testing.T) {
	data := []byte(`{"mcp": {"servers": [{"name": "a", "command": "x"}, {"name": "b", "command": "x", "sandbox": false}]}}`)
	for _, tc := range []struct {
		scope string
		want  map[string]bool
	}{
		{ScopeUser, map[string]bool{"a": false, "b": false}},
		{ScopeProject, map[string]bool{"a": true, "b": false}},
	} {
		cfg, err := parse("f.json", data, tc.scope, "/p")
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range cfg.MCP.Servers {
			if s.Sandboxed() != tc.want[s.Name] {
				t.Errorf("%s server %s: Sandboxed() = %v, want %v", tc.scope, s.Name, s.Sandboxed(), tc.want[s.Name])
			}
		}
	}
}

func TestSandboxKeyProblems(t *testing.T) {
	_, err := Parse("c.json", []byte(`{"mcp": {"servers": [
		{"name": "a", "command": "x", "sandbox": {"network": "some"}},
		{"name": "b", "command": "x", "sandbox": {"network": {"allowedDomains": ["https://x.com/"]}}},
		{"name": "c", "command": "x", "sandbox": {"filesystem": {"readOnly": ["/"]}}},
		{"name": "d", "url": "https://example.com/mcp", "sandbox": {}},
		{"name": "e", "command": "x", "sandbox": "yes"}
	]}}`))
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{
		`mcp.servers[0].sandbox.network (server "a"): want "none", "all" or {"allowedDomains": [...]}, not "some"`,
		`mcp.servers[1].sandbox.network.allowedDomains (server "b"): "https://x.com/" is not a domain`,
		`mcp.servers[2].sandbox.filesystem.readOnly (server "c"): unknown key`,
		`mcp.servers[3].sandbox (server "d"): only a local server runs in a sandbox`,
		`mcp.servers[4].sandbox (server "e"): want an object`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error does not say %q:\n%v", want, err)
		}
	}
}

// The approval of a project server covers its sandbox key: loosening it
// (or any change) asks again; an entry without the key hashes as before
// the key existed (TestEntryHashStable).
func TestEntryHashCoversSandbox(t *testing.T) {
	hash := func(entry string) string {
		t.Helper()
		cfg, err := parse("settings.json", []byte(`{"mcp": {"servers": [`+entry+`]}}`), ScopeProject, "/p")
		if err != nil {
			t.Fatal(err)
		}
		return EntryHash(cfg.MCP.Servers[0])
	}
	base := hash(`{"name": "fs", "command": ["npx", "-y", "pkg"], "env": {"A": "b"}, "timeout": 5000}`)
	seen := map[string]string{base: "no sandbox key"}
	for _, sb := range []string{`false`, `true`, `{"network": "all"}`, `{"network": "none"}`,
		`{"filesystem": {"allowWrite": ["/"]}}`, `{"network": {"allowedDomains": ["evil.example"]}}`} {
		h := hash(`{"name": "fs", "command": ["npx", "-y", "pkg"], "env": {"A": "b"}, "timeout": 5000, "sandbox": ` + sb + `}`)
		if prev, dup := seen[h]; dup {
			t.Errorf("sandbox %s hashes as %s does", sb, prev)
		}
		seen[h] = sb
	}
}

// "allowUnixSockets" sits beside filesystem and network; the user's
// mcp.sandbox allowing them allows them for every entry of the file; an
// approval covers the key, and one given before the key existed (false
// is left out of the hash) still holds.
func TestSandboxAllowUnixSockets(t *testing.T) {
	cfg, err := Parse("c.json", []byte(`{"mcp": {
		"sandbox": {"allowUnixSockets": true},
		"servers": [
			{"name": "a", "command": "x"},
			{"name": "b", "command": "x", "sandbox": {"network": "none", "allowUnixSockets": false}}
		]
	}}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range cfg.MCP.Servers {
		if !s.SandboxOf().AllowUnixSockets {
			t.Errorf("%s: unix sockets not allowed, want the user's default", s.Name)
		}
	}
	cfg, err = Parse("c.json", []byte(`{"mcp": {"servers": [{"name": "a", "command": "x", "sandbox": {"allowUnixSockets": true}}]}}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.MCP.Servers[0].SandboxOf(); !cmp.Equal(got, Sandbox{AllowUnixSockets: true}) {
		t.Errorf("the entry's own: %+v", got)
	}
	_, err = Parse("c.json", []byte(`{"mcp": {"servers": [{"name": "a", "command": "x", "sandbox": {"allowUnixSockets": "yes", "unix": true}}]}}`))
	for _, want := range []string{
		`mcp.servers[0].sandbox.allowUnixSockets (server "a"): want true or false`,
		`mcp.servers[0].sandbox.unix (server "a"): unknown key: want filesystem, network or allowUnixSockets`,
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("the error does not say %q:\n%v", want, err)
		}
	}
	hash := func(sb string) string {
		t.Helper()
		cfg, err := parse("settings.json", []byte(`{"mcp": {"servers": [{"name": "fs", "command": "x", "sandbox": `+sb+`}]}}`), ScopeProject, "/p")
		if err != nil {
			t.Fatal(err)
		}
		return EntryHash(cfg.MCP.Servers[0])
	}
	if hash(`{}`) != hash(`{"allowUnixSockets": false}`) || hash(`{}`) == hash(`{"allowUnixSockets": true}`) {
		t.Error("the approval's hash: false must hash as no key, true apart")
	}
}
