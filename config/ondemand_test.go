package config

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestOnDemandKeys(t *testing.T) {
	tests := []struct {
		name       string
		mcp        string // the mcp section's keys besides servers
		server     string // the entry's keys besides name and command
		start      string
		idle       time.Duration // the server's IdleTimeoutOf
		pinningOff bool
		wantErr    string
	}{
		{name: "defaults", idle: DefaultIdleTimeout},
		{name: "on demand", server: `"start": "onDemand"`, start: StartOnDemand, idle: DefaultIdleTimeout},
		{name: "eager", server: `"start": "eager"`, start: StartEager, idle: DefaultIdleTimeout},
		{name: "mcp idle", mcp: `"idleTimeout": 60000`, idle: time.Minute},
		{name: "server idle wins", mcp: `"idleTimeout": 60000`, server: `"idleTimeout": 1500`, idle: 1500 * time.Millisecond},
		{name: "pinning off", server: `"pinning": "off"`, pinningOff: true, idle: DefaultIdleTimeout},
		{name: "pinning on", server: `"pinning": "on"`, idle: DefaultIdleTimeout},
		{name: "start misspelt", server: `"start": "ondemand"`, wantErr: `c.json:1:63: mcp.servers[0].start (server "s"): want "eager" or "onDemand"`},
		{name: "start a bool", server: `"start": true`, wantErr: `c.json:1:63: mcp.servers[0].start (server "s"): want "eager" or "onDemand"`},
		{name: "pinning a bool", server: `"pinning": false`, wantErr: `c.json:1:65: mcp.servers[0].pinning (server "s"): want "on" or "off"`},
		{name: "idle zero", mcp: `"idleTimeout": 0`, wantErr: "c.json:1:71: mcp.idleTimeout: want a whole number of milliseconds greater than 0, not 0"},
		{name: "server idle negative", server: `"idleTimeout": -5`, wantErr: `c.json:1:69: mcp.servers[0].idleTimeout (server "s"): want a whole number of milliseconds greater than 0, not -5`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			extra, srvExtra := "", ""
			if tc.mcp != "" {
				extra = ", " + tc.mcp
			}
			if tc.server != "" {
				srvExtra = ", " + tc.server
			}
			data := `{"mcp": {"servers": [{"name": "s", "command": ["x"]` + srvExtra + `}]` + extra + `}}`
			cfg, err := Parse("c.json", []byte(data))
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
			s := cfg.MCP.Servers[0]
			got := []any{s.Start, cfg.MCP.IdleTimeoutOf(s), s.PinningOff, s.OnDemand()}
			want := []any{tc.start, tc.idle, tc.pinningOff, tc.start == StartOnDemand}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("start, idle timeout, pinning off, on demand (-want +got):\n%s", diff)
			}
		})
	}
}

// AddServer writes the keys back as they are read.
func TestOnDemandRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.json")
	s := local("l", "x")
	s.Start, s.IdleTimeout, s.PinningOff = StartOnDemand, 90*time.Second, true
	if err := AddServer(path, s); err != nil {
		t.Fatal(err)
	}
	cfg, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]Server{s}, cfg.MCP.Servers); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
}

// ManifestKey is the server's identity: an edit of its entry keeps it;
// another name, scope or (for a project server) project is another
// server.
func TestManifestKey(t *testing.T) {
	dir := t.TempDir()
	base := local("s", "npx", "-y", "pkg")
	base.Env = map[string]string{"A": "1"}
	key := ManifestKey(dir, base)
	if len(key) != 64 {
		t.Fatalf("ManifestKey = %q, want 64 hex digits", key)
	}
	same := []func(*Server){
		func(s *Server) { s.Timeout = time.Minute },
		func(s *Server) { s.Enabled = false },
		func(s *Server) { s.Start = StartOnDemand },
		func(s *Server) { s.PinningOff = true },
		func(s *Server) { s.DeferTools = new(true) },
		func(s *Server) { s.IdleTimeout = time.Second },
		func(s *Server) { s.Command = []string{"npx", "-y", "pkg2"} },
		func(s *Server) { s.Env = map[string]string{"A": "1", "DEBUG": "1"} },
		func(s *Server) { s.Cwd = "/tmp" },
		func(s *Server) { s.InheritEnv = true },
		func(s *Server) { s.Type, s.Command, s.URL = TypeRemote, nil, "https://example.com/mcp" },
		func(s *Server) { s.OAuth = &OAuth{ClientID: "other"} },
	}
	for i, f := range same {
		s := base.clone()
		f(&s)
		if got := ManifestKey(dir, s); got != key {
			t.Errorf("edit %d: key changed", i)
		}
	}
	other := []func(*Server){
		func(s *Server) { s.Name = "t" },
		func(s *Server) { s.Scope = ScopeProject },
	}
	for i, f := range other {
		s := base.clone()
		f(&s)
		if got := ManifestKey(dir, s); got == key {
			t.Errorf("change %d: key unchanged", i)
		}
	}
	// A user server's key does not depend on the project; a project
	// server's does.
	if ManifestKey(t.TempDir(), base) != key {
		t.Error("a user server's key depends on the project directory")
	}
	p := base.clone()
	p.Scope = ScopeProject
	if ManifestKey(dir, p) == ManifestKey(t.TempDir(), p) {
		t.Error("a project server's key is the same in two projects")
	}
}

// LegacyManifestKey is the key manifests had before they were keyed by
// identity: the values below are what that code gave, so that the files
// users have are found and carried over.
func TestLegacyManifestKey(t *testing.T) {
	s := Server{Name: "fs", Type: TypeLocal, Command: []string{"npx", "-y", "pkg"}, Env: map[string]string{"A": "b"}, Scope: ScopeUser}
	p := Server{Name: "api", Type: TypeRemote, URL: "https://example.com/mcp", Transport: "auto", Headers: map[string]string{"X": "y"}, Scope: ScopeProject}
	// Keys must not move with the keys approvals gained since.
	s.Timeout, s.Start, s.PinningOff = time.Minute, StartOnDemand, true
	dir := t.TempDir()
	if err := os.Symlink("/tmp", filepath.Join(dir, "tmp")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		s    Server
		want string
	}{
		{s, "36869d93dd09cf66c105da128d424d1bf85580a63b402832b1159ef5431cce29"},
		{p, "dfc7cb0f8f16e1201a36995c4c66ffa9247816a9b1ffabb165422ec09f90eee9"},
	} {
		if got := LegacyManifestKey(filepath.Join(dir, "tmp"), tc.s); got != tc.want {
			t.Errorf("LegacyManifestKey(%s) = %s, want %s", tc.s.Name, got, tc.want)
		}
	}
}
