package permissions

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/freecode/freecode/config"
	"github.com/google/go-cmp/cmp"

	_ "github.com/freecode/freecode/internal/racetest" // helper processes exit without the race runtime's pause
)

func TestAddAllow(t *testing.T) {
	tests := []struct {
		name    string
		in      string // "" = no file
		pattern string
		want    string
	}{
		{
			name:    "new file",
			pattern: "mcp__gh__get_issue",
			want:    "{\n  \"permissions\": {\n    \"allow\": [\"mcp__gh__get_issue\"]\n  }\n}\n",
		},
		{
			name: "comments, other keys and odd spacing kept",
			in: `// FreeCode settings
{
    "model":   "x",   // keep me
  "provider": {"a":1,
"b": [1,2,
3]},
  "permissions": {
    /* reviewed */ "deny": ["bash"],
    "allow": [
      "read", // always fine
      "grep"
    ]
  },
  "zzz": null
}
`,
			pattern: "mcp__gh",
			want: `// FreeCode settings
{
    "model":   "x",   // keep me
  "provider": {"a":1,
"b": [1,2,
3]},
  "permissions": {
    /* reviewed */ "deny": ["bash"],
    "allow": [
      "read", // always fine
      "grep",
      "mcp__gh"
    ]
  },
  "zzz": null
}
`,
		},
		{
			name:    "trailing comma and a comment on the last line",
			in:      "{\n\t\"permissions\": {\n\t\t\"allow\": [\n\t\t\t\"read\", // why\n\t\t],\n\t},\n}\n",
			pattern: "grep",
			want:    "{\n\t\"permissions\": {\n\t\t\"allow\": [\n\t\t\t\"read\", // why\n\t\t\t\"grep\",\n\t\t],\n\t},\n}\n",
		},
		{
			name:    "comment after the last element without a comma",
			in:      "{\"permissions\": {\"allow\": [\n  \"read\" // why\n]}}",
			pattern: "grep",
			want:    "{\"permissions\": {\"allow\": [\n  \"read\", // why\n  \"grep\"\n]}}",
		},
		{
			name:    "one-line list",
			in:      `{"permissions": {"allow": ["read"]}}`,
			pattern: "grep",
			want:    `{"permissions": {"allow": ["read", "grep"]}}`,
		},
		{
			name:    "one-line list, spacing of the last element",
			in:      `{"permissions": {"allow": ["a","b"]}}`,
			pattern: "c",
			want:    `{"permissions": {"allow": ["a","b","c"]}}`,
		},
		{
			name:    "empty list",
			in:      `{"permissions": {"allow": []}}`,
			pattern: "grep",
			want:    `{"permissions": {"allow": ["grep"]}}`,
		},
		{
			name:    "empty multi-line list",
			in:      "{\n  \"permissions\": {\n    \"allow\": [\n    ]\n  }\n}",
			pattern: "grep",
			want:    "{\n  \"permissions\": {\n    \"allow\": [\"grep\"]\n  }\n}",
		},
		{
			name:    "no allow list",
			in:      "{\n  \"permissions\": {\n    \"deny\": [\"bash\"] // no\n  }\n}\n",
			pattern: "read",
			want:    "{\n  \"permissions\": {\n    \"deny\": [\"bash\"], // no\n    \"allow\": [\"read\"]\n  }\n}\n",
		},
		{
			name:    "no permissions",
			in:      "{\n\t\"model\": \"x\",\n\t\"mcp\": {\"servers\": []},\n}\n",
			pattern: "read",
			want:    "{\n\t\"model\": \"x\",\n\t\"mcp\": {\"servers\": []},\n\t\"permissions\": {\n\t\t\"allow\": [\"read\"]\n\t},\n}\n",
		},
		{
			name:    "empty object",
			in:      "{}",
			pattern: "read",
			want:    "{\n  \"permissions\": {\n    \"allow\": [\"read\"]\n  }\n}",
		},
		{
			name:    "already there",
			in:      "{\"permissions\": {\"allow\": [ \"mcp__gh\" ]}} // as is\n",
			pattern: "  mcp__gh ",
			want:    "{\"permissions\": {\"allow\": [ \"mcp__gh\" ]}} // as is\n",
		},
		{
			name:    "already there with spaces",
			in:      "{\"permissions\": {\"allow\": [\" read\"]}}",
			pattern: "read",
			want:    "{\"permissions\": {\"allow\": [\" read\"]}}",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), ".freecode", SettingsFile)
			if tc.in != "" {
				if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(tc.in), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if err := AddAllow(path, tc.pattern); err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, string(got)); diff != "" {
				t.Errorf("file (-want +got):\n%s", diff)
			}
			// It loads, with the rule in it.
			rs, _, ws, err := parseFile(path, got, SourceUser, nil)
			if err != nil || len(ws) != 0 {
				t.Fatalf("the written file: %v %v", err, ws)
			}
			found := false
			for _, r := range rs {
				found = found || r.Effect == Allow && r.Pattern == strings.TrimSpace(tc.pattern)
			}
			if !found {
				t.Errorf("the written file has no allow rule %q: %v", tc.pattern, rs)
			}
			fi, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			wantMode := os.FileMode(0o644)
			if tc.in == "" {
				wantMode = 0o600
			}
			if fi.Mode().Perm() != wantMode {
				t.Errorf("mode %v, want %v", fi.Mode().Perm(), wantMode)
			}
		})
	}
}

func TestAddAllowErrors(t *testing.T) {
	tests := []struct {
		name, in, pattern, msg string
	}{
		{"invalid pattern", "{}", "mcp__", "empty server name"},
		{"does not parse", "{\n  \"permissions\": {,}\n}", "read", ":2:19: "},
		{"not an object", "[]", "read", "does not hold a JSON object"},
		{"permissions not an object", `{"permissions": []}`, "read", `"permissions" is not an object`},
		{"allow not a list", `{"permissions": {"allow": "read"}}`, "grep", `"permissions.allow" is not a list`},
		{"duplicate permissions", `{"permissions": {}, "permissions": {}}`, "grep", `duplicate key "permissions"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), SettingsFile)
			if err := os.WriteFile(path, []byte(tc.in), 0o600); err != nil {
				t.Fatal(err)
			}
			err := AddAllow(path, tc.pattern)
			if err == nil || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("AddAllow error = %v, want one saying %q", err, tc.msg)
			}
			got, _ := os.ReadFile(path)
			if string(got) != tc.in {
				t.Errorf("the file changed after an error: %q", got)
			}
		})
	}
	var pe *config.ParseError
	path := filepath.Join(t.TempDir(), SettingsFile)
	if err := os.WriteFile(path, []byte("{\n  \"permissions\": {,}\n}"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := AddAllow(path, "read"); !errors.As(err, &pe) || pe.Line != 2 || pe.Col != 19 {
		t.Errorf("AddAllow on a broken file: %v, want a *config.ParseError at 2:19", err)
	}
}

// TestAddAllowConcurrent: two "always allow" answers written at once are
// both kept.
func TestAddAllowConcurrent(t *testing.T) {
	path := filepath.Join(t.TempDir(), SettingsFile)
	var wg sync.WaitGroup
	want := []string{"a", "b", "c", "d", "e", "f", "g", "h"}
	for _, p := range want {
		wg.Go(func() {
			if err := AddAllow(path, p); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	s, _, err := Load(LoadOptions{UserFile: path})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, r := range s.Rules() {
		got[r.Pattern] = true
	}
	for _, p := range want {
		if !got[p] {
			t.Errorf("rule %q lost", p)
		}
	}
}

// allowChildEnv makes TestAddAllowChild, in a child process of
// TestAddAllowAcrossProcesses, add the rule it names to $FREECODE_RULE_FILE.
const allowChildEnv = "FREECODE_ADD_ALLOW_CHILD"

func TestAddAllowChild(t *testing.T) {
	pattern := os.Getenv(allowChildEnv)
	if pattern == "" {
		t.Skip("the child process of TestAddAllowAcrossProcesses")
	}
	if err := AddAllow(os.Getenv("FREECODE_RULE_FILE"), pattern); err != nil {
		t.Fatal(err)
	}
}

// "Always allow" answers written at once by fifty processes (the sidecar,
// the CLI, the app) to one rule file are all kept.
func TestAddAllowAcrossProcesses(t *testing.T) {
	const procs = 50
	path := filepath.Join(t.TempDir(), SettingsFile)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	want := make([]string, procs)
	errs := make([]error, procs)
	for i := range procs {
		want[i] = fmt.Sprintf("mcp__s%02d__read", i)
		wg.Go(func() {
			cmd := exec.Command(exe, "-test.run=^TestAddAllowChild$")
			cmd.Env = append(os.Environ(), allowChildEnv+"="+want[i], "FREECODE_RULE_FILE="+path)
			if out, err := cmd.CombinedOutput(); err != nil {
				errs[i] = fmt.Errorf("%s: %v\n%s", want[i], err, out)
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	s, _, err := Load(LoadOptions{UserFile: path})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range s.Rules() {
		got = append(got, r.Pattern)
	}
	slices.Sort(got)
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("%d of %d rules in the file (-want +got):\n%s", len(got), procs, d)
	}
}

func TestScopeFile(t *testing.T) {
	tests := []struct {
		scope Source
		want  string
		err   bool
	}{
		{SourceUser, "/home/me/.freecode/settings.json", false},
		{SourceLocal, "/src/p/.freecode/settings.local.json", false},
		{SourceProject, "/src/p/.freecode/settings.json", false},
		{SourceSession, "", true},
	}
	for _, tc := range tests {
		got, err := ScopeFile(tc.scope, "/home/me/.freecode", "/src/p")
		if got != filepath.FromSlash(tc.want) || (err != nil) != tc.err {
			t.Errorf("ScopeFile(%s) = %q, %v; want %q, error %v", tc.scope, got, err, tc.want, tc.err)
		}
	}
	if _, err := ScopeFile(SourceLocal, "/home/me/.freecode", ""); err == nil {
		t.Error("ScopeFile(local) with no project: no error")
	}
	if _, err := ScopeFile(SourceUser, "", "/src/p"); err == nil {
		t.Error("ScopeFile(user) with no user directory: no error")
	}
}

// TestAddAllowSymlink: a settings file kept elsewhere through a symlink is
// edited where it lives, and the link stays a link.
func TestAddAllowSymlink(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "dotfiles", SettingsFile)
	link := filepath.Join(dir, ".freecode", SettingsFile)
	for _, d := range []string{filepath.Dir(real), filepath.Dir(link)} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(real, []byte(`{"permissions": {"allow": ["read"]}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, link); err != nil {
		t.Skip("no symlinks here:", err)
	}
	if err := AddAllow(link, "grep"); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the link was replaced: %v %v", fi, err)
	}
	got, err := os.ReadFile(real)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"permissions": {"allow": ["read", "grep"]}}`; string(got) != want {
		t.Errorf("file = %s, want %s", got, want)
	}
}

// TestAddScopeAllowStaysInProject: a repository that links its local rule
// file, or its .freecode directory, to the user's settings cannot turn an
// "always allow for this project" into a rule for every project; a real
// file inside the project is written.
func TestAddScopeAllowStaysInProject(t *testing.T) {
	tests := []struct {
		name    string
		setup   func(t *testing.T, project, userFile string)
		wantErr string // "" for success
	}{
		{name: "plain project", setup: func(*testing.T, string, string) {}},
		{name: "existing .freecode", setup: func(t *testing.T, project, _ string) {
			mkdir(t, filepath.Join(project, ".freecode"))
		}},
		{name: "local file links to the user's", wantErr: "outside the project", setup: func(t *testing.T, project, userFile string) {
			mkdir(t, filepath.Join(project, ".freecode"))
			symlink(t, userFile, filepath.Join(project, ".freecode", LocalSettingsFile))
		}},
		{name: ".freecode links to the user's dir", wantErr: "outside the project", setup: func(t *testing.T, project, userFile string) {
			symlink(t, filepath.Dir(userFile), filepath.Join(project, ".freecode"))
		}},
		{name: "dangling link", wantErr: "missing file", setup: func(t *testing.T, project, userFile string) {
			mkdir(t, filepath.Join(project, ".freecode"))
			symlink(t, filepath.Join(filepath.Dir(userFile), "new.json"), filepath.Join(project, ".freecode", LocalSettingsFile))
		}},
		{name: "link inside the project", setup: func(t *testing.T, project, _ string) {
			mkdir(t, filepath.Join(project, "conf"))
			symlink(t, filepath.Join(project, "conf"), filepath.Join(project, ".freecode"))
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			userDir := t.TempDir()
			userFile := filepath.Join(userDir, SettingsFile)
			const userRules = `{"permissions": {"deny": ["mcp__x"]}}`
			if err := os.WriteFile(userFile, []byte(userRules), 0o600); err != nil {
				t.Fatal(err)
			}
			project := t.TempDir()
			tc.setup(t, project, userFile)
			path, err := AddScopeAllow(SourceLocal, userDir, project, "mcp__demo__delete_file")
			if want := filepath.Join(project, ".freecode", LocalSettingsFile); path != want {
				t.Errorf("path = %q, want %q", path, want)
			}
			if data, _ := os.ReadFile(userFile); string(data) != userRules {
				t.Errorf("the user's file changed:\n%s", data)
			}
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Errorf("err = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			set, _, err := Load(LoadOptions{ProjectDir: project, Trusted: true})
			if err != nil || set.Decide("mcp__demo__delete_file", "", false).Effect != Allow {
				t.Errorf("the local rule does not apply (%v)", err)
			}
		})
	}
}

func mkdir(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Skipf("no symbolic links: %v", err)
	}
}

// RemoveAllow takes an "always allow" answer back: AddAllow then
// RemoveAllow leaves a file with a list as it was, its comments, commas and
// spacing included; an entry in the middle or first goes with its own line;
// a rule not there writes nothing.
func TestRemoveAllow(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		pattern string
		want    string
		removed bool
	}{
		{
			name:    "last of a multi-line list, comments kept",
			in:      "{\n  \"permissions\": {\n    \"allow\": [\n      \"read\", // always fine\n      \"grep\",\n      \"mcp__gh\"\n    ]\n  }\n}\n",
			pattern: "mcp__gh",
			want:    "{\n  \"permissions\": {\n    \"allow\": [\n      \"read\", // always fine\n      \"grep\"\n    ]\n  }\n}\n",
			removed: true,
		},
		{
			name:    "the comment of the entry before stays with it",
			in:      "{\n\t\"permissions\": {\n\t\t\"allow\": [\n\t\t\t\"read\", // why\n\t\t\t\"grep\",\n\t\t],\n\t},\n}\n",
			pattern: "grep",
			want:    "{\n\t\"permissions\": {\n\t\t\"allow\": [\n\t\t\t\"read\", // why\n\t\t],\n\t},\n}\n",
			removed: true,
		},
		{
			name:    "a comment after the last entry, no trailing comma",
			in:      "{\"permissions\": {\"allow\": [\n  \"read\", // why\n  \"grep\"\n]}}",
			pattern: "grep",
			want:    "{\"permissions\": {\"allow\": [\n  \"read\" // why\n]}}",
			removed: true,
		},
		{
			name:    "middle entry, its own comment goes with it",
			in:      "{\"permissions\": {\"allow\": [\n  \"a\", // keep\n  \"b\", // b's\n  \"c\"\n]}}",
			pattern: "b",
			want:    "{\"permissions\": {\"allow\": [\n  \"a\", // keep\n  \"c\"\n]}}",
			removed: true,
		},
		{
			name:    "first entry",
			in:      "{\"permissions\": {\"allow\": [\n  \"a\",\n  \"b\"\n]}}",
			pattern: "a",
			want:    "{\"permissions\": {\"allow\": [\n  \"b\"\n]}}",
			removed: true,
		},
		{
			name:    "one-line list",
			in:      `{"permissions": {"allow": ["read", "grep"]}}`,
			pattern: "grep",
			want:    `{"permissions": {"allow": ["read"]}}`,
			removed: true,
		},
		{
			name:    "one-line list, first entry",
			in:      `{"permissions": {"allow": ["a","b","c"]}}`,
			pattern: "a",
			want:    `{"permissions": {"allow": ["b","c"]}}`,
			removed: true,
		},
		{
			name:    "the only entry, and every copy of it once trimmed",
			in:      `{"permissions": {"allow": [" mcp__gh ", "mcp__gh"], "deny": ["bash"]}}`,
			pattern: "mcp__gh",
			want:    `{"permissions": {"allow": [], "deny": ["bash"]}}`,
			removed: true,
		},
		{
			name:    "not there",
			in:      "{\"permissions\": {\"allow\": [ \"read\" ]}} // as is\n",
			pattern: "grep",
			want:    "{\"permissions\": {\"allow\": [ \"read\" ]}} // as is\n",
		},
		{
			name:    "no allow list",
			in:      "{\"permissions\": {\"deny\": [\"grep\"]}}",
			pattern: "grep",
			want:    "{\"permissions\": {\"deny\": [\"grep\"]}}",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), SettingsFile)
			if err := os.WriteFile(path, []byte(tc.in), 0o644); err != nil {
				t.Fatal(err)
			}
			removed, err := RemoveAllow(path, tc.pattern)
			if err != nil || removed != tc.removed {
				t.Fatalf("RemoveAllow = %v, %v; want %v", removed, err, tc.removed)
			}
			got, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, string(got)); diff != "" {
				t.Errorf("file (-want +got):\n%s", diff)
			}
			if _, _, ws, err := parseFile(path, got, SourceUser, nil); err != nil || len(ws) != 0 {
				t.Errorf("the written file: %v %v", err, ws)
			}
		})
	}

	// What AddAllow appends to a list, RemoveAllow takes back to the byte.
	for _, in := range []string{
		"{\n  \"permissions\": {\n    \"allow\": [\n      \"read\", // always fine\n      \"grep\"\n    ]\n  }\n}\n",
		"{\n\t\"permissions\": {\n\t\t\"allow\": [\n\t\t\t\"read\", // why\n\t\t],\n\t},\n}\n",
		"{\"permissions\": {\"allow\": [\n  \"read\" // why\n]}}",
		`{"permissions": {"allow": ["read"]}}`,
		`{"permissions": {"allow": ["a","b"]}}`,
	} {
		path := filepath.Join(t.TempDir(), SettingsFile)
		if err := os.WriteFile(path, []byte(in), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := AddAllow(path, "mcp__demo__delete_file"); err != nil {
			t.Fatal(err)
		}
		if removed, err := RemoveAllow(path, "mcp__demo__delete_file"); err != nil || !removed {
			t.Fatalf("RemoveAllow after AddAllow = %v, %v", removed, err)
		}
		if got, _ := os.ReadFile(path); string(got) != in {
			t.Errorf("AddAllow then RemoveAllow:\n%s\nwant it as it was:\n%s", got, in)
		}
	}
}

// RemoveScopeAllow undoes AddScopeAllow in a trusted project: the rule
// leaves the local file and the rules the user accepted, so that the same
// rule put back by another hand awaits review; a missing file is not made.
func TestRemoveScopeAllow(t *testing.T) {
	opts := trusted(t, "", "{}")
	userDir := filepath.Dir(opts.UserFile)
	const rule = "mcp__demo__delete_file"
	if _, err := AddScopeAllow(SourceLocal, userDir, opts.ProjectDir, rule); err != nil {
		t.Fatal(err)
	}
	path, removed, err := RemoveScopeAllow(SourceLocal, userDir, opts.ProjectDir, rule)
	if want := filepath.Join(opts.ProjectDir, ".freecode", LocalSettingsFile); err != nil || !removed || path != want {
		t.Fatalf("RemoveScopeAllow = %q, %v, %v; want %q, true", path, removed, err, want)
	}
	if acc, err := ReadAccepted(opts.ProjectDir); err != nil || slices.Contains(acc.Local.Allow, rule) {
		t.Errorf("the rule is still accepted: %+v, %v", acc, err)
	}
	set, _ := loadAccepted(t, opts)
	if got := summarize(set.Decide(rule, "", false)); got != (decided{Effect: "ask"}) {
		t.Errorf("Decide after the undo = %+v, want ask", got)
	}
	rewrite(t, opts, LocalSettingsFile, `{"permissions": {"allow": ["`+rule+`"]}}`)
	set, _ = loadAccepted(t, opts)
	if got := summarize(set.Decide(rule, "", false)); got != (decided{Effect: "ask"}) {
		t.Errorf("Decide with the rule put back by another hand = %+v, want ask", got)
	}
	if p := set.Pending(); p == nil || len(p.Files) != 1 || !cmp.Equal(p.Files[0].Allow, []string{rule}) {
		t.Errorf("Pending() = %+v, want the rule put back", p)
	}

	// The user's file, when it does not exist: nothing is written.
	empty := t.TempDir()
	if path, removed, err := RemoveScopeAllow(SourceUser, empty, "", rule); err != nil || removed || path != filepath.Join(empty, SettingsFile) {
		t.Errorf("RemoveScopeAllow of a missing file = %q, %v, %v", path, removed, err)
	}
	if _, err := os.Stat(filepath.Join(empty, SettingsFile)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the missing file was made: %v", err)
	}
}
