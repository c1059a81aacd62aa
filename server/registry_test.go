package server_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.lsp.dev/jsonrpc2"

	"github.com/freecode/freecode/config"
	"github.com/freecode/freecode/internal/protocol"
	"github.com/freecode/freecode/internal/registry/registrytest"
	"github.com/freecode/freecode/internal/secretstore"
	"github.com/freecode/freecode/server/servertest"
)

// The page's Install flow through the sidecar, against the fixture
// registry that the config's mcp.registry.url names: a search, the values
// an install asks, refusals that write nothing, then the install of a
// PyPI server with a secret. The entry is written to the config, pinned,
// holding ${secret:NAME}; the secret is in the store and reaches the
// server's environment (a uvx on PATH that starts the test's server only
// with it), and it is in no other file under HOME, no line of the
// sidecar's log or trace, and no message the sidecar sent. The workspace
// picks the entry up as any edit of the file, and the server connects.
func TestRegistryInstall(t *testing.T) {
	t.Setenv("FREECODE_TOKEN_STORE", "file") // no keychain on a test machine
	t.Setenv("XDG_CACHE_HOME", filepath.Join(t.TempDir(), "cache"))
	reg := registrytest.New(registrytest.Servers("2026.8.31"))
	defer reg.Close()

	const secret = "wx-s3cret-5e1f-value"
	sum := sha256.Sum256([]byte(secret))
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// What the install writes runs `uvx mcp-weather==1.4.0 …`: this uvx
	// runs the test's MCP server, only if it got the secret. Outside
	// HOME, and holding its hash, not the value.
	bin := t.TempDir()
	uvx := "#!/bin/sh\n" +
		`[ "$(printf %s "$WEATHER_API_KEY" | sha256sum | cut -c1-64)" = "` + hex.EncodeToString(sum[:]) + `" ] || { echo "wrong WEATHER_API_KEY" >&2; exit 3; }` + "\n" +
		`[ "$WEATHER_ACCOUNT" = acct-7 ] || { echo "wrong WEATHER_ACCOUNT" >&2; exit 3; }` + "\n" +
		`FREECODE_SERVERTEST_MCP=weather exec "` + exe + `"` + "\n"
	if err := os.WriteFile(filepath.Join(bin, "uvx"), []byte(uvx), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))

	files := "-- config.json --\n" + `{"mcp": {"registry": {"url": "` + reg.URL + `"}, "servers": []}}` + "\n"
	servertest.Run(t, files, func(t *testing.T, env *servertest.Env) {
		ed := env.Editor
		ctx := t.Context()
		cfgPath := env.Sandbox.ConfigPath

		found, err := ed.RegistrySearch(ctx, protocol.RegistrySearchParams{Query: "forecast"})
		if err != nil {
			t.Fatal(err)
		}
		want := &protocol.RegistrySearchResult{Registry: reg.URL, Total: 1, Entries: []protocol.RegistryEntry{{
			Name: "io.example/weather", Title: "Weather", Description: "Forecasts and alerts from the Example weather service",
			Version: "1.4.0", Runs: []string{"pypi"},
		}}}
		if diff := cmp.Diff(want, found); diff != "" {
			t.Errorf("search (-want +got):\n%s", diff)
		}
		all, err := ed.RegistrySearch(ctx, protocol.RegistrySearchParams{Limit: 2})
		if err != nil || len(all.Entries) != 2 || all.Total != 5 {
			t.Errorf("search, limit 2: %+v, %v (the fixture lists 5 servers not deleted)", all, err)
		}

		vals, err := ed.RegistryValues(ctx, protocol.RegistryValuesParams{Name: "io.example/weather"})
		if err != nil {
			t.Fatal(err)
		}
		wantVals := &protocol.RegistryValuesResult{
			Registry: reg.URL, Name: "io.example/weather", Title: "Weather", Description: "Forecasts and alerts from the Example weather service",
			Version: "1.4.0", Runs: "pypi", Package: "mcp-weather==1.4.0", Offered: []string{"pypi"}, EntryName: "weather",
			Values: []protocol.RegistryValue{
				{Name: "region", Description: "The region forecast"},
				{Name: "WEATHER_API_KEY", Description: "Your Example weather API key", Secret: true},
				{Name: "WEATHER_ACCOUNT", Description: "Your account's id"},
			},
		}
		if diff := cmp.Diff(wantVals, vals); diff != "" {
			t.Errorf("values (-want +got):\n%s", diff)
		}
		if old, err := ed.RegistryValues(ctx, protocol.RegistryValuesParams{Name: "io.example/weather", Version: "1.3.0"}); err != nil ||
			old.Status != "deprecated" || !strings.Contains(old.StatusMessage, "upgrade") {
			t.Errorf("a deprecated version says so: %+v, %v", old, err)
		}
		if _, err := os.Stat(cfgPath); err != nil {
			t.Fatal(err)
		}
		before, _ := os.ReadFile(cfgPath)

		values := map[string]string{"region": "eu", "WEATHER_API_KEY": secret, "WEATHER_ACCOUNT": "acct-7"}
		for _, tc := range []struct {
			name  string
			p     protocol.RegistryInstallParams
			field string
		}{
			{"untrusted project", protocol.RegistryInstallParams{Name: "io.example/weather", Scope: protocol.ServerScopeProject, Values: values}, "scope: the project is not trusted"},
			{"value missing", protocol.RegistryInstallParams{Name: "io.example/weather", Values: map[string]string{"region": "eu", "WEATHER_API_KEY": secret}}, "values: WEATHER_ACCOUNT is required"},
			{"not a choice", protocol.RegistryInstallParams{Name: "io.example/weather", Values: map[string]string{"region": "eu", "units": "kelvin"}}, `values: units: "kelvin" is not one of metric, imperial`},
			{"deleted version", protocol.RegistryInstallParams{Name: "io.example/weather", Version: "1.2.0", Values: values}, "was deleted from the registry"},
			{"unknown", protocol.RegistryInstallParams{Name: "io.example/nothing"}, `name: ` + reg.URL + ` has no server "io.example/nothing"`},
			{"bad entry name", protocol.RegistryInstallParams{Name: "io.example/weather", EntryName: "a__b", Values: values}, "entryName:"},
			{"bad scope", protocol.RegistryInstallParams{Name: "io.example/weather", Scope: "managed", Values: values}, "scope: want user or project"},
		} {
			_, err := ed.RegistryInstall(ctx, tc.p)
			if err == nil || !strings.Contains(err.Error(), tc.field) {
				t.Errorf("%s: %v, want %q", tc.name, err, tc.field)
			}
			var je *jsonrpc2.Error
			if !errors.As(err, &je) || je.Code != protocol.CodeInvalidParams {
				t.Errorf("%s: %v is not -32602", tc.name, err)
			}
		}
		if after, _ := os.ReadFile(cfgPath); string(after) != string(before) {
			t.Errorf("a refused install changed the config:\n%s", after)
		}
		if _, err := os.Stat(filepath.Join(env.Sandbox.Home, ".freecode", "auth", "tokens.json")); !os.IsNotExist(err) {
			t.Errorf("a refused install saved a secret: %v", err)
		}

		res, err := ed.RegistryInstall(ctx, protocol.RegistryInstallParams{Name: "io.example/weather", Version: "1.4.0", Values: values})
		if err != nil {
			t.Fatal(err)
		}
		wantRes := &protocol.RegistryInstallResult{
			Name: "weather", Scope: protocol.ServerScopeUser, Type: protocol.TypeLocal, File: cfgPath,
			Registry: protocol.RegistryIdentity{Name: "io.example/weather", Version: "1.4.0", URL: reg.URL},
			Secrets:  1, SecretsWhere: filepath.Join(env.Sandbox.Home, ".freecode", "auth", "tokens.json"),
		}
		if diff := cmp.Diff(wantRes, res); diff != "" {
			t.Errorf("install (-want +got):\n%s", diff)
		}
		c, err := config.Load(cfgPath)
		if err != nil || len(c.MCP.Servers) != 1 {
			t.Fatalf("config: %+v, %v", c, err)
		}
		s := c.MCP.Servers[0]
		if !slices.Equal(s.Command, []string{"uvx", "mcp-weather==1.4.0", "--units", "metric", "eu"}) ||
			s.Env["WEATHER_API_KEY"] != "${secret:WEATHER_API_KEY}" || s.Env["WEATHER_ACCOUNT"] != "acct-7" ||
			s.Registry == nil || s.Registry.Version != "1.4.0" || s.Registry.URL != reg.URL {
			t.Errorf("the entry written: %+v", s)
		}
		got, err := secretstore.Open(filepath.Join(env.Sandbox.Home, ".freecode", "auth")).Get(ctx, "WEATHER_API_KEY")
		if err != nil || got != secret {
			t.Errorf("the secret store holds %q, %v", got, err)
		}
		if _, err := ed.RegistryInstall(ctx, protocol.RegistryInstallParams{Name: "io.example/weather", Values: values}); err == nil ||
			!strings.Contains(err.Error(), `entryName: `+cfgPath+` already has a server named "weather"`) {
			t.Errorf("installed twice: %v", err)
		}

		// The config watcher picks it up; the server starts with its
		// secret in its environment.
		st := ed.AwaitStatus("weather", protocol.StateConnected)
		if st.Registry == nil || st.Registry.Name != "io.example/weather" {
			t.Errorf("status: %+v", st)
		}
		if r := execute(t, ed, call("1", "mcp__weather__echo", `{"text":"hi"}`)); r.IsError {
			t.Errorf("a call of the installed server: %+v", r)
		}
		sts, err := ed.Servers(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if b, _ := json.Marshal(sts); strings.Contains(string(b), secret) {
			t.Error("the statuses hold the secret")
		}

		// The sidecar's trace shows the request with every value masked.
		if !strings.Contains(env.Log(), `"values":{"WEATHER_ACCOUNT":"***","WEATHER_API_KEY":"***","region":"***"}`) {
			t.Error("the sidecar's trace does not show the install with its values masked")
		}
		secretOnlyInStore(t, env, secret)
	})
}

// A trusted project's settings take an install too: its entry awaits
// approval, which shows the registry identity.
func TestRegistryInstallProject(t *testing.T) {
	t.Setenv("FREECODE_TOKEN_STORE", "file")
	t.Setenv("XDG_CACHE_HOME", filepath.Join(t.TempDir(), "cache"))
	reg := registrytest.New(registrytest.Servers("2026.8.31"))
	defer reg.Close()
	files := "-- config.json --\n" + `{"mcp": {"registry": {"url": "` + reg.URL + `"}}}` + "\n"
	servertest.Run(t, files, func(t *testing.T, env *servertest.Env) {
		ed := env.Editor
		ctx := t.Context()
		if v, err := ed.RegistryValues(ctx, protocol.RegistryValuesParams{Name: registrytest.EverythingName}); err != nil || v.ProjectScope {
			t.Fatalf("an untrusted project's settings are offered: %+v, %v", v, err)
		}
		if _, err := ed.SetTrusted(ctx, true); err != nil {
			t.Fatal(err)
		}
		v, err := ed.RegistryValues(ctx, protocol.RegistryValuesParams{Name: registrytest.EverythingName})
		if err != nil || !v.ProjectScope || v.Runs != "npm" || v.Package != "@modelcontextprotocol/server-everything@2026.8.31" || len(v.Values) != 0 {
			t.Fatalf("values: %+v, %v", v, err)
		}
		res, err := ed.RegistryInstall(ctx, protocol.RegistryInstallParams{Name: registrytest.EverythingName, Version: v.Version, Scope: protocol.ServerScopeProject})
		if err != nil {
			t.Fatal(err)
		}
		if res.File != config.ProjectSettingsPath(env.Sandbox.Project) || res.Scope != protocol.ServerScopeProject || res.Secrets != 0 {
			t.Errorf("install: %+v", res)
		}
		st := ed.AwaitStatus("everything", protocol.StateAwaitingApproval)
		if st.Approval == nil || st.Approval.Registry == nil || st.Approval.Registry.Version != "2026.8.31" {
			t.Errorf("the approval shows no registry identity: %+v", st.Approval)
		}
	})
}

// An install never replaces a secret another value holds under the name
// the server.json gives (another server's entry may use it): the value is
// kept as ENTRY_NAME, the entry naming that, and the other one stays.
func TestRegistryInstallKeepsOtherSecret(t *testing.T) {
	t.Setenv("FREECODE_TOKEN_STORE", "file")
	t.Setenv("XDG_CACHE_HOME", filepath.Join(t.TempDir(), "cache"))
	reg := registrytest.New(registrytest.Servers("2026.8.31"))
	defer reg.Close()
	files := "-- config.json --\n" + `{"mcp": {"registry": {"url": "` + reg.URL + `"}}}` + "\n"
	servertest.Run(t, files, func(t *testing.T, env *servertest.Env) {
		ed := env.Editor
		ctx := t.Context()
		store := secretstore.Open(filepath.Join(env.Sandbox.Home, ".freecode", "auth"))
		if _, err := store.Set(ctx, "WEATHER_API_KEY", "another-servers-key"); err != nil {
			t.Fatal(err)
		}
		values := map[string]string{"region": "eu", "WEATHER_API_KEY": "wx-new-key", "WEATHER_ACCOUNT": "acct-7"}
		if _, err := ed.RegistryInstall(ctx, protocol.RegistryInstallParams{Name: "io.example/weather", Values: values}); err != nil {
			t.Fatal(err)
		}
		if got, err := store.Get(ctx, "WEATHER_API_KEY"); err != nil || got != "another-servers-key" {
			t.Errorf("the other value was replaced: %q, %v", got, err)
		}
		if got, err := store.Get(ctx, "WEATHER_WEATHER_API_KEY"); err != nil || got != "wx-new-key" {
			t.Errorf("WEATHER_WEATHER_API_KEY: %q, %v", got, err)
		}
		c, err := config.Load(env.Sandbox.ConfigPath)
		if err != nil || len(c.MCP.Servers) != 1 || c.MCP.Servers[0].Env["WEATHER_API_KEY"] != "${secret:WEATHER_WEATHER_API_KEY}" {
			t.Errorf("config: %+v, %v", c, err)
		}
	})
}

// A config that does not load may name the user's own registry: the
// sidecar asks none rather than the public one, whose server of the same
// name may be another publisher's, and says why.
func TestRegistryConfigNotLoaded(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", filepath.Join(t.TempDir(), "cache"))
	reg := registrytest.New(registrytest.Servers("2026.8.31"))
	defer reg.Close()
	files := "-- config.json --\n" + `{"mcp": {"registry": {"url": "` + reg.URL + `"}, "servers": 5}}` + "\n"
	servertest.Run(t, files, func(t *testing.T, env *servertest.Env) {
		ctx := t.Context()
		if _, err := env.Editor.RegistrySearch(ctx, protocol.RegistrySearchParams{Query: "weather"}); err == nil || !strings.Contains(err.Error(), "mcp.registry.url") {
			t.Errorf("search: %v", err)
		}
		if _, err := env.Editor.RegistryValues(ctx, protocol.RegistryValuesParams{Name: "io.example/weather"}); err == nil || !strings.Contains(err.Error(), "mcp.registry.url") {
			t.Errorf("values: %v", err)
		}
	})
}
