package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func writeProject(t *testing.T, dir, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, ".freecode"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ProjectSettingsPath(dir), []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestLoadProject(t *testing.T) {
	dir := t.TempDir()
	if got, err := LoadProject(dir); err != nil || got != nil {
		t.Fatalf("LoadProject without a settings file = %v, %v; want nothing", got, err)
	}
	writeProject(t, dir, `{
		// permissions live here too
		"permissions": {"allow": ["mcp__*"]},
		"mcp": {"servers": [
			{"name": "tool", "type": "local", "command": ["./bin/tool"], "cwd": "sub"},
			{"name": "api", "type": "remote", "url": "https://h/mcp", "caBundle": "certs/ca.pem"},
		]},
	}`)
	got, err := LoadProject(dir)
	if err != nil {
		t.Fatal(err)
	}
	tool := local("tool", "./bin/tool")
	tool.Cwd, tool.Scope = filepath.Join(dir, "sub"), ScopeProject
	api := remote("api", "https://h/mcp")
	api.CABundle, api.Scope = filepath.Join(dir, "certs", "ca.pem"), ScopeProject
	if diff := cmp.Diff([]Server{tool, api}, got); diff != "" {
		t.Errorf("LoadProject (-want +got):\n%s", diff)
	}

	writeProject(t, dir, `{"mcp": {"servers": [{"name": "a__b", "type": "local", "command": ["x"]}]}}`)
	_, err = LoadProject(dir)
	var ve *ValidationError
	if !errors.As(err, &ve) || !strings.Contains(err.Error(), filepath.Join(".freecode", "settings.json")) {
		t.Errorf("LoadProject of a bad file: %v, want a *ValidationError naming the file", err)
	}
}

func TestApprovalKey(t *testing.T) {
	dir := t.TempDir()
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(dir, link); err != nil {
		t.Fatal(err)
	}
	base := local("tool", "node", "server.js")
	base.Env = map[string]string{"A": "1"}
	base.Scope = ScopeProject
	key := ApprovalKey(dir, base)
	real, _ := filepath.EvalSymlinks(dir)
	if !strings.HasPrefix(key, real+":") || len(key) != len(real)+1+64 {
		t.Fatalf("ApprovalKey = %q, want %q + \":\" + 64 hex digits", key, real)
	}
	if got := ApprovalKey(link, base.clone()); got != key {
		t.Errorf("ApprovalKey through a symlink = %q, want %q", got, key)
	}
	same := base.clone()
	same.Enabled = false // not what an approval covers
	if ApprovalKey(dir, same) != key {
		t.Error("changing the enabled flag changed the approval key")
	}
	changes := map[string]func(*Server){
		"command":    func(s *Server) { s.Command = append(s.Command, "--evil") },
		"env value":  func(s *Server) { s.Env["A"] = "2" },
		"env key":    func(s *Server) { s.Env["B"] = "1" },
		"headers":    func(s *Server) { s.Headers = map[string]string{"H": "v"} },
		"url":        func(s *Server) { s.URL = "https://x" },
		"cwd":        func(s *Server) { s.Cwd = "/" },
		"type":       func(s *Server) { s.Type = TypeRemote },
		"transport":  func(s *Server) { s.Transport = TransportSSE },
		"inheritEnv": func(s *Server) { s.InheritEnv = true },
		"name":       func(s *Server) { s.Name = "other" },
		"caBundle":   func(s *Server) { s.CABundle = "/ca.pem" },
		"clientCert": func(s *Server) { s.ClientCert = "/c.pem" },
		"clientKey":  func(s *Server) { s.ClientKey = "/k.pem" },
		// How it runs and how its definitions are checked.
		"pinning":         func(s *Server) { s.PinningOff = true },
		"start":           func(s *Server) { s.Start = StartOnDemand },
		"deferTools":      func(s *Server) { yes := true; s.DeferTools = &yes },
		"deferTools off":  func(s *Server) { no := false; s.DeferTools = &no },
		"timeout":         func(s *Server) { s.Timeout = time.Minute },
		"toolTimeout":     func(s *Server) { s.ToolTimeout = time.Hour },
		"idleTimeout":     func(s *Server) { s.IdleTimeout = time.Hour },
		"maxMessageBytes": func(s *Server) { s.MaxMessageBytes = 1 << 30 },
		"protocolVersion": func(s *Server) { s.ProtocolVersion = "2025-06-18" },
	}
	for what, change := range changes {
		s := base.clone()
		change(&s)
		if ApprovalKey(dir, s) == key {
			t.Errorf("changing %s kept the approval key", what)
		}
	}
	if ApprovalKey(t.TempDir(), base) == key {
		t.Error("the same entry in another project has the same key")
	}

	path := filepath.Join(t.TempDir(), "config.json")
	if err := Approve(path, key); err != nil {
		t.Fatal(err)
	}
	cfg, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if !cfg.Approved(key) || cfg.Approved(ApprovalKey(dir, same)+"x") {
		t.Errorf("Approved: got %v for the approved key", cfg.Approved(key))
	}
}

// The approvals users gave before the hash covered start, pinning,
// deferTools, the timeouts, maxMessageBytes and protocolVersion hold for
// entries that leave those at their defaults: the hashes below are what
// the earlier encoding gave.
func TestEntryHashStable(t *testing.T) {
	cfg, err := parse("settings.json", []byte(`{"mcp": {"servers": [
		{"name": "fs", "command": ["npx", "-y", "pkg"], "env": {"A": "b"}, "timeout": 5000},
		{"name": "web", "url": "https://example.com/mcp", "headers": {"X": "y"}}
	]}}`), ScopeProject, "/tmp")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"fs":  "9f5b3f4b92cefcbb242a4607c32a2413a9c06f36d915fbc9ba2eab38008aa185",
		"web": "88a8a2ce4799fde1ba75fbeeaa08acdf52b08f37690f12ce161a07b76e309b05",
	}
	for _, s := range cfg.MCP.Servers {
		if got := EntryHash(s); got != want[s.Name] {
			t.Errorf("EntryHash(%s) = %s, want %s", s.Name, got, want[s.Name])
		}
	}
}

// A project cannot switch pinning off: the entry is a problem, and the
// file is not taken.
func TestProjectPinningOff(t *testing.T) {
	dir := t.TempDir()
	writeProject(t, dir, `{"mcp": {"servers": [{"name": "tool", "command": ["./tool"], "pinning": "off"}]}}`)
	_, err := LoadProject(dir)
	if err == nil || !strings.Contains(err.Error(), "a project cannot turn pinning off") || !strings.Contains(err.Error(), "mcp.servers[0].pinning") {
		t.Errorf("LoadProject = %v, want the problem at its key", err)
	}
	writeProject(t, dir, `{"mcp": {"servers": [{"name": "tool", "command": ["./tool"], "pinning": "on"}]}}`)
	if _, err := LoadProject(dir); err != nil {
		t.Errorf(`"pinning": "on" from a project: %v`, err)
	}
	if _, err := Parse("config.json", []byte(`{"mcp": {"servers": [{"name": "tool", "command": ["./tool"], "pinning": "off"}]}}`)); err != nil {
		t.Errorf(`"pinning": "off" in the user's own config: %v`, err)
	}
}

// A project at the user's home shares the user's files, named by any path:
// the same, unclean, through a symbolic link, a hard link; before the
// files exist too.
func TestProjectSettingsAreUsers(t *testing.T) {
	home := t.TempDir()
	cfg := filepath.Join(home, ".freecode", "config.json")
	link := filepath.Join(t.TempDir(), "home-link")
	if err := os.Symlink(home, link); err != nil {
		t.Fatal(err)
	}
	other := t.TempDir()
	for _, tc := range []struct {
		name, dir, cfg string
		want           bool
	}{
		{"home, files not yet written", home, cfg, true},
		{"home, unclean", home + "/./x/..", cfg, true},
		{"home through a symbolic link, files not yet written", link, cfg, true},
		{"another project", other, cfg, false},
		{"the config is the project's file", other, ProjectSettingsPath(other), true},
	} {
		if got := ProjectSettingsAreUsers(tc.dir, tc.cfg); got != tc.want {
			t.Errorf("%s: ProjectSettingsAreUsers(%s, %s) = %v, want %v", tc.name, tc.dir, tc.cfg, got, tc.want)
		}
	}
	writeProject(t, home, `{}`)
	if !ProjectSettingsAreUsers(link, cfg) {
		t.Error("home through a symbolic link, files written: not the user's")
	}
	// A hard link of the user's settings.json as the project's: one file.
	writeProject(t, other, `{}`)
	if err := os.Remove(ProjectSettingsPath(other)); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(ProjectSettingsPath(home), ProjectSettingsPath(other)); err != nil {
		t.Fatal(err)
	}
	if !ProjectSettingsAreUsers(other, cfg) {
		t.Error("a hard link of the user's settings.json: not the user's")
	}
	if SameFile(ProjectSettingsPath(home), cfg) {
		t.Error("settings.json and config.json are one file")
	}
}

// An approval covers where the entry's paths lead, not only their text: a
// pull that turns an approved "cwd": "data" into a link to ".." (or an
// allowWrite into a link to the home) asks again. Entries whose paths lead
// where they say keep the hash they had.
func TestEntryHashFollowsSymlinks(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir()) // macOS's /var is a link
	if err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "data")
	if err := os.Mkdir(data, 0o755); err != nil {
		t.Fatal(err)
	}
	writeProject(t, dir, `{"mcp": {"servers": [{"name": "s", "command": ["./s"], "cwd": "data",
		"sandbox": {"filesystem": {"allowWrite": ["out"]}}}]}}`)
	if err := os.Mkdir(filepath.Join(dir, "out"), 0o755); err != nil {
		t.Fatal(err)
	}
	load := func() Server {
		t.Helper()
		servers, err := LoadProject(dir)
		if err != nil || len(servers) != 1 {
			t.Fatalf("LoadProject: %v %v", servers, err)
		}
		return servers[0]
	}
	before := EntryHash(load())
	if e := approvalOf(load()); e.Resolved != nil {
		t.Errorf("paths that lead where they say are recorded: %v", e.Resolved)
	}
	if err := os.Remove(data); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("..", data); err != nil {
		t.Fatal(err)
	}
	afterCwd := EntryHash(load())
	if afterCwd == before {
		t.Error("the cwd became a link to .. and the approval holds")
	}
	if err := os.Remove(filepath.Join(dir, "out")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(t.TempDir(), filepath.Join(dir, "out")); err != nil {
		t.Fatal(err)
	}
	if EntryHash(load()) == afterCwd {
		t.Error("allowWrite became a link elsewhere and the approval holds")
	}
}
