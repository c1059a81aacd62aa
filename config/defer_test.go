package config

import (
	"errors"
	"testing"
)

func TestDeferToolsKeys(t *testing.T) {
	tests := []struct {
		name    string
		mcp     string // the mcp section's keys besides servers
		server  string // the entry's keys besides name and command
		mode    DeferMode
		srv     *bool
		tools   int
		tokens  int
		wantErr string
	}{
		{name: "defaults", mode: DeferOff, tools: DefaultAutoDeferTools, tokens: DefaultAutoDeferTokens},
		{name: "on", mcp: `"deferTools": true`, mode: DeferOn, tools: 60, tokens: 20000},
		{name: "off", mcp: `"deferTools": false`, mode: DeferOff, tools: 60, tokens: 20000},
		{name: "auto with thresholds", mcp: `"deferTools": "auto", "autoDeferTools": 100, "autoDeferTokens": 5000`, mode: DeferAuto, tools: 100, tokens: 5000},
		{name: "server on", server: `"deferTools": true`, srv: new(true), tools: 60, tokens: 20000},
		{name: "server off", mcp: `"deferTools": true`, server: `"deferTools": false`, mode: DeferOn, srv: new(false), tools: 60, tokens: 20000},
		{name: "mode a string", mcp: `"deferTools": "yes"`, wantErr: `c.json:1:70: mcp.deferTools: want true, false or "auto"`},
		{name: "mode AUTO", mcp: `"deferTools": "AUTO"`, wantErr: `c.json:1:70: mcp.deferTools: want true, false or "auto"`},
		{name: "mode a number", mcp: `"deferTools": 1`, wantErr: `c.json:1:70: mcp.deferTools: want true, false or "auto"`},
		{name: "server auto", server: `"deferTools": "auto"`, wantErr: `c.json:1:68: mcp.servers[0].deferTools (server "s"): want true or false`},
		{name: "zero tools", mcp: `"autoDeferTools": 0`, wantErr: "c.json:1:74: mcp.autoDeferTools: want a whole number greater than 0, not 0"},
		{name: "tokens a fraction", mcp: `"autoDeferTokens": 2.5`, wantErr: "c.json:1:75: mcp.autoDeferTokens: want a whole number greater than 0, not 2.5"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			extra := ""
			if tc.mcp != "" {
				extra = ", " + tc.mcp
			}
			srvExtra := ""
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
			m := cfg.MCP
			s := m.Servers[0]
			if m.DeferTools != tc.mode || m.AutoDeferTools != tc.tools || m.AutoDeferTokens != tc.tokens ||
				(s.DeferTools == nil) != (tc.srv == nil) || s.DeferTools != nil && *s.DeferTools != *tc.srv {
				t.Errorf("mode %v, thresholds %d/%d, server %v; want %v, %d/%d, %v", m.DeferTools, m.AutoDeferTools, m.AutoDeferTokens, s.DeferTools, tc.mode, tc.tools, tc.tokens, tc.srv)
			}
		})
	}
}

func TestDeferred(t *testing.T) {
	plain := Server{Name: "plain"}
	on := Server{Name: "on", DeferTools: new(true)}
	off := Server{Name: "off", DeferTools: new(false)}
	tests := []struct {
		mode              DeferMode
		autoOn            bool
		plain, on, off    bool
		defersAny, noneOn bool // DefersAny with all three, and with plain alone
	}{
		{DeferOff, false, false, true, false, true, false},
		{DeferOn, false, true, true, false, true, true},
		{DeferAuto, false, false, true, false, true, true},
		{DeferAuto, true, true, true, false, true, true},
	}
	for _, tc := range tests {
		m := MCP{DeferTools: tc.mode}
		got := []bool{m.Deferred(plain, tc.autoOn), m.Deferred(on, tc.autoOn), m.Deferred(off, tc.autoOn),
			m.DefersAny([]Server{plain, on, off}), m.DefersAny([]Server{plain})}
		want := []bool{tc.plain, tc.on, tc.off, tc.defersAny, tc.noneOn}
		for i := range got {
			if got[i] != want[i] {
				t.Errorf("mode %v, autoOn %v: got %v, want %v (plain, on, off, any of all, any of plain)", tc.mode, tc.autoOn, got, want)
				break
			}
		}
	}
}
