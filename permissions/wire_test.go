package permissions

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite golden files")

// TestRulesWire pins the JSON of Rules, the list freecode/permissions
// answers with: {"rule", "effect", "source"} for every rule, the file
// left out.
func TestRulesWire(t *testing.T) {
	opts := files(t,
		rules(`"read"`, `"mcp__github"`, `"bash"`),
		rules(``, ``, `"mcp__*__delete_*"`),
		rules(`"mcp__github__get_*"`, ``, ``), true)
	s, _, err := Load(opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.AllowSession("mcp__fs__read_file"); err != nil {
		t.Fatal(err)
	}
	got, err := json.MarshalIndent(map[string]any{"rules": s.Rules()}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	golden := filepath.Join("testdata", "rules.golden.json")
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s (-want +got):\n%s", golden, diff)
	}
	if bytes.Contains(got, []byte(filepath.Dir(opts.ProjectDir))) {
		t.Errorf("a rule's file is on the wire:\n%s", got)
	}
}
