package permissions

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRulesBOM: a rule file saved with a UTF-8 byte order mark loads, its
// warnings are placed as an editor counts, and "always allow" keeps the
// mark when it writes the file.
func TestRulesBOM(t *testing.T) {
	path := filepath.Join(t.TempDir(), SettingsFile)
	const bom = "\xef\xbb\xbf"
	if err := os.WriteFile(path, []byte(bom+`{"permissions": {"deny": ["bash"], "allow": ["("]}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	s, warnings, err := Load(LoadOptions{UserFile: path})
	if err != nil {
		t.Fatalf("Load of a file with a byte order mark: %v", err)
	}
	if d := s.Decide("bash", "", false); d.Effect != Deny {
		t.Errorf("bash: %v, want the file's deny rule", d.Effect)
	}
	if len(warnings) != 1 || warnings[0].Line != 1 || warnings[0].Col != 46 {
		t.Errorf("warnings %+v, want the bad rule's at 1:46", warnings)
	}
	if err := AddAllow(path, "mcp__gh"); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(got), bom+`{"permissions"`) || !strings.Contains(string(got), `"mcp__gh"`) {
		t.Errorf("after AddAllow the file is %q, want the byte order mark kept and the rule added", got)
	}
}
