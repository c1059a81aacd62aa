package config

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/freecode/freecode/internal/filelock"
	"github.com/google/go-cmp/cmp"
	"github.com/tailscale/hujson"
)

// userFile is a config file as a person (or another FreeCode frontend)
// wrote it: comments, a secret, trailing commas, two-space indents.
const userFile = `// FreeCode settings
{
  "model": "claude-sonnet",   // the active model
  "provider": {
    "anthropic": { "apiKey": "sk-ant-SECRET" },
  },
  /* MCP */
  "mcp": {
    "servers": [
      // the filesystem
      {
        "name": "fs",
        "type": "local",
        "command": ["npx", "-y", "@modelcontextprotocol/server-filesystem", "/home/me/src"], // pinned
      },
      { "name": "gh", "type": "remote", "url": "https://mcp.example.com/mcp", "enabled": false },
    ],
    "pollInterval": 5000,
    "future": {"x": 1},
  },
  "theme": "dark",
}
`

func writeFile(t *testing.T, content string, mode os.FileMode) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.json")
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil { // past the umask
		t.Fatal(err)
	}
	return path
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestEdits(t *testing.T) {
	tests := []struct {
		name string
		edit func(path string) error
		want string // the whole file afterwards
	}{
		{
			name: "add a local server",
			edit: func(path string) error {
				s := Server{Name: "mem", Type: TypeLocal, Enabled: true, Command: []string{"npx", "-y", "@modelcontextprotocol/server-memory"},
					Env: map[string]string{"B": "2", "A": "${env:A}"}, ToolTimeout: 30 * time.Second}
				return AddServer(path, s)
			},
			want: strings.Replace(userFile, `      { "name": "gh", "type": "remote", "url": "https://mcp.example.com/mcp", "enabled": false },
`, `      { "name": "gh", "type": "remote", "url": "https://mcp.example.com/mcp", "enabled": false },
      {
        "name": "mem",
        "type": "local",
        "command": ["npx", "-y", "@modelcontextprotocol/server-memory"],
        "env": {
          "A": "${env:A}",
          "B": "2"
        },
        "toolTimeout": 30000
      },
`, 1),
		},
		{
			name: "add a remote server",
			edit: func(path string) error {
				s := Server{Name: "api", Type: TypeRemote, URL: "https://h.example/mcp?a=1&b=<2>", Transport: TransportSSE,
					Headers: map[string]string{"Authorization": "Bearer ${env:TOKEN}"}, CABundle: "ca.pem"}
				return AddServer(path, s)
			},
			want: strings.Replace(userFile, `      { "name": "gh", "type": "remote", "url": "https://mcp.example.com/mcp", "enabled": false },
`, `      { "name": "gh", "type": "remote", "url": "https://mcp.example.com/mcp", "enabled": false },
      {
        "name": "api",
        "type": "remote",
        "url": "https://h.example/mcp?a=1&b=<2>",
        "transport": "sse",
        "headers": {
          "Authorization": "Bearer ${env:TOKEN}"
        },
        "caBundle": "ca.pem",
        "enabled": false
      },
`, 1),
		},
		{
			name: "remove a server",
			edit: func(path string) error { return RemoveServer(path, "gh") },
			want: strings.Replace(userFile, `      { "name": "gh", "type": "remote", "url": "https://mcp.example.com/mcp", "enabled": false },
`, ``, 1),
		},
		{
			name: "remove the first server and its comment",
			edit: func(path string) error { return RemoveServer(path, "fs") },
			want: strings.Replace(userFile, `      // the filesystem
      {
        "name": "fs",
        "type": "local",
        "command": ["npx", "-y", "@modelcontextprotocol/server-filesystem", "/home/me/src"], // pinned
      },
`, ``, 1),
		},
		{
			name: "disable a server",
			edit: func(path string) error { return SetEnabled(path, "fs", false) },
			want: strings.Replace(userFile, `"/home/me/src"], // pinned
      },`, `"/home/me/src"], // pinned
        "enabled": false,
      },`, 1),
		},
		{
			name: "enable a server: the key goes, true being the default",
			edit: func(path string) error { return SetEnabled(path, "gh", true) },
			want: strings.Replace(userFile, `, "enabled": false }`, ` }`, 1),
		},
		{
			name: "enable an enabled server writes nothing",
			edit: func(path string) error { return SetEnabled(path, "fs", true) },
			want: userFile,
		},
		{
			name: "approve twice",
			edit: func(path string) error {
				if err := Approve(path, "/src/p:abc"); err != nil {
					return err
				}
				return Approve(path, "/src/p:abc")
			},
			want: strings.Replace(userFile, `    "future": {"x": 1},
`, `    "future": {"x": 1},
    "approvedProjectServers": ["/src/p:abc"],
`, 1),
		},
		{
			name: "approve then unapprove",
			edit: func(path string) error {
				if err := Approve(path, "/src/p:abc"); err != nil {
					return err
				}
				return Unapprove(path, "/src/p:abc")
			},
			want: strings.Replace(userFile, `    "future": {"x": 1},
`, `    "future": {"x": 1},
    "approvedProjectServers": [],
`, 1),
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := writeFile(t, userFile, 0o640)
			if err := tc.edit(path); err != nil {
				t.Fatal(err)
			}
			got := readFile(t, path)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("file (-want +got):\n%s", diff)
			}
			fi, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if fi.Mode().Perm() != 0o640 {
				t.Errorf("mode = %v, want 0640 kept", fi.Mode().Perm())
			}
			if _, err := Load(path); err != nil {
				t.Errorf("the edited file does not load: %v", err)
			}
		})
	}
}

func TestAddServerNewFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "config.json")
	if err := AddServer(path, Server{Name: "x", Type: TypeLocal, Enabled: true, Command: []string{"x"}}); err != nil {
		t.Fatal(err)
	}
	if err := SetTrusted(path, "/no/such/project", true); err != nil {
		t.Fatal(err)
	}
	want := `{
  "mcp": {
    "servers": [
      {
        "name": "x",
        "type": "local",
        "command": ["x"]
      }
    ],
    "trustedProjects": ["/no/such/project"]
  }
}
`
	if diff := cmp.Diff(want, readFile(t, path)); diff != "" {
		t.Errorf("file (-want +got):\n%s", diff)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("new file mode = %v, want 0600", fi.Mode().Perm())
	}
	cfg, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]Server{local("x", "x")}, cfg.MCP.Servers); diff != "" {
		t.Errorf("servers after AddServer (-want +got):\n%s", diff)
	}
}

// A round trip: every field AddServer writes comes back from Load.
func TestAddServerRoundTrip(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config.json")
	s := remote("r", "http://localhost:9/mcp")
	s.Transport, s.Headers, s.Enabled = TransportHTTP, map[string]string{"A": "b"}, false
	s.CABundle, s.ClientCert, s.ClientKey = filepath.Join(dir, "ca.pem"), filepath.Join(dir, "c.pem"), filepath.Join(dir, "k.pem")
	s.Timeout, s.ToolTimeout, s.ProtocolVersion, s.MaxMessageBytes = time.Second, time.Minute, "2025-03-26", 1<<10
	l := local("l", "a b", `c"d`)
	l.Env, l.Cwd, l.InheritEnv = map[string]string{"X": "1"}, "/tmp", true
	for _, srv := range []Server{s, l} {
		if err := AddServer(path, srv); err != nil {
			t.Fatal(err)
		}
	}
	cfg, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]Server{s, l}, cfg.MCP.Servers); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
}

func TestEditErrors(t *testing.T) {
	tests := []struct {
		name    string
		file    string
		edit    func(path string) error
		wantErr string
	}{
		{"duplicate", userFile, func(p string) error {
			return AddServer(p, Server{Name: "fs", Type: TypeLocal, Command: []string{"x"}})
		}, `already has a server of that name`},
		{"bad name", userFile, func(p string) error {
			return AddServer(p, Server{Name: "a__b", Type: TypeLocal, Command: []string{"x"}})
		}, `must not contain "__"`},
		{"bad url", userFile, func(p string) error {
			return AddServer(p, Server{Name: "r", Type: TypeRemote, URL: "http://example.com"})
		}, `url: url "http://example.com": http is allowed only to a loopback host`},
		{"remove unknown", userFile, func(p string) error { return RemoveServer(p, "nope") }, `no such server "nope"`},
		{"enable unknown", userFile, func(p string) error { return SetEnabled(p, "nope", false) }, `no such server "nope"`},
		{"syntax error", "{\n  \"provider\": {\"k\": \"sk-SECRET\"}\n  \"mcp\": {}\n}\n", func(p string) error {
			return AddServer(p, Server{Name: "x", Type: TypeLocal, Command: []string{"x"}})
		}, `config.json:3:3: `},
		{"mcp not an object", `{"mcp": [1]}`, func(p string) error { return Approve(p, "k") }, `mcp: want an object`},
		{"servers not an array", `{"mcp": {"servers": {}}}`, func(p string) error { return RemoveServer(p, "x") }, `mcp.servers: want an array`},
		{"trusted not an array", `{"mcp": {"trustedProjects": "x"}}`, func(p string) error { return SetTrusted(p, "/x", true) }, `mcp.trustedProjects: want an array of strings`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := writeFile(t, tc.file, 0o600)
			err := tc.edit(path)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("error = %v, want one containing %q", err, tc.wantErr)
			}
			if got := readFile(t, path); got != tc.file {
				t.Errorf("the file changed after a failed edit:\n%s", got)
			}
			entries, _ := os.ReadDir(filepath.Dir(path))
			for _, e := range entries {
				// The lock file stays, by design (see internal/filelock).
				if p := filepath.Join(filepath.Dir(path), e.Name()); p != path && p != filelock.Path(path) {
					t.Errorf("temporary file left behind: %s", e.Name())
				}
			}
		})
	}
}

func TestSetTrusted(t *testing.T) {
	dir := t.TempDir()
	project := filepath.Join(dir, "project")
	link := filepath.Join(dir, "link")
	if err := os.Mkdir(project, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(project, link); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "config.json")
	if err := SetTrusted(path, link, true); err != nil {
		t.Fatal(err)
	}
	if err := SetTrusted(path, project, true); err != nil { // the same project: no second entry
		t.Fatal(err)
	}
	cfg, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	real, _ := filepath.EvalSymlinks(project)
	if diff := cmp.Diff([]string{real}, cfg.Trusted); diff != "" {
		t.Errorf("trusted (-want +got):\n%s", diff)
	}
	if !cfg.IsTrusted(link) || !cfg.IsTrusted(project+"/") || cfg.IsTrusted(dir) {
		t.Errorf("IsTrusted: link %v, project %v, parent %v; want true, true, false",
			cfg.IsTrusted(link), cfg.IsTrusted(project+"/"), cfg.IsTrusted(dir))
	}
	if err := SetTrusted(path, link, false); err != nil {
		t.Fatal(err)
	}
	if cfg, err = Load(path); err != nil || len(cfg.Trusted) != 0 {
		t.Errorf("after SetTrusted(false): %v, %v; want none", cfg.Trusted, err)
	}
}

// A config that is a symbolic link (a dotfiles repository) stays a link:
// the edit goes to the file it points to.
func TestEditThroughSymlink(t *testing.T) {
	target := writeFile(t, userFile, 0o644)
	link := filepath.Join(t.TempDir(), "config.json")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if err := SetEnabled(link, "fs", false); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Lstat(link)
	if err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("after the edit %s is no longer a symbolic link (%v, %v)", link, fi, err)
	}
	cfg, err := Load(link)
	if err != nil {
		t.Fatal(err)
	}
	if s, ok := cfg.Server("fs"); !ok || s.Enabled {
		t.Errorf("server fs after SetEnabled(false) through the link: %+v", s)
	}
	if fi, _ := os.Stat(target); fi.Mode().Perm() != 0o644 {
		t.Errorf("target mode = %v, want 0644 kept", fi.Mode().Perm())
	}
}

// An edit that changes nothing does not touch the file, so watchers of the
// file see no event.
func TestNoOpEditKeepsFile(t *testing.T) {
	path := writeFile(t, userFile, 0o600)
	before, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, edit := range []func() error{
		func() error { return SetEnabled(path, "fs", true) },
		func() error { return SetTrusted(path, "/nowhere", false) },
		func() error { return Unapprove(path, "k") },
	} {
		if err := edit(); err != nil {
			t.Fatal(err)
		}
	}
	after, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if !os.SameFile(before, after) || readFile(t, path) != userFile {
		t.Error("a no-op edit replaced the file")
	}
}

// TestUpdateFileKeepsConcurrentWrite: another program (the FreeCode app
// saving a provider key) writes the file while an edit is under way. The
// edit is redone on the new file instead of renaming a copy of the old one
// over it, which would silently undo that write.
func TestUpdateFileKeepsConcurrentWrite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.json")
	if err := os.WriteFile(path, []byte("{\n  \"provider\": {\"apiKey\": \"old\"}\n}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	calls := 0
	err := UpdateFile(path, func(root *hujson.Value) error {
		calls++
		if calls == 1 { // the app saves its new key while we edit
			if err := os.WriteFile(path, []byte("{\n  \"provider\": {\"apiKey\": \"new\"}\n}\n"), 0o600); err != nil {
				return err
			}
		}
		return ensure(root, "/mcp", "{}", "/mcp/servers", "[]")
	})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(path)
	if !strings.Contains(string(got), `"new"`) || !strings.Contains(string(got), `"servers"`) {
		t.Errorf("after the edit the file is:\n%s\nwant the app's new key and our servers", got)
	}
	if calls != 2 {
		t.Errorf("the edit ran %d times, want 2 (redone once on the new file)", calls)
	}

	// A file that never stops changing is left alone, with an error.
	calls = 0
	err = UpdateFile(path, func(root *hujson.Value) error {
		calls++
		if err := os.WriteFile(path, fmt.Appendf(nil, "{\"n\": %d}\n", calls), 0o600); err != nil {
			return err
		}
		return ensure(root, "/x", "{}")
	})
	if err == nil || !strings.Contains(err.Error(), "kept changing") {
		t.Errorf("UpdateFile on a file that keeps changing: %v, want an error", err)
	}
	if got, _ := os.ReadFile(path); strings.Contains(string(got), `"x"`) {
		t.Errorf("the edit was written anyway:\n%s", got)
	}
}
