package config

import (
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
    {"type": "promptString", "id": "perplexity-key", "description": "Perplexity API Key", "password": true}
  ],
  "servers": {
    // https://github.com/ppl-ai/modelcontextprotocol/
    "Perplexity": {
      "type": "stdio",
      "command": "npx",
      "args": ["-y", "server-perplexity-ask"],
      "env": {"PERPLEXITY_API_KEY": "${input:perplexity-key}"},
      "envFile": "${workspaceFolder}/.env",
    },
    "github": {"type": "http", "url": "https://api.githubcopilot.com/mcp/", "headers": {"Authorization": "Bearer ${env:GH_TOKEN}"}},
    "fetch": {"command": "uvx", "args": ["mcp-server-fetch"]},
    "odd": {"type": "websocket", "url": "https://ws.example.com/"},
    "nothing": {"type": "stdio"},
  },
}`,
			want: []Server{
				withEnv(local("Perplexity", "npx", "-y", "server-perplexity-ask"), map[string]string{"PERPLEXITY_API_KEY": "${env:PERPLEXITY_KEY}"}),
				withHeaders(remote("github", "https://api.githubcopilot.com/mcp/"), TransportHTTP, map[string]string{"Authorization": "Bearer ${env:GH_TOKEN}"}),
				local("fetch", "uvx", "mcp-server-fetch"),
				withHeaders(remote("odd", "https://ws.example.com/"), TransportAuto, nil),
			},
			warnings: []string{
				`server "Perplexity": env PERPLEXITY_API_KEY: ${input:perplexity-key} is a prompt FreeCode cannot show; replaced by ${env:PERPLEXITY_KEY}`,
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
