package config

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestImport(t *testing.T) {
	withEnv := func(s Server, env map[string]string) Server { s.Env = env; return s }
	withHeaders := func(s Server, transport string, h map[string]string) Server {
		s.Transport, s.Headers = transport, h
		return s
	}
	disabled := func(s Server) Server { s.Enabled = false; return s }
	tests := []struct {
		name, kind, data string
		want             []Server
		warnings         []string
	}{
		{
			name: "claude desktop",
			kind: ImportClaudeDesktop,
			data: `{
  "mcpServers": {
    "filesystem": {
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-filesystem", "/Users/me/Desktop", "/Users/me/Downloads"]
    },
    "github": {
      "command": "docker",
      "args": ["run", "-i", "--rm", "-e", "GITHUB_PERSONAL_ACCESS_TOKEN", "ghcr.io/github/github-mcp-server"],
      "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_xxx"}
    },
    "brave.search": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-brave-search"], "alwaysAllow": ["x"]}
  },
  "globalShortcut": "Ctrl+Space"
}`,
			want: []Server{
				local("filesystem", "npx", "-y", "@modelcontextprotocol/server-filesystem", "/Users/me/Desktop", "/Users/me/Downloads"),
				withEnv(local("github", "docker", "run", "-i", "--rm", "-e", "GITHUB_PERSONAL_ACCESS_TOKEN", "ghcr.io/github/github-mcp-server"),
					map[string]string{"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_xxx"}),
				local("brave-search", "npx", "-y", "@modelcontextprotocol/server-brave-search"),
			},
			warnings: []string{
				`server "brave.search" imported as "brave-search"`,
				`server "brave-search": alwaysAllow not carried over`,
			},
		},
		{
			name: "cursor",
			kind: ImportCursor,
			data: `{
  "mcpServers": {
    "server-name": {
      "command": "python",
      "args": ["mcp-server.py"],
      "env": {"API_KEY": "${env:MY_KEY}", "HOME_DIR": "${userHome}/x", "ROOT": "${workspaceFolder}"}
    },
    "remote": {"url": "https://api.example.com/mcp", "headers": {"Authorization": "Bearer ${env:TOKEN}"}},
    "legacy": {"type": "sse", "url": "http://localhost:8000/sse"},
    "off": {"command": "x", "disabled": true},
    "insecure": {"url": "http://api.example.com/mcp"}
  }
}`,
			want: []Server{
				withEnv(local("server-name", "python", "mcp-server.py"),
					map[string]string{"API_KEY": "${env:MY_KEY}", "HOME_DIR": "${env:HOME}/x", "ROOT": "${workspaceFolder}"}),
				withHeaders(remote("remote", "https://api.example.com/mcp"), TransportAuto, map[string]string{"Authorization": "Bearer ${env:TOKEN}"}),
				withHeaders(remote("legacy", "http://localhost:8000/sse"), TransportSSE, nil),
				disabled(local("off", "x")),
			},
			warnings: []string{
				`server "server-name": env ROOT: ${workspaceFolder} cannot be carried over`,
				`server "insecure" left out: url: url "http://api.example.com/mcp": http is allowed only to a loopback host`,
			},
		},
		{
			name: "claude code",
			kind: ImportClaudeCode,
			data: `{
  "numStartups": 12,
  "mcpServers": {
    "sentry": {"type": "http", "url": "https://mcp.sentry.dev/mcp"},
    "api": {"type": "sse", "url": "${API_BASE_URL:-https://api.example.com}/sse", "headers": {"X-API-Key": "${API_KEY}"}},
    "keyed": {"type": "sse", "url": "https://api.example.com/sse?t=${TENANT}", "headers": {"X-API-Key": "${API_KEY}"}},
    "db": {"type": "stdio", "command": "/usr/local/bin/db-server", "args": ["--config", "${CONFIG_PATH}"], "env": {"DB_URL": "${DB_URL}"}}
  },
  "projects": {
    "/home/me/src/app": {
      "allowedTools": [],
      "mcpServers": {
        "sentry": {"type": "http", "url": "https://other.example.com/mcp"},
        "my__tool": {"type": "stdio", "command": "node", "args": ["tool.js"], "env": {}}
      }
    },
    "/home/me/src/empty": {"mcpServers": {}}
  }
}`,
			want: []Server{
				withHeaders(remote("sentry", "https://mcp.sentry.dev/mcp"), TransportHTTP, nil),
				withHeaders(remote("keyed", "https://api.example.com/sse?t=${env:TENANT}"), TransportSSE, map[string]string{"X-API-Key": "${env:API_KEY}"}),
				withEnv(local("db", "/usr/local/bin/db-server", "--config", "${CONFIG_PATH}"), map[string]string{"DB_URL": "${env:DB_URL}"}),
				withHeaders(remote("sentry-2", "https://other.example.com/mcp"), TransportHTTP, nil),
				withEnv(local("my_tool", "node", "tool.js"), map[string]string{}),
			},
			warnings: []string{
				`server "api": url: default in ${API_BASE_URL:-https://api.example.com} dropped`,
				`server "api" left out: url: url "${env:API_BASE_URL}/sse": write the scheme and host out`,
				`server "db": command: ${CONFIG_PATH} is not expanded in a command`,
				`server "sentry" imported as "sentry-2"`,
				`server "my__tool" imported as "my_tool"`,
				`project /home/me/src/app: sentry-2, my_tool imported as user servers`,
			},
		},
		{
			name: "vscode",
			kind: ImportVSCode,
			data: `{
  // 💡 Inputs are prompted on first server start, then stored securely by VS Code.
  "inputs": [
    {"type": "promptString", "id": "perplexity-key", "description": "Perplexity API Key", "password": true},
    {"type": "promptString", "id": "org", "description": "Organization"}
  ],
  "servers": {
    // https://github.com/ppl-ai/modelcontextprotocol/
    "Perplexity": {
      "type": "stdio",
      "command": "npx",
      "args": ["-y", "server-perplexity-ask"],
      "env": {"PERPLEXITY_API_KEY": "${input:perplexity-key}", "ORG": "${input:org}"},
      "envFile": "${workspaceFolder}/.env",
    },
    "github": {"type": "http", "url": "https://api.githubcopilot.com/mcp/", "headers": {"Authorization": "Bearer ${env:GH_TOKEN}"}},
    "fetch": {"command": "uvx", "args": ["mcp-server-fetch"]},
    "odd": {"type": "websocket", "url": "https://ws.example.com/"},
    "nothing": {"type": "stdio"},
  },
}`,
			want: []Server{
				withEnv(local("Perplexity", "npx", "-y", "server-perplexity-ask"), map[string]string{"PERPLEXITY_API_KEY": "${secret:perplexity-key}", "ORG": "${env:ORG}"}),
				withHeaders(remote("github", "https://api.githubcopilot.com/mcp/"), TransportHTTP, map[string]string{"Authorization": "Bearer ${env:GH_TOKEN}"}),
				local("fetch", "uvx", "mcp-server-fetch"),
				withHeaders(remote("odd", "https://ws.example.com/"), TransportAuto, nil),
			},
			warnings: []string{
				`server "Perplexity": env ORG: ${input:org} is a prompt FreeCode cannot show; replaced by ${env:ORG}`,
				`server "Perplexity": envFile "${workspaceFolder}/.env" not carried over`,
				`server "odd": type "websocket" unknown, transport set to auto`,
				`server "nothing" left out: command: a local server needs a non-empty command`,
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, warnings, err := Import(tc.kind, []byte(tc.data))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("servers (-want +got):\n%s", diff)
			}
			for _, w := range tc.warnings {
				found := false
				for _, g := range warnings {
					found = found || strings.Contains(g, w)
				}
				if !found {
					t.Errorf("no warning contains %q; warnings:\n%s", w, strings.Join(warnings, "\n"))
				}
			}
			if len(warnings) != len(tc.warnings) {
				t.Errorf("%d warnings, want %d:\n%s", len(warnings), len(tc.warnings), strings.Join(warnings, "\n"))
			}
			// Everything imported can be written and read back.
			for _, s := range got {
				if err := CheckName(s.Name); err != nil {
					t.Errorf("imported name: %v", err)
				}
			}
		})
	}
}

func TestImportErrors(t *testing.T) {
	tests := []struct{ name, kind, data, wantErr string }{
		{"unknown kind", "zed", `{}`, `unknown import kind "zed"`},
		{"syntax", ImportCursor, "{\n  \"mcpServers\": {,}\n}", `cursor:2:`},
		{"no servers", ImportClaudeDesktop, `{"globalShortcut": "x"}`, `no "mcpServers" object`},
		{"vscode file given as cursor", ImportCursor, `{"servers": {}}`, `no "mcpServers" object`},
		{"servers not an object", ImportVSCode, `{"servers": []}`, `servers: want an object`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := Import(tc.kind, []byte(tc.data))
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("Import error = %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}

// VS Code's password inputs become secrets of FreeCode's store, named by
// their ids (made valid names), wherever FreeCode expands; a command is
// not expanded, so one there is left as it was, with a warning.
func TestImportVSCodeSecrets(t *testing.T) {
	data := `{
  "inputs": [
    {"type": "promptString", "id": "api-key", "description": "API key", "password": true},
    {"type": "promptString", "id": "gh token", "description": "GitHub token", "password": true},
    {"type": "promptString", "id": "gh_token", "description": "Another", "password": true},
    {"type": "promptString", "id": "in-command", "password": true},
    {"type": "promptString", "id": "unused", "password": true},
    {"type": "pickString", "id": "region", "options": ["eu", "us"]},
    "not an input"
  ],
  "servers": {
    "one": {"command": "x", "env": {"KEY": "${input:api-key}", "REGION": "${input:region}"}},
    "two": {"type": "http", "url": "https://api.example.com/${input:region}/mcp",
            "headers": {"Authorization": "Bearer ${input:gh token}", "X-Other": "${input:gh_token}", "X-Key": "${input:api-key}"}},
    "three": {"command": "run", "args": ["--key", "${input:in-command}"]},
    "dropped": {"url": "http://example.com/mcp", "headers": {"X-Key": "${input:api-key}"}}
  }
}`
	servers, secrets, warnings, err := ImportWithSecrets(ImportVSCode, []byte(data))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]map[string]string{}
	for _, s := range servers {
		got[s.Name] = map[string]string{"command": strings.Join(s.Command, " "), "url": s.URL}
		for k, v := range s.Env {
			got[s.Name]["env "+k] = v
		}
		for k, v := range s.Headers {
			got[s.Name]["header "+k] = v
		}
	}
	want := map[string]map[string]string{
		"one": {"command": "x", "url": "", "env KEY": "${secret:api-key}", "env REGION": "${env:REGION}"},
		"two": {
			"command": "", "url": "https://api.example.com/${env:REGION}/mcp",
			"header Authorization": "Bearer ${secret:gh_token}", "header X-Other": "${secret:gh_token-2}", "header X-Key": "${secret:api-key}",
		},
		"three": {"command": "run --key ${input:in-command}", "url": ""},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("servers (-want +got):\n%s", diff)
	}
	wantSecrets := []ImportedSecret{
		{Name: "api-key", Input: "api-key", Description: "API key", Servers: []string{"one", "two"}},
		{Name: "gh_token", Input: "gh token", Description: "GitHub token", Servers: []string{"two"}},
		{Name: "gh_token-2", Input: "gh_token", Description: "Another", Servers: []string{"two"}},
	}
	if diff := cmp.Diff(wantSecrets, secrets); diff != "" {
		t.Errorf("secrets (-want +got):\n%s", diff)
	}
	for _, w := range []string{
		`server "three": command: ${input:in-command} is not expanded in a command`,
		`server "dropped" left out`,
	} {
		if !slices.ContainsFunc(warnings, func(g string) bool { return strings.Contains(g, w) }) {
			t.Errorf("no warning contains %q; warnings:\n%s", w, strings.Join(warnings, "\n"))
		}
	}
	for _, w := range warnings {
		if strings.Contains(w, "api-key") || strings.Contains(w, "gh token") {
			t.Errorf("a password input is carried over, yet warned about: %s", w)
		}
	}
}

// An import of FreeCode's own config file in VS Code's settings shape says
// the secrets too, its inputs under "mcp".
func TestImportFileVSCodeSecrets(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.json")
	data := `{"mcp": {
  "inputs": [{"type": "promptString", "id": "key", "description": "The key", "password": true}],
  "servers": {"a": {"command": "x", "env": {"K": "${input:key}"}}}
}}`
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	res, err := ImportFile(path, ImportVSCode, false)
	if err != nil {
		t.Fatal(err)
	}
	want := []ImportedSecret{{Name: "key", Input: "key", Description: "The key", Servers: []string{"a"}}}
	if diff := cmp.Diff(want, res.Secrets); diff != "" {
		t.Errorf("secrets (-want +got):\n%s", diff)
	}
	cfg, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if s, ok := cfg.Server("a"); !ok || s.Env["K"] != "${secret:key}" {
		t.Errorf("the converted file's server a: %+v", s)
	}
}
