package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/freecode/freecode/config"
	"github.com/freecode/freecode/internal/registry"
	"github.com/freecode/freecode/internal/registry/registrytest"
)

// everythingVersion is the version of server-everything interop/ installs
// (interop/package.json); the fixture registry publishes that one, so
// that the installed entry runs what node_modules holds.
const everythingVersion = "2026.8.31"

// registryHome makes a HOME with its own cache and secret file, and a
// loopback registry of the fixture's servers; it returns the config's
// path and the registry.
func registryHome(t *testing.T) (string, *registrytest.Registry) {
	t.Helper()
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CACHE_HOME", filepath.Join(home, ".cache"))
	t.Setenv("FREECODE_TOKEN_STORE", "file")
	reg := registrytest.New(registrytest.Servers(everythingVersion))
	t.Cleanup(reg.Close)
	return filepath.Join(home, ".freecode", "config.json"), reg
}

func TestMCPSearch(t *testing.T) {
	cfg, reg := registryHome(t)
	out := mustRun(t, "--config", cfg, "mcp", "search", "weather", "--registry", reg.URL)
	for _, want := range []string{"NAME", "io.example/weather", "1.4.0", "pypi", "Weather: Forecasts"} {
		if !strings.Contains(out, want) {
			t.Errorf("search output lacks %q:\n%s", want, out)
		}
	}
	asked := reg.Requests.Load()

	// mcp.registry.url is the default registry; the index is cached.
	writeFixture(t, cfg, `{"mcp": {"registry": {"url": "`+reg.URL+`"}}}`)
	out = mustRun(t, "--config", cfg, "mcp", "search", "--json", "example")
	var got []registry.Entry
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var names []string
	for _, e := range got {
		names = append(names, e.Name+" "+strings.Join(e.Runs, ","))
	}
	want := []string{"io.example/weather pypi", "io.example/sqlite oci", "io.example/tickets remote", "io.example/dotnet nuget"}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("search --json (-want +got):\n%s", diff)
	}
	if n := reg.Requests.Load(); n != asked {
		t.Errorf("a warm search asked the registry %d times", n-asked)
	}
	if _, errOut, code := run(t, "--config", cfg, "mcp", "search", "x", "--registry", "http://registry.example.com"); code == 0 || !strings.Contains(errOut, "refused") {
		t.Errorf("a registry over plain http elsewhere: exit %d, %s", code, errOut)
	}
}

func TestMCPInstall(t *testing.T) {
	cfg, reg := registryHome(t)
	install := func(stdin string, args ...string) (string, string, int) {
		return runInput(t, stdin, false, append([]string{"--config", cfg, "mcp", "install", "--registry", reg.URL}, args...)...)
	}

	// npm, latest: the concrete version is written, never "latest".
	out, errOut, code := install("", "io.github.modelcontextprotocol/everything")
	if code != 0 {
		t.Fatalf("install everything: exit %d\n%s%s", code, out, errOut)
	}
	if !strings.Contains(out, `as local server "everything"`) || !strings.Contains(out, "registry:  io.github.modelcontextprotocol/everything@"+everythingVersion+" from "+reg.URL) {
		t.Errorf("install printed:\n%s", out)
	}

	// PyPI: a required argument from --var, a secret typed (stdin's
	// lines), a required plain variable typed; a deprecated version warns.
	out, errOut, code = install("s3cret-key\nacct-7\n", "io.example/weather@1.3.0", "--var", "region=eu")
	if code != 0 {
		t.Fatalf("install weather: exit %d\n%s%s", code, out, errOut)
	}
	if !strings.Contains(errOut, "warning: io.example/weather 1.3.0 is deprecated: Please upgrade") {
		t.Errorf("no deprecation warning: %s", errOut)
	}

	// OCI by digest, a required variable from --var.
	if out, errOut, code = install("", "io.example/sqlite", "--var", "DB_PATH=/data/db.sqlite", "--yes"); code != 0 {
		t.Fatalf("install sqlite: exit %d\n%s%s", code, out, errOut)
	}
	// Remote: the URL's variable from --var, the header's secret typed.
	if out, errOut, code = install("tok-123\n", "io.example/tickets", "--var", "tenant=acme", "--runs", "remote"); code != 0 {
		t.Fatalf("install tickets: exit %d\n%s%s", code, out, errOut)
	}

	c := load(t, cfg)
	digest := "sha256:" + strings.Repeat("ab", 32)
	want := []config.Server{
		{Name: "everything", Type: config.TypeLocal, Command: []string{"npx", "-y", "@modelcontextprotocol/server-everything@" + everythingVersion},
			Registry: &config.Registry{Name: registrytest.EverythingName, Version: everythingVersion, URL: reg.URL}},
		{Name: "weather", Type: config.TypeLocal, Command: []string{"uvx", "mcp-weather==1.3.0", "--units", "metric", "eu"},
			Env:      map[string]string{"WEATHER_API_KEY": "${secret:WEATHER_API_KEY}", "WEATHER_ACCOUNT": "acct-7"},
			Registry: &config.Registry{Name: "io.example/weather", Version: "1.3.0", URL: reg.URL}},
		{Name: "sqlite", Type: config.TypeLocal, Command: []string{"docker", "run", "-i", "--rm", "-e", "DB_PATH", "ghcr.io/example/mcp-sqlite@" + digest},
			Env:      map[string]string{"DB_PATH": "/data/db.sqlite"},
			Registry: &config.Registry{Name: "io.example/sqlite", Version: "1.0.0", URL: reg.URL, Digest: digest}},
		{Name: "tickets", Type: config.TypeRemote, URL: "https://acme.tickets.example/mcp", Transport: config.TransportHTTP,
			Headers:  map[string]string{"Authorization": "Bearer ${secret:TICKETS_TOKEN}"},
			Registry: &config.Registry{Name: "io.example/tickets", Version: "2.1.0", URL: reg.URL}},
	}
	for i := range want {
		want[i].Enabled, want[i].Scope = true, config.ScopeUser
		want[i] = want[i].WithDefaults()
	}
	if diff := cmp.Diff(want, c.MCP.Servers); diff != "" {
		t.Errorf("entries written (-want +got):\n%s", diff)
	}
	// The secrets are in the store, not in the config.
	raw, _ := os.ReadFile(cfg)
	if strings.Contains(string(raw), "s3cret-key") || strings.Contains(string(raw), "tok-123") {
		t.Errorf("a secret reached the config:\n%s", raw)
	}
	if out := mustRun(t, "--config", cfg, "secret", "ls"); !strings.Contains(out, "WEATHER_API_KEY") || !strings.Contains(out, "TICKETS_TOKEN") {
		t.Errorf("secret ls:\n%s", out)
	}

	for _, tc := range []struct {
		name  string
		args  []string
		stdin string
		want  string
	}{
		{"deleted version", []string{"io.example/weather@1.2.0", "--name", "w2", "--yes", "--var", "region=eu"}, "", "was deleted from the registry"},
		{"deleted server", []string{"io.example/gone"}, "", "was deleted from the registry"},
		{"unknown", []string{"io.example/nothing"}, "", `has no server "io.example/nothing"`},
		{"unknown version", []string{"io.example/weather@9.9.9"}, "", "has no version 9.9.9"},
		{"nuget only", []string{"io.example/dotnet"}, "", "can run only as nuget"},
		{"required with --yes", []string{"io.example/weather", "--name", "w3", "--yes"}, "", "region is required: give it with --var region=VALUE"},
		{"secret on the command line", []string{"io.example/weather", "--name", "w4", "--var", "region=eu", "--var", "WEATHER_API_KEY=x"}, "", "is a secret"},
		{"nothing typed", []string{"io.example/weather", "--name", "w5", "--var", "region=eu"}, "", "WEATHER_API_KEY is required"},
		{"exists", []string{"io.github.modelcontextprotocol/everything"}, "", "already has a server of that name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before, _ := os.ReadFile(cfg)
			_, errOut, code := install(tc.stdin, tc.args...)
			if code == 0 || !strings.Contains(errOut, tc.want) {
				t.Errorf("exit %d, stderr %s; want %q", code, errOut, tc.want)
			}
			if after, _ := os.ReadFile(cfg); string(after) != string(before) {
				t.Error("the config changed")
			}
		})
	}
}

// --scope project writes the project's settings, where the entry awaits
// approval, which shows its registry identity.
func TestMCPInstallProject(t *testing.T) {
	cfg, reg := registryHome(t)
	project := t.TempDir()
	t.Chdir(project)
	out, errOut, code := runInput(t, "", false, "--config", cfg, "mcp", "install", "--registry", reg.URL, "--scope", "project", "io.github.modelcontextprotocol/everything")
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	servers, err := config.LoadProject(project)
	if err != nil || len(servers) != 1 || servers[0].Registry == nil || servers[0].Registry.Version != everythingVersion {
		t.Fatalf("project servers: %+v, %v", servers, err)
	}
	out, _, _ = run(t, "--config", cfg, "mcp", "approve", "everything", "--project", project)
	if !strings.Contains(out, "registry:  io.github.modelcontextprotocol/everything@"+everythingVersion+" from "+reg.URL) {
		t.Errorf("approve shows:\n%s", out)
	}
}

// The installed server-everything runs: `npx -y
// @modelcontextprotocol/server-everything@<version>`, resolved by npx
// from interop/'s node_modules (run from there, the npm registry made
// unreachable so nothing is fetched).
func TestMCPInstallEverythingRuns(t *testing.T) {
	npm := npmDir(t)
	cfg, reg := registryHome(t)
	mustRun(t, "--config", cfg, "mcp", "install", "--registry", reg.URL, "io.github.modelcontextprotocol/everything")
	cmd := exec.Command(freecodeBin, "--config", cfg, "tools", "call", "mcp__everything__echo", "--args", `{"message":"installed from the registry"}`, "--yes")
	cmd.Dir = filepath.Dir(npm)
	cmd.Env = append(os.Environ(), "npm_config_registry=http://127.0.0.1:1/")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "Echo: installed from the registry") {
		t.Errorf("tools call: %v\n%s", err, out)
	}
}

// A program that asks the values itself (the VS Code extension): --list-values
// says what the install would ask, writing nothing; --values-stdin takes
// them, secret ones too, as one JSON object, and keeps the secrets in the
// store.
func TestMCPInstallValuesStdin(t *testing.T) {
	cfg, reg := registryHome(t)
	base := []string{"--config", cfg, "mcp", "install", "--registry", reg.URL, "--yes", "io.example/weather"}

	out := mustRun(t, append(base, "--list-values")...)
	var asked []askedValue
	if err := json.Unmarshal([]byte(out), &asked); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	want := []askedValue{
		{Name: "region", Description: "The region forecast"},
		{Name: "WEATHER_API_KEY", Description: "Your Example weather API key", Secret: true},
		{Name: "WEATHER_ACCOUNT", Description: "Your account's id"},
	}
	if diff := cmp.Diff(want, asked); diff != "" {
		t.Errorf("--list-values (-want +got):\n%s", diff)
	}
	if _, err := os.Stat(cfg); !os.IsNotExist(err) {
		t.Errorf("--list-values wrote the config: %v", err)
	}
	if out := mustRun(t, append(base, "--list-values", "--var", "region=eu")...); strings.Contains(out, `"region"`) {
		t.Errorf("--list-values asks for a value --var gave:\n%s", out)
	}

	values := `{"region": "eu", "WEATHER_API_KEY": "s3cret-key", "WEATHER_ACCOUNT": "acct-7", "WEATHER_DEBUG": ""}`
	out, errOut, code := runInput(t, values, false, append(base, "--values-stdin")...)
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	c := load(t, cfg)
	if len(c.MCP.Servers) != 1 {
		t.Fatalf("servers: %+v", c.MCP.Servers)
	}
	s := c.MCP.Servers[0]
	if diff := cmp.Diff(map[string]string{"WEATHER_API_KEY": "${secret:WEATHER_API_KEY}", "WEATHER_ACCOUNT": "acct-7"}, s.Env); diff != "" {
		t.Errorf("env (-want +got):\n%s", diff)
	}
	if raw, _ := os.ReadFile(cfg); strings.Contains(string(raw), "s3cret-key") {
		t.Errorf("a secret reached the config:\n%s", raw)
	}
	if out := mustRun(t, "--config", cfg, "secret", "ls"); !strings.Contains(out, "WEATHER_API_KEY") {
		t.Errorf("secret ls:\n%s", out)
	}

	for _, tc := range []struct{ name, stdin, want string }{
		{"not JSON", "eu\n", "--values-stdin: want one JSON object"},
		{"bad choice", `{"region": "eu", "WEATHER_API_KEY": "k", "WEATHER_ACCOUNT": "a", "units": "kelvin"}`, `"kelvin" is not one of metric, imperial`},
		{"missing", `{"region": "eu"}`, "WEATHER_API_KEY is required"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, errOut, code := runInput(t, tc.stdin, false, append(base, "--values-stdin", "--name", "w2")...)
			if code == 0 || !strings.Contains(errOut, tc.want) {
				t.Errorf("exit %d, stderr %s; want %q", code, errOut, tc.want)
			}
		})
	}
}
