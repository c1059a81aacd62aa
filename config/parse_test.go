package config

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestDefaultPath(t *testing.T) {
	t.Setenv("FREECODE_CONFIG", "/tmp/x/c.json")
	got, err := DefaultPath()
	if err != nil || got != "/tmp/x/c.json" {
		t.Fatalf("DefaultPath() with FREECODE_CONFIG = %q, %v; want /tmp/x/c.json", got, err)
	}
	t.Setenv("FREECODE_CONFIG", "")
	t.Setenv("HOME", "/home/someone")
	got, err = DefaultPath()
	if want := "/home/someone/.freecode/config.json"; err != nil || got != want {
		t.Fatalf("DefaultPath() = %q, %v; want %q", got, err, want)
	}
}

func TestSecretsDir(t *testing.T) {
	// A config file elsewhere (a repository's) does not take the secrets
	// with it.
	t.Setenv("FREECODE_CONFIG", "/src/repo/.freecode/config.json")
	t.Setenv("HOME", "/home/someone")
	got, err := SecretsDir()
	if want := "/home/someone/.freecode/auth"; err != nil || got != want {
		t.Fatalf("SecretsDir() = %q, %v; want %q", got, err, want)
	}
}

// local returns a local server with every default applied.
func local(name string, argv ...string) Server {
	return Server{Name: name, Type: TypeLocal, Enabled: true, Command: argv,
		Timeout: DefaultTimeout, ToolTimeout: DefaultToolTimeout,
		MaxMessageBytes: DefaultMaxMessageBytes, Scope: ScopeUser}
}

func remote(name, url string) Server {
	s := local(name)
	s.Type, s.Command, s.URL, s.Transport = TypeRemote, nil, url, TransportAuto
	return s
}

func defaults() *Config {
	return &Config{MCP: MCP{PollInterval: DefaultPollInterval, MaxResultChars: DefaultMaxResultChars, MaxParallel: DefaultMaxParallel,
		AutoDeferTools: DefaultAutoDeferTools, AutoDeferTokens: DefaultAutoDeferTokens, IdleTimeout: DefaultIdleTimeout, LogLevel: DefaultLogLevel}}
}

func TestParse(t *testing.T) {
	const path = "/etc/fc/config.json"
	tests := []struct {
		name string
		data string
		want func(*Config)
	}{
		{"empty file", "", func(*Config) {}},
		{"no mcp key", `{"model": "x", "provider": {"k": "v"}}`, func(*Config) {}},
		{"mcp null", `{"mcp": null}`, func(*Config) {}},
		{
			name: "the design example, with comments and trailing commas",
			data: `{
  // provider keys live here too
  "model": "m", "provider": {"anthropic": {"apiKey": "sk-secret"}},
  "mcp": {
    "servers": [
      { "name": "fs", "type": "local",
        "command": ["npx", "-y", "@modelcontextprotocol/server-filesystem", "/home/me/src"],
        "env": { "LOG_LEVEL": "warn", "TOKEN": "${env:FS_TOKEN}" }, "cwd": "/home/me",
        "enabled": true, "timeout": 5000, "toolTimeout": 600000, },
      { "name": "gh", "type": "remote", "url": "https://mcp.example.com/mcp", "transport": "auto",
        "headers": { "Authorization": "Bearer ${env:GITHUB_TOKEN}" },
        "caBundle": "ca.pem", "clientCert": "/abs/c.pem", "clientKey": "keys/k.pem", "enabled": false },
    ],
    /* block comment */
    "pollInterval": 2500,
    "maxResultChars": 1000,
    "maxParallel": 4,
    "trustedProjects": ["/src/a"],
    "approvedProjectServers": ["/src/a:abc"],
    "somethingNew": {"kept": true},
  },
}`,
			want: func(c *Config) {
				fs := local("fs", "npx", "-y", "@modelcontextprotocol/server-filesystem", "/home/me/src")
				fs.Env = map[string]string{"LOG_LEVEL": "warn", "TOKEN": "${env:FS_TOKEN}"}
				fs.Cwd = "/home/me"
				gh := remote("gh", "https://mcp.example.com/mcp")
				gh.Headers = map[string]string{"Authorization": "Bearer ${env:GITHUB_TOKEN}"}
				gh.CABundle, gh.ClientCert, gh.ClientKey = "/etc/fc/ca.pem", "/abs/c.pem", "/etc/fc/keys/k.pem"
				gh.Enabled = false
				c.MCP = MCP{Servers: []Server{fs, gh}, PollInterval: 2500 * time.Millisecond, MaxResultChars: 1000, MaxParallel: 4,
					AutoDeferTools: DefaultAutoDeferTools, AutoDeferTokens: DefaultAutoDeferTokens, IdleTimeout: DefaultIdleTimeout, LogLevel: DefaultLogLevel}
				c.Trusted = []string{"/src/a"}
				c.Approvals = []string{"/src/a:abc"}
				// A key of the mcp section FreeCode does not know is kept
				// in the file and told, at its name.
				c.Warnings = []Problem{{Key: "mcp.somethingNew", Msg: `unknown key "somethingNew" is ignored`, Line: 20, Col: 5, Warning: true}}
			},
		},
		{
			name: "command as one string, overrides, inferred type",
			data: `{"mcp": {"servers": [
				{"name": "a", "command": "node 'my server.js' --flag=\"x y\"", "inheritEnv": true,
				 "timeout": 100, "toolTimeout": 2000, "protocolVersion": "2025-06-18", "maxMessageBytes": 1024, "cwd": "sub"},
				{"name": "b", "url": "http://127.0.0.1:8080/mcp", "transport": "sse"},
				{"name": "c", "type": "remote", "url": "http://[::1]/mcp", "transport": "http"}
			]}}`,
			want: func(c *Config) {
				a := local("a", "node", "my server.js", "--flag=x y")
				a.InheritEnv, a.Timeout, a.ToolTimeout = true, 100*time.Millisecond, 2*time.Second
				a.ProtocolVersion, a.MaxMessageBytes, a.Cwd = "2025-06-18", 1024, "/etc/fc/sub"
				b := remote("b", "http://127.0.0.1:8080/mcp")
				b.Transport = TransportSSE
				cc := remote("c", "http://[::1]/mcp")
				cc.Transport = TransportHTTP
				c.MCP.Servers = []Server{a, b, cc}
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse(path, []byte(tc.data))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			want := defaults()
			tc.want(want)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Parse (-want +got):\n%s", diff)
			}
		})
	}
}

func TestMaxParallel(t *testing.T) {
	tests := []struct {
		value   string
		want    int
		wantErr string
	}{
		{"1", 1, ""},
		{"64", 64, ""},
		{"null", DefaultMaxParallel, ""},
		{"0", 0, "c.json:1:25: mcp.maxParallel: want a whole number from 1 to 64, not 0"},
		{"65", 0, "c.json:1:25: mcp.maxParallel: want a whole number from 1 to 64, not 65"},
		{"-3", 0, "c.json:1:25: mcp.maxParallel: want a whole number from 1 to 64, not -3"},
		{"2.5", 0, "c.json:1:25: mcp.maxParallel: want a whole number from 1 to 64, not 2.5"},
		{`"8"`, 0, `c.json:1:25: mcp.maxParallel: want a whole number from 1 to 64, not "8"`},
		{`"` + strings.Repeat("x", 100) + `"`, 0, `c.json:1:25: mcp.maxParallel: want a whole number from 1 to 64, not "` + strings.Repeat("x", 36) + `...`},
	}
	for _, tc := range tests {
		t.Run(tc.value, func(t *testing.T) {
			cfg, err := Parse("c.json", []byte(`{"mcp": {"maxParallel": `+tc.value+`}}`))
			if tc.wantErr != "" {
				var ve *ValidationError
				if !errors.As(err, &ve) || err.Error() != tc.wantErr {
					t.Fatalf("Parse error = %v, want a *ValidationError %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cfg.MCP.MaxParallel != tc.want {
				t.Errorf("MaxParallel = %d, want %d", cfg.MCP.MaxParallel, tc.want)
			}
		})
	}
}

func TestLoadMissingFile(t *testing.T) {
	got, err := Load(filepath.Join(t.TempDir(), "nope", "config.json"))
	if err != nil {
		t.Fatalf("Load of a missing file: %v", err)
	}
	if diff := cmp.Diff(defaults(), got); diff != "" {
		t.Errorf("Load (-want +got):\n%s", diff)
	}
}

func TestLoadFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.json")
	if err := os.WriteFile(path, []byte(`{"mcp": {"servers": [{"name": "x", "type": "local", "command": ["x"]}]}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]Server{local("x", "x")}, got.MCP.Servers); diff != "" {
		t.Errorf("servers (-want +got):\n%s", diff)
	}
}

func TestParseError(t *testing.T) {
	tests := []struct {
		name, data string
		want       ParseError
	}{
		{"missing comma", "{\n  \"a\": 1\n  \"b\": 2\n}", ParseError{Path: "c.json", Line: 3, Col: 3}},
		{"unterminated", "{\n\"mcp\": {", ParseError{Path: "c.json", Line: 2, Col: 9}},
		{"null", "null", ParseError{Path: "c.json", Line: 1, Col: 1, Msg: "the file must hold a JSON object"}},
		{"not an object", "[1, 2]", ParseError{Path: "c.json", Line: 1, Col: 1, Msg: "the file must hold a JSON object"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("c.json", []byte(tc.data))
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("Parse error = %v (%T), want a *ParseError", err, err)
			}
			if tc.want.Msg == "" {
				tc.want.Msg = pe.Msg
			}
			if diff := cmp.Diff(tc.want, *pe); diff != "" {
				t.Errorf("ParseError (-want +got):\n%s", diff)
			}
			if !strings.HasPrefix(err.Error(), "c.json:") {
				t.Errorf("Error() = %q, want it to start with path:line:col", err)
			}
		})
	}
}

func TestValidationReportsEveryProblem(t *testing.T) {
	data := `{"mcp": {
		"pollInterval": "fast",
		"maxResultChars": -1,
		"trustedProjects": "/x",
		"servers": [
			{"name": "ok", "type": "local", "command": ["x"]},
			{"name": "ok", "type": "local", "command": ["y"]},
			{"name": "a__b", "type": "local", "command": ["x"]},
			{"name": "bad name!", "type": "local", "command": ["x"]},
			{"name": "", "type": "local", "command": ["x"]},
			{"name": "toolong-toolong-toolong-toolong-toolong-toolong-x", "type": "local", "command": ["x"]},
			{"name": "nocmd", "type": "local", "command": []},
			{"name": "t", "type": "local", "command": ["x"], "timeout": "5s", "toolTimeout": 0, "enabled": "yes",
			 "env": {"A": 1}, "maxMessageBytes": 1.5},
			{"name": "plainhttp", "type": "remote", "url": "http://example.com/mcp"},
			{"name": "ftp", "type": "remote", "url": "ftp://example.com/mcp", "transport": "websocket"},
			{"name": "nourl", "type": "remote"},
			{"name": "what", "type": "grpc"},
			{"name": "neither"},
			{"name": "quote", "command": "node 'unterminated"},
			{"name": "mtls", "type": "remote", "url": "https://h/", "clientCert": "c.pem"},
			{"name": 7, "type": "local", "command": ["x"], "protocolVersion": "latest"},
			"just a string"
		]
	}}`
	_, err := Parse("c.json", []byte(data))
	var ve *ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("Parse error = %v (%T), want a *ValidationError", err, err)
	}
	var got []string
	for _, p := range ve.Problems {
		got = append(got, p.Key)
	}
	if !slices.IsSortedFunc(got, compareKeys) {
		t.Errorf("problems are not in the file's order: %q", got)
	}
	want := []string{
		"mcp.pollInterval", "mcp.maxResultChars", "mcp.trustedProjects",
		"mcp.servers[7].timeout", "mcp.servers[7].toolTimeout", "mcp.servers[7].enabled", "mcp.servers[7].env",
		"mcp.servers[7].maxMessageBytes",
		"mcp.servers[13].command",
		"mcp.servers[15].name", "mcp.servers[15].protocolVersion", "mcp.servers[16]",
		"mcp.servers[1].name", "mcp.servers[2].name", "mcp.servers[3].name", "mcp.servers[4].name",
		"mcp.servers[5].name", "mcp.servers[6].command",
		"mcp.servers[8].url", "mcp.servers[9].url", "mcp.servers[9].transport", "mcp.servers[10].url",
		"mcp.servers[11].type", "mcp.servers[12].type", "mcp.servers[14].clientCert",
	}
	if diff := cmp.Diff(sortedCopy(want), sortedCopy(got)); diff != "" {
		t.Errorf("problem keys (-want +got):\n%s\nerror:\n%v", diff, err)
	}
	msg := err.Error()
	for _, s := range []string{
		`c.json: 25 problems:`,
		`mcp.servers[7].timeout (server "t"): want a number of milliseconds`,
		`mcp.servers[7].toolTimeout (server "t"): want a whole number of milliseconds greater than 0`,
		`"__": it separates server and tool in tool ids`,
		`duplicate name: mcp.servers[0] has it already`,
		`http is allowed only to a loopback host`,
		`mcp.pollInterval: want a number of milliseconds`,
		`mcp.servers[16]: want an object`,
		`unterminated ' quote`,
	} {
		if !strings.Contains(msg, s) {
			t.Errorf("error does not contain %q:\n%s", s, msg)
		}
	}
}

func sortedCopy(s []string) []string {
	c := append([]string(nil), s...)
	for i := range c {
		for j := i + 1; j < len(c); j++ {
			if c[j] < c[i] {
				c[i], c[j] = c[j], c[i]
			}
		}
	}
	return c
}

func TestOneProblemError(t *testing.T) {
	_, err := Parse("c.json", []byte(`{"mcp": {"servers": [{"name": "x", "type": "remote", "url": "http://10.0.0.1/"}]}}`))
	want := `c.json:1:61: mcp.servers[0].url (server "x"): url "http://10.0.0.1/": http is allowed only to a loopback host (localhost, 127.0.0.0/8, ::1); use https`
	if err == nil || err.Error() != want {
		t.Errorf("error = %v\nwant %s", err, want)
	}
}

func TestCheckURL(t *testing.T) {
	for _, tc := range []struct {
		url string
		ok  bool
	}{
		{"https://example.com/mcp", true},
		{"https://${env:HOST}/mcp", false}, // the host must be literal
		{"https://example.com/mcp?key=${env:KEY}", true},
		{"http://localhost:3000/mcp", true},
		{"http://LOCALHOST/mcp", true},
		{"http://127.0.0.1/mcp", true},
		{"http://127.8.9.10:1/mcp", true},
		{"http://[::1]:8080/", true},
		{"http://example.com/", false},
		{"http://10.0.0.1/", false},
		{"http://localhost.evil.com/", false},
		{"ws://localhost/", false},
		{"https:///nohost", false},
		{"", false},
	} {
		if err := CheckURL(tc.url); (err == nil) != tc.ok {
			t.Errorf("CheckURL(%q) = %v, want ok=%v", tc.url, err, tc.ok)
		}
	}
	// A refused URL's error does not repeat its secrets.
	for _, u := range []string{
		"http://example.com/mcp?api_key=s3cr3t",
		"ftp://u:s3cr3t@example.com/",
		"https://u:s3cr3t@exa mple.com/?k=s3cr3t",
		"https://${env:H}/mcp?k=s3cr3t",
	} {
		if err := CheckURL(u); err == nil || strings.Contains(err.Error(), "s3cr3t") {
			t.Errorf("CheckURL(%q) = %v, want an error without the secret", u, err)
		}
	}
}

func TestCheckNameEdgeUnderscore(t *testing.T) {
	for _, name := range []string{"a_", "_a", "_", "gh_"} {
		if err := CheckName(name); err == nil || !strings.Contains(err.Error(), "ambiguous") {
			t.Errorf("CheckName(%q) = %v, want an error about ambiguous ids", name, err)
		}
	}
	for _, name := range []string{"a_b", "a-", "-a", "my_server-2"} {
		if err := CheckName(name); err != nil {
			t.Errorf("CheckName(%q) = %v, want nil", name, err)
		}
	}
}
