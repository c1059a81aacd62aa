package config

import (
	"errors"
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
		{name: "start misspelt", server: `"start": "ondemand"`, wantErr: `c.json: mcp.servers[0].start (server "s"): want "eager" or "onDemand"`},
		{name: "start a bool", server: `"start": true`, wantErr: `c.json: mcp.servers[0].start (server "s"): want "eager" or "onDemand"`},
		{name: "pinning a bool", server: `"pinning": false`, wantErr: `c.json: mcp.servers[0].pinning (server "s"): want "on" or "off"`},
		{name: "idle zero", mcp: `"idleTimeout": 0`, wantErr: "c.json: mcp.idleTimeout: want a whole number of milliseconds greater than 0, not 0"},
		{name: "server idle negative", server: `"idleTimeout": -5`, wantErr: `c.json: mcp.servers[0].idleTimeout (server "s"): want a whole number of milliseconds greater than 0, not -5`},
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

// EntryKey changes with what decides which server runs, and only with
// that.
func TestEntryKey(t *testing.T) {
	dir := t.TempDir()
	base := local("s", "npx", "-y", "pkg")
	base.Env = map[string]string{"A": "1"}
	key := EntryKey(dir, base)
	if len(key) != 64 {
		t.Fatalf("EntryKey = %q, want 64 hex digits", key)
	}
	same := []func(*Server){
		func(s *Server) { s.Timeout = time.Minute },
		func(s *Server) { s.Enabled = false },
		func(s *Server) { s.Start = StartOnDemand },
		func(s *Server) { s.PinningOff = true },
		func(s *Server) { s.DeferTools = new(true) },
		func(s *Server) { s.IdleTimeout = time.Second },
	}
	for i, f := range same {
		s := base.clone()
		f(&s)
		if got := EntryKey(dir, s); got != key {
			t.Errorf("change %d: key changed", i)
		}
	}
	other := []func(*Server){
		func(s *Server) { s.Command = []string{"npx", "-y", "pkg2"} },
		func(s *Server) { s.Env = map[string]string{"A": "2"} },
		func(s *Server) { s.Name = "t" },
		func(s *Server) { s.Cwd = "/tmp" },
		func(s *Server) { s.InheritEnv = true },
		func(s *Server) { s.Scope = ScopeProject },
		func(s *Server) { s.OAuth = &OAuth{ClientID: "other"} },
	}
	for i, f := range other {
		s := base.clone()
		f(&s)
		if got := EntryKey(dir, s); got == key {
			t.Errorf("change %d: key unchanged", i)
		}
	}
	// A user server's key does not depend on the project; a project
	// server's does.
	if EntryKey(t.TempDir(), base) != key {
		t.Error("a user server's key depends on the project directory")
	}
	p := base.clone()
	p.Scope = ScopeProject
	if EntryKey(dir, p) == EntryKey(t.TempDir(), p) {
		t.Error("a project server's key is the same in two projects")
	}
}
