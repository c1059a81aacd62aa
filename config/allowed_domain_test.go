package config

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseAllowedDomain(t *testing.T) {
	addr := netip.MustParseAddr
	for _, tc := range []struct {
		in   string
		want AllowedDomain
	}{
		{"api.example.com", AllowedDomain{Host: "api.example.com"}},
		{"API.Example.com", AllowedDomain{Host: "api.example.com"}},
		{"*.example.com", AllowedDomain{Host: "example.com", Wildcard: true}},
		{"registry.npmjs.org:8443", AllowedDomain{Host: "registry.npmjs.org", Port: 8443}},
		{"*.example.com:8443", AllowedDomain{Host: "example.com", Wildcard: true, Port: 8443}},
		{"localhost:5432", AllowedDomain{Host: "localhost", Port: 5432}},
		{"127.0.0.1", AllowedDomain{Addr: addr("127.0.0.1")}},
		{"127.0.0.1:5432", AllowedDomain{Addr: addr("127.0.0.1"), Port: 5432}},
		{"::1", AllowedDomain{Addr: addr("::1")}},
		{"[::1]", AllowedDomain{Addr: addr("::1")}},
		{"[::1]:8080", AllowedDomain{Addr: addr("::1"), Port: 8080}},
		{"[FD00::1]:443", AllowedDomain{Addr: addr("fd00::1"), Port: 443}},
		{"::ffff:10.0.0.5", AllowedDomain{Addr: addr("10.0.0.5")}},
	} {
		got, err := ParseAllowedDomain(tc.in)
		if err != nil {
			t.Errorf("ParseAllowedDomain(%q): %v", tc.in, err)
			continue
		}
		if diff := cmp.Diff(tc.want, got, cmp.Comparer(func(a, b netip.Addr) bool { return a == b })); diff != "" {
			t.Errorf("ParseAllowedDomain(%q) (-want +got):\n%s", tc.in, diff)
		}
	}
	for in, why := range map[string]string{
		"":                  "not a host name",
		"https://x.com/":    "no scheme, path or user",
		"user@x.com":        "no scheme, path or user",
		"x.com/path":        "no scheme, path or user",
		"x.com:":            "the port is not a number",
		"x.com:0":           "the port is not a number",
		"x.com:65536":       "the port is not a number",
		"x.com:https":       "the port is not a number",
		"fe80::1:https":     "written [::1]:8080",
		"[127.0.0.1]:80":    "brackets hold an IPv6 address",
		"[::1]8080":         "text after ]",
		"[::1":              "no closing ]",
		"*.127.0.0.1":       "not an address",
		"*.x.com.":          "not a host name",
		".x.com":            "not a host name",
		"x.*.com":           "not a host name",
		"fe80::1%eth0":      "zone",
		"[fe80::1%eth0]:80": "zone",
	} {
		_, err := ParseAllowedDomain(in)
		if err == nil || !strings.Contains(err.Error(), why) || !strings.HasPrefix(err.Error(), `"`+in+`" is not a domain`) {
			t.Errorf("ParseAllowedDomain(%q): %v, want an error saying %q", in, err, why)
		}
	}
}

// The config file takes the new forms, as written but in lower case.
func TestAllowedDomainsWithPorts(t *testing.T) {
	cfg, err := Parse("c.json", []byte(`{"mcp": {"servers": [{"name": "a", "command": "x", "sandbox": {"network": {"allowedDomains": [
		"registry.npmjs.org", "Registry.npmjs.org:8443", "*.example.com:8443", "127.0.0.1:5432", "[::1]:8080", "10.0.0.5"
	]}}}]}}`))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"registry.npmjs.org", "registry.npmjs.org:8443", "*.example.com:8443", "127.0.0.1:5432", "[::1]:8080", "10.0.0.5"}
	if diff := cmp.Diff(want, cfg.MCP.Servers[0].Sandbox.AllowedDomains); diff != "" {
		t.Errorf("allowedDomains (-want +got):\n%s", diff)
	}
}
