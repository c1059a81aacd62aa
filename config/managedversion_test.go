package config

import (
	"strings"
	"testing"
)

func TestVersionRange(t *testing.T) {
	for _, tc := range []struct {
		r       string
		in, out []string
	}{
		{">=1.2.0 <2.0.0", []string{"1.2.0", "1.10.3", "1.99.0"}, []string{"1.1.9", "2.0.0", "2.0.0-rc.1", "1.5.0-beta", "0.9", "latest", ""}},
		{"1.4.2", []string{"1.4.2", "v1.4.2", "1.4.2+build.5"}, []string{"1.4.3", "1.4.2-beta"}},
		{"=1.4.2 || >=2.1", []string{"1.4.2", "2.1.0", "3.0.0"}, []string{"2.0.9", "2.1.0-alpha", "1.4.1"}},
		{"<2.0.0", []string{"1.0.0"}, []string{"2.0.0", "2.0.0-alpha"}},
		// Prereleases by their identifiers: numbers numerically, before words.
		{">1.0.0-alpha.2 <1.0.0", []string{"1.0.0-alpha.10", "1.0.0-beta", "1.0.0-alpha.beta"}, []string{"1.0.0-alpha.1", "1.0.0-alpha", "1.0.0"}},
		{">=2026.8.31", []string{"2026.8.31", "2026.10.1"}, []string{"2026.8.30"}},
	} {
		r, err := parseVersionRange(tc.r)
		if err != nil {
			t.Fatalf("%q: %v", tc.r, err)
		}
		for _, v := range tc.in {
			if !r.contains(v, false) {
				t.Errorf("%q does not contain %q", tc.r, v)
			}
		}
		for _, v := range tc.out {
			if r.contains(v, false) {
				t.Errorf("%q contains %q", tc.r, v)
			}
		}
	}
	// Compared plainly (a deny-list's), a prerelease is in by its order.
	if r, _ := parseVersionRange("<2.0.0"); !r.contains("2.0.0-alpha", true) || r.contains("2.0.0-alpha", false) {
		t.Error("<2.0.0 and 2.0.0-alpha: plainly in, for an allow-list out")
	}
	for _, bad := range []string{"", "  ", ">=1.2 ||", "^1.2.0", "~1.4", "1.x", ">= 1.2.0", "1.2.3.4", "latest"} {
		if _, err := parseVersionRange(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

// A registryVersion narrows its registryName: in the allow-list only the
// versions in range run; in the deny-list only those are blocked (and
// one the range cannot compare). A range that does not read allows
// nothing, and in the deny-list leaves the name denying every version.
func TestManagedRegistryVersion(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	at := func(s Server, version string) Server {
		s = installed(s, "io.github.acme/db")
		s.Registry.Version = version
		return s
	}
	allow := mustLoadManaged(t, writeManaged(t, map[string]string{ManagedSettingsName: `{
  "allowedMcpServers": [{"registryName": "io.github.acme/db", "registryVersion": ">=1.2.0 <2.0.0"}]
}`}))
	deny := mustLoadManaged(t, writeManaged(t, map[string]string{ManagedSettingsName: `{
  "deniedMcpServers": [{"registryName": "io.github.acme/db", "registryVersion": "<1.4.2 || =1.5.0"}]
}`}))
	if len(allow.Problems) != 0 || len(deny.Problems) != 0 {
		t.Fatalf("problems: %v %v", allow.Problems, deny.Problems)
	}
	if got := allow.Allowed[0].RegistryVersion; got != ">=1.2.0 <2.0.0" {
		t.Errorf("RegistryVersion = %q", got)
	}
	for _, tc := range []struct {
		m       *Managed
		version string
		blocked bool
	}{
		{allow, "1.2.0", false}, {allow, "1.9.9", false}, {allow, "2.0.0", true}, {allow, "1.1.0", true}, {allow, "nightly", true},
		{allow, "1.3.0-rc.1", true},
		{deny, "1.4.1", true}, {deny, "1.5.0", true}, {deny, "1.4.2", false}, {deny, "2.0.0", false}, {deny, "nightly", true},
		{deny, "1.4.2-beta", true},
	} {
		b := tc.m.Check(at(local("db", "db"), tc.version), lookupOf(nil))
		if (b != nil) != tc.blocked {
			list := "allow"
			if tc.m == deny {
				list = "deny"
			}
			t.Errorf("%s list, version %s: blocked %v, want %v", list, tc.version, b, tc.blocked)
		}
	}
	// Not installed from the registry: no version to match.
	if allow.Check(local("db", "db"), lookupOf(nil)) == nil {
		t.Error("a server with no registry block is allowed by a registryName entry")
	}

	for _, tc := range []struct{ name, file, problem string }{
		{"range that does not read", `{"allowedMcpServers": [{"registryName": "io.github.acme/db", "registryVersion": "^1.2"}]}`, `"^1.2" is not a version`},
		{"range of no string", `{"allowedMcpServers": [{"registryName": "io.github.acme/db", "registryVersion": 2}]}`, "want a string"},
		{"range with no name", `{"allowedMcpServers": [{"serverName": "db", "registryVersion": ">=1"}]}`, "registryVersion narrows a registryName"},
	} {
		m := mustLoadManaged(t, writeManaged(t, map[string]string{ManagedSettingsName: tc.file}))
		if len(m.Problems) != 1 || !strings.Contains(m.Problems[0].Msg, tc.problem) {
			t.Errorf("%s: problems %v, want one saying %q", tc.name, m.Problems, tc.problem)
		}
		if m.Check(at(local("db", "db"), "1.3.0"), lookupOf(nil)) == nil {
			t.Errorf("%s: the broken entry allows a server", tc.name)
		}
	}
	m := mustLoadManaged(t, writeManaged(t, map[string]string{ManagedSettingsName: `{"deniedMcpServers": [{"registryName": "io.github.acme/db", "registryVersion": "^9"}]}`}))
	if m.Check(at(local("db", "db"), "1.3.0"), lookupOf(nil)) == nil {
		t.Error("a deny entry whose range does not read does not deny its name")
	}
}
