package config

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestDuplicateKeys: a key written twice in what FreeCode reads is a
// warning at the repeat that names where the first one is; the last one
// counts, and a problem with it is placed there. Keys outside the mcp
// section are someone else's.
func TestDuplicateKeys(t *testing.T) {
	data := `{
  "mcp": {
    "pollInterval": 1000,
    "servers": [
      {"name": "a", "command": ["x"], "timeout": 5000,
       "timeout": 6000, "env": {"A": "1", "A": "2"}}
    ],
    "pollInterval": 2000
  },
  "theme": "dark", "theme": "light"
}`
	cfg, err := Parse("c.json", []byte(data))
	if err != nil {
		t.Fatal(err)
	}
	s := cfg.MCP.Servers[0]
	if cfg.MCP.PollInterval != 2*time.Second || s.Timeout != 6*time.Second || s.Env["A"] != "2" {
		t.Errorf("pollInterval %v, timeout %v, env %v: want the last of each", cfg.MCP.PollInterval, s.Timeout, s.Env)
	}
	want := []Problem{
		{Key: "mcp.pollInterval", Line: 8, Col: 5, Warning: true,
			Msg: `duplicate key "pollInterval" (the first is at line 3, column 5): the last one counts`},
		{Key: "mcp.servers[0].env.A", Server: "a", Line: 6, Col: 43, Warning: true,
			Msg: `duplicate key "A" (the first is at line 6, column 33): the last one counts`},
		{Key: "mcp.servers[0].timeout", Server: "a", Line: 6, Col: 8, Warning: true,
			Msg: `duplicate key "timeout" (the first is at line 5, column 39): the last one counts`},
	}
	if diff := cmp.Diff(want, cfg.Warnings); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}

	// The top-level "mcp" twice; the second's bad value is where the
	// problem is.
	_, err = Parse("c.json", []byte("{\"mcp\": {\"maxParallel\": 2},\n \"mcp\": {\"maxParallel\": 0}}"))
	var ve *ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("Parse = %v, want a *ValidationError", err)
	}
	if got := err.Error(); got != "c.json:2:25: mcp.maxParallel: want a whole number from 1 to 64, not 0" {
		t.Errorf("error %q, want it at the second mcp's maxParallel", got)
	}
	if len(ve.Warnings) != 1 || ve.Warnings[0].Line != 2 || ve.Warnings[0].Col != 2 || ve.Warnings[0].Key != "mcp" {
		t.Errorf("warnings %+v, want the second mcp's at 2:2", ve.Warnings)
	}
}
