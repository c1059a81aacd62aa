package wire

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/freecode/freecode/internal/protocol"
	"github.com/freecode/freecode/permissions"
)

// TestRulesGolden pins the JSON of freecode/permissions's answer:
// {"rule", "effect", "source"} for every rule of the three files and the
// session, the file left out.
func TestRulesGolden(t *testing.T) {
	dir := t.TempDir()
	opts := permissions.LoadOptions{UserFile: filepath.Join(dir, "home", ".freecode", permissions.SettingsFile), ProjectDir: filepath.Join(dir, "proj"), Trusted: true}
	write := func(path, allow, ask, deny string) {
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		data := `{"permissions": {"allow": [` + allow + `], "ask": [` + ask + `], "deny": [` + deny + `]}}`
		if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(opts.UserFile, `"read"`, `"mcp__github"`, `"bash"`)
	write(filepath.Join(opts.ProjectDir, ".freecode", permissions.SettingsFile), ``, ``, `"mcp__*__delete_*"`)
	write(filepath.Join(opts.ProjectDir, ".freecode", permissions.LocalSettingsFile), `"mcp__github__get_*"`, ``, ``)
	s, _, err := permissions.Load(opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.AllowSession("mcp__fs__read_file"); err != nil {
		t.Fatal(err)
	}
	var res protocol.PermissionsResult
	for _, r := range s.Rules() {
		res.Rules = append(res.Rules, Rule(r))
	}
	got, err := json.MarshalIndent(res, "", "  ")
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

	b, err := json.Marshal(Rule(permissions.Rule{Pattern: "read", Effect: permissions.Deny, Source: permissions.SourceLocal, File: "/p/settings.local.json"}))
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"rule":"read","effect":"deny","source":"local"}`; string(b) != want {
		t.Errorf("a rule on the wire: %s, want %s", b, want)
	}
}
