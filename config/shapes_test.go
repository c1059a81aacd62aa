package config

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Other clients' shapes of a server entry mean what they mean there.
func TestParseOtherClientsShapes(t *testing.T) {
	const path = "/etc/fc/config.json"
	tests := []struct {
		name string
		data string
		want Server
	}{
		{
			name: "command and args (Claude Desktop, Cursor, VS Code)",
			data: `{"mcp": {"servers": [{"name": "a", "command": "node", "args": ["server.js", "--root", "/my dir"]}]}}`,
			want: local("a", "node", "server.js", "--root", "/my dir"),
		},
		{
			name: "a command with a space in its path is the program, not a command line, beside args",
			data: `{"mcp": {"servers": [{"name": "a", "command": "/opt/My Tools/node", "args": ["s.js"]}]}}`,
			want: local("a", "/opt/My Tools/node", "s.js"),
		},
		{
			name: "args after an argv command",
			data: `{"mcp": {"servers": [{"name": "a", "command": ["npx", "-y"], "args": ["@x/y"]}]}}`,
			want: local("a", "npx", "-y", "@x/y"),
		},
		{
			name: "empty args",
			data: `{"mcp": {"servers": [{"name": "a", "command": "node", "args": []}]}}`,
			want: local("a", "node"),
		},
		{
			name: "type stdio is a local server",
			data: `{"mcp": {"servers": [{"name": "a", "type": "stdio", "command": "node", "args": ["s.js"]}]}}`,
			want: local("a", "node", "s.js"),
		},
		{
			name: "type http is a remote server over Streamable HTTP",
			data: `{"mcp": {"servers": [{"name": "r", "type": "http", "url": "https://mcp.example.com/mcp"}]}}`,
			want: func() Server { s := remote("r", "https://mcp.example.com/mcp"); s.Transport = TransportHTTP; return s }(),
		},
		{
			name: "type sse is a remote server over HTTP+SSE",
			data: `{"mcp": {"servers": [{"name": "r", "type": "sse", "url": "https://mcp.example.com/sse"}]}}`,
			want: func() Server { s := remote("r", "https://mcp.example.com/sse"); s.Transport = TransportSSE; return s }(),
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := Parse(path, []byte(tc.data))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if len(cfg.Warnings) > 0 {
				t.Errorf("warnings: %v", cfg.Warnings)
			}
			if len(cfg.MCP.Servers) != 1 {
				t.Fatalf("servers = %v", cfg.MCP.Servers)
			}
			if diff := cmp.Diff(tc.want, cfg.MCP.Servers[0]); diff != "" {
				t.Errorf("server (-want +got):\n%s", diff)
			}
		})
	}
}

// Every key FreeCode does not read is a warning at its name's line and
// column; the file loads, and its other keys count.
func TestParseUnknownKeysWarn(t *testing.T) {
	data := `{
  // someone else's
  "theme": "dark",
  "mcp": {
    "servers": [
      {
        "name": "a",
        "command": "node",
        "disabled": true,
        "envFile": ".env",
        "timout": 100,
      },
      {"name": "r", "url": "https://mcp.example.com/mcp", "oauth": {"audience": "x"}},
    ],
    "pollIntervall": 10,
  },
}`
	cfg, err := Parse("/etc/fc/config.json", []byte(data))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	want := []Problem{
		{Key: "mcp.pollIntervall", Msg: `unknown key "pollIntervall" is ignored; did you mean "pollInterval"?`, Line: 15, Col: 5, Warning: true},
		{Key: "mcp.servers[0].disabled", Server: "a", Msg: `unknown key "disabled" is ignored: FreeCode's is "enabled": false`, Line: 9, Col: 9, Warning: true},
		{Key: "mcp.servers[0].envFile", Server: "a", Msg: `unknown key "envFile" is ignored: FreeCode does not read env files: put the variables in "env"`, Line: 10, Col: 9, Warning: true},
		{Key: "mcp.servers[0].timout", Server: "a", Msg: `unknown key "timout" is ignored; did you mean "timeout"?`, Line: 11, Col: 9, Warning: true},
		{Key: "mcp.servers[1].oauth.audience", Server: "r", Msg: `unknown key "audience" is ignored`, Line: 13, Col: 69, Warning: true},
	}
	if diff := cmp.Diff(want, cfg.Warnings); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
	if got := cfg.MCP.Servers[0].Command; !cmp.Equal(got, []string{"node"}) {
		t.Errorf("command = %q", got)
	}
}

// A broken rule is reported at the line and column of its value, or of the
// entry that lacks it; a shape that contradicts itself is a problem.
func TestParseProblemPositions(t *testing.T) {
	data := `{"mcp": {
  "maxParallel": 0,
  "servers": [
    {"name": "ok", "command": "node"},
    {"name": "noCommand",
     "type": "local"},
    {"name": "r", "type": "http", "transport": "sse",
     "url": "ftp://x"},
    {"name": "a", "args": ["x"], "url": "https://mcp.example.com/mcp"},
    {"name": "t", "type": "stdio", "timeout": -1, "bogus": 1, "command": "x"}
  ]
}}`
	_, err := Parse("/etc/fc/config.json", []byte(data))
	var ve *ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("Parse error = %v, want a *ValidationError", err)
	}
	type at struct {
		Key       string
		Line, Col int
	}
	var got []at
	for _, p := range ve.Problems {
		got = append(got, at{p.Key, p.Line, p.Col})
	}
	want := []at{
		{"mcp.maxParallel", 2, 18},
		{"mcp.servers[1].command", 5, 5}, // missing: the entry
		{"mcp.servers[2].transport", 7, 48},
		{"mcp.servers[2].url", 8, 13},
		{"mcp.servers[3].args", 9, 27},
		{"mcp.servers[4].timeout", 10, 47},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("problems (-want +got):\n%s\n%v", diff, ve)
	}
	// The warnings of a file that does not load are told beside its errors.
	if len(ve.Warnings) != 1 || ve.Warnings[0].Key != "mcp.servers[4].bogus" || ve.Warnings[0].Line != 10 {
		t.Errorf("warnings = %+v", ve.Warnings)
	}
}
