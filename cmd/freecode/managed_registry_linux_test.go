package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/freecode/freecode/config"
	"github.com/freecode/freecode/internal/registry"
	"github.com/freecode/freecode/internal/registry/registrytest"
)

// A managed registry.url is the only registry the registry commands ask:
// over mcp.registry.url, over the registry an entry was installed from,
// and a --registry naming another is refused with the file that fixes it.
func TestManagedRegistry(t *testing.T) {
	ns := newManagedNS(t)
	t.Setenv("XDG_CACHE_HOME", filepath.Join(ns.home, ".cache"))
	t.Setenv("FREECODE_TOKEN_STORE", "file")
	corp := registrytest.New(registrytest.Servers(everythingVersion))
	t.Cleanup(corp.Close)
	other := registrytest.New(nil)
	t.Cleanup(other.Close)
	writeFixture(t, ns.cfg, `{"mcp": {"registry": {"url": "`+other.URL+`"}}}`)
	ns.writePolicy(t, `{"registry": {"url": "`+corp.URL+`/"}}`)

	var found []registry.Entry
	out := ns.mustCLI(t, "mcp", "search", "--json", "weather")
	if err := json.Unmarshal([]byte(out), &found); err != nil || len(found) == 0 || found[0].Name != "io.example/weather" {
		t.Errorf("search asked another registry than the managed one: %v\n%s", err, out)
	}
	ns.mustCLI(t, "mcp", "search", "--registry", corp.URL, "weather") // the same one, said again

	refused := "--registry " + other.URL + ": your organization's policy fixes the MCP Registry to " + corp.URL + " (registry.url in " + managedFile + ")"
	for _, args := range [][]string{
		{"mcp", "search", "--registry", other.URL, "weather"},
		{"mcp", "install", "--registry", other.URL, "--yes", registrytest.EverythingName},
	} {
		out, errOut, code := ns.cli(t, args...)
		if code == 0 || !strings.Contains(errOut, refused) {
			t.Errorf("freecode %s: exit %d, want a refusal naming %s\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, managedFile, out, errOut)
		}
	}
	ns.mustCLI(t, "mcp", "install", "--yes", registrytest.EverythingName)
	for _, args := range [][]string{
		{"mcp", "outdated", "--registry", other.URL},
		{"mcp", "update", "--registry", other.URL, "everything"},
	} {
		out, errOut, code := ns.cli(t, args...)
		if code == 0 || !strings.Contains(errOut, refused) {
			t.Errorf("freecode %s: exit %d, want a refusal naming %s\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, managedFile, out, errOut)
		}
	}
	if out := ns.mustCLI(t, "mcp", "outdated"); !strings.Contains(out, everythingVersion) {
		t.Errorf("outdated:\n%s", out)
	}
	if c := load(t, ns.cfg); len(c.MCP.Servers) != 1 || c.MCP.Servers[0].Registry == nil || c.MCP.Servers[0].Registry.URL != corp.URL {
		t.Errorf("installed entry's registry: %+v, want %s", c.MCP.Servers, corp.URL)
	}

	if other.Requests.Load() != 0 {
		t.Errorf("the registry the policy does not fix was asked %d times", other.Requests.Load())
	}

	out = ns.mustCLI(t, "policy")
	if want := "MCP Registry:\n  search, install, outdated and update ask only " + corp.URL + " (" + managedFile + ")\n"; !strings.Contains(out, want) {
		t.Errorf("policy lacks %q:\n%s", want, out)
	}
	var pj struct{ Registry config.ManagedRegistry }
	if err := json.Unmarshal([]byte(ns.mustCLI(t, "policy", "--json")), &pj); err != nil || pj.Registry != (config.ManagedRegistry{URL: corp.URL, Path: managedFile}) {
		t.Errorf("policy --json registry: %+v (%v)", pj.Registry, err)
	}
}
