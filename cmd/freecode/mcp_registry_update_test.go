package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/freecode/freecode/config"
	"github.com/freecode/freecode/internal/registry"
	"github.com/freecode/freecode/internal/registry/registrytest"
)

// updateRegistry is the fixture registry with a weather 1.4.0 that needs
// WEATHER_REGION and no longer WEATHER_ACCOUNT, and a tickets 2.2.0 whose
// URL moved; weather 1.3.0 is deprecated and 1.2.0 deleted, as in the
// fixture.
func updateRegistry(t *testing.T) (string, *registrytest.Registry) {
	t.Helper()
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CACHE_HOME", filepath.Join(home, ".cache"))
	t.Setenv("FREECODE_TOKEN_STORE", "file")
	t.Chdir(t.TempDir())
	var versions []registry.Response
	for _, v := range registrytest.Servers(everythingVersion) {
		s := &v.Server
		switch {
		case s.Name == "io.example/weather" && s.Version == "1.4.0":
			p := &s.Packages[0]
			p.EnvironmentVariables = []registry.KeyValueInput{
				p.EnvironmentVariables[0],
				{Name: "WEATHER_REGION", Input: registry.Input{Description: "The service's region", IsRequired: true}},
				p.EnvironmentVariables[2],
			}
		case s.Name == "io.example/tickets":
			next := v
			next.Server.Remotes = []registry.Transport{s.Remotes[0]}
			next.Server.Remotes[0].URL = "https://{tenant}.tickets.example/mcp/v2"
			next.Server.Version = "2.2.0"
			versions = append(versions, next)
			v = registrytest.Version(*s, registry.StatusActive, false)
		}
		versions = append(versions, v)
	}
	reg := registrytest.New(versions)
	t.Cleanup(reg.Close)
	cfg := filepath.Join(home, ".freecode", "config.json")
	writeFixture(t, cfg, `{"mcp": {"servers": [
  {"name": "weather", "command": ["uvx", "mcp-weather==1.3.0", "--units", "imperial", "eu"],
   "env": {"WEATHER_API_KEY": "${secret:WEATHER_API_KEY}", "WEATHER_ACCOUNT": "acct-7", "MY_PROXY": "http://proxy.corp:3128"},
   "timeout": 5000,
   "registry": {"name": "io.example/weather", "version": "1.3.0", "url": "`+reg.URL+`"}},
  {"name": "old-weather", "command": ["uvx", "mcp-weather==1.2.0", "eu"],
   "registry": {"name": "io.example/weather", "version": "1.2.0", "url": "`+reg.URL+`"}},
  {"name": "everything", "command": ["npx", "-y", "@modelcontextprotocol/server-everything@`+everythingVersion+`"],
   "registry": {"name": "`+registrytest.EverythingName+`", "version": "`+everythingVersion+`", "url": "`+reg.URL+`"}},
  {"name": "tickets", "type": "remote", "url": "https://acme.tickets.example/mcp", "transport": "http",
   "headers": {"Authorization": "Bearer ${secret:TICKETS_TOKEN}"},
   "registry": {"name": "io.example/tickets", "version": "2.1.0", "url": "`+reg.URL+`"}},
  {"name": "by-hand", "command": ["my-server"]}
]}}`)
	return cfg, reg
}

func TestMCPOutdated(t *testing.T) {
	cfg, reg := updateRegistry(t)
	out := mustRun(t, "--config", cfg, "mcp", "outdated")
	for _, want := range []string{
		"NAME", "weather      io.example/weather",
		"1.3.0      1.4.0", "deprecated: Please upgrade to io.example/weather 1.4.0",
		"old-weather", "deleted",
		everythingVersion + " (up to date)",
		"weather 1.3.0 → 1.4.0:\n  package: pypi mcp-weather 1.3.0 → pypi mcp-weather 1.4.0\n  requires WEATHER_REGION (new)\n  no longer requires WEATHER_ACCOUNT\n",
		"tickets 2.1.0 → 2.2.0:\n  url: https://{tenant}.tickets.example/mcp → https://{tenant}.tickets.example/mcp/v2\n",
		"freecode mcp update NAME",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("outdated lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "by-hand") {
		t.Errorf("outdated lists an entry written by hand:\n%s", out)
	}

	var rows []outdated
	if err := json.Unmarshal([]byte(mustRun(t, "--config", cfg, "mcp", "outdated", "--json")), &rows); err != nil {
		t.Fatal(err)
	}
	want := []outdated{
		{Name: "weather", Scope: "user", Server: "io.example/weather", Registry: reg.URL, Installed: "1.3.0", Latest: "1.4.0",
			Status: "deprecated", StatusMessage: "Please upgrade to io.example/weather 1.4.0",
			Changes: []string{"package: pypi mcp-weather 1.3.0 → pypi mcp-weather 1.4.0", "requires WEATHER_REGION (new)", "no longer requires WEATHER_ACCOUNT"}},
		{Name: "old-weather", Scope: "user", Server: "io.example/weather", Registry: reg.URL, Installed: "1.2.0", Latest: "1.4.0",
			Status: "deleted", Changes: []string{"package: pypi mcp-weather 1.2.0 → pypi mcp-weather 1.4.0", "requires WEATHER_REGION (new)", "no longer requires WEATHER_ACCOUNT"}},
		{Name: "everything", Scope: "user", Server: registrytest.EverythingName, Registry: reg.URL, Installed: everythingVersion, Latest: everythingVersion,
			Status: "active", Changes: []string{}},
		{Name: "tickets", Scope: "user", Server: "io.example/tickets", Registry: reg.URL, Installed: "2.1.0", Latest: "2.2.0",
			Status: "active", Changes: []string{"url: https://{tenant}.tickets.example/mcp → https://{tenant}.tickets.example/mcp/v2"}},
	}
	if diff := cmp.Diff(want, rows); diff != "" {
		t.Errorf("outdated --json (-want +got):\n%s", diff)
	}

	// Another registry, which has none of them, says so in each row.
	empty := registrytest.New(nil)
	defer empty.Close()
	out = mustRun(t, "--config", cfg, "mcp", "outdated", "--registry", empty.URL)
	if !strings.Contains(out, "error: the registry has no version of it") {
		t.Errorf("outdated --registry of an empty one:\n%s", out)
	}
}

func TestMCPUpdate(t *testing.T) {
	cfg, reg := updateRegistry(t)
	before := load(t, cfg).MCP.Servers
	update := func(args ...string) (string, string, int) {
		return runInput(t, "", false, append([]string{"--config", cfg, "mcp", "update"}, args...)...)
	}

	// The new version requires a value the entry has not: asked, and with
	// --yes and no --var, refused with nothing written.
	raw, _ := os.ReadFile(cfg)
	if _, errOut, code := update("weather", "--yes"); code == 0 || !strings.Contains(errOut, "WEATHER_REGION is required") {
		t.Errorf("update without the new value: exit %d, %s", code, errOut)
	}
	if after, _ := os.ReadFile(cfg); string(after) != string(raw) {
		t.Error("a refused update changed the config")
	}

	out, errOut, code := update("weather", "--yes", "--var", "WEATHER_REGION=north")
	if code != 0 {
		t.Fatalf("update weather: exit %d\n%s%s", code, out, errOut)
	}
	for _, want := range []string{
		"✓ Updated weather from io.example/weather 1.3.0 to 1.4.0",
		"requires WEATHER_REGION (new)",
		"registry:  io.example/weather@1.4.0 from " + reg.URL,
		"wait for your review (`freecode mcp review weather`)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("update output lacks %q:\n%s", want, out)
		}
	}
	after := load(t, cfg).MCP.Servers
	want := before[0]
	want.Command = []string{"uvx", "mcp-weather==1.4.0", "--units", "imperial", "eu"}
	want.Env = map[string]string{
		"WEATHER_API_KEY": "${secret:WEATHER_API_KEY}", "WEATHER_REGION": "north",
		"WEATHER_ACCOUNT": "acct-7", "MY_PROXY": "http://proxy.corp:3128", // the user's, kept
	}
	want.Registry = &config.Registry{Name: "io.example/weather", Version: "1.4.0", URL: reg.URL}
	if diff := cmp.Diff(want, after[0]); diff != "" {
		t.Errorf("updated entry (-want +got):\n%s", diff)
	}
	if after[0].Timeout != 5*time.Second {
		t.Errorf("the entry's own timeout was not kept: %v", after[0].Timeout)
	}
	// Its manifest is the same: the pins of 1.3.0's definitions hold, and
	// what 1.4.0 lists otherwise waits for review at its next start.
	if config.ManifestKey("", after[0]) != config.ManifestKey("", before[0]) {
		t.Error("the update changed the entry's manifest key: its pins would be lost")
	}

	// A remote: the URL's variable recovered from the entry's URL, the
	// header as the user has it.
	if out, errOut, code = update("tickets", "--yes"); code != 0 {
		t.Fatalf("update tickets: exit %d\n%s%s", code, out, errOut)
	}
	tickets := load(t, cfg).MCP.Servers[3]
	if tickets.URL != "https://acme.tickets.example/mcp/v2" || tickets.Headers["Authorization"] != "Bearer ${secret:TICKETS_TOKEN}" || tickets.Registry.Version != "2.2.0" {
		t.Errorf("tickets updated to %+v", tickets)
	}

	out = mustRun(t, "--config", cfg, "mcp", "update", "everything")
	if !strings.Contains(out, "the latest: nothing to update") {
		t.Errorf("update of the latest:\n%s", out)
	}
	if _, errOut, code := update("by-hand"); code == 0 || !strings.Contains(errOut, "was installed from the MCP Registry") {
		t.Errorf("update of an entry written by hand: exit %d, %s", code, errOut)
	}
}
