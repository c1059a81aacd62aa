package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
	same.Timeout, same.Enabled = 1, false // not what an approval covers
	if ApprovalKey(dir, same) != key {
		t.Error("changing the timeout or enabled flag changed the approval key")
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
