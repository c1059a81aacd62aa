package permissions

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/freecode/freecode/config"
	"github.com/google/go-cmp/cmp"
)

// files writes a user file and a project's two files (an empty string
// writes nothing) and returns LoadOptions for them.
func files(t *testing.T, user, project, local string, trusted bool) LoadOptions {
	t.Helper()
	dir := t.TempDir()
	opts := LoadOptions{UserFile: filepath.Join(dir, "home", ".freecode", SettingsFile), ProjectDir: filepath.Join(dir, "proj"), Trusted: trusted}
	write := func(path, data string) {
		if data == "" {
			return
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(opts.UserFile, user)
	write(filepath.Join(opts.ProjectDir, ".freecode", SettingsFile), project)
	write(filepath.Join(opts.ProjectDir, ".freecode", LocalSettingsFile), local)
	return opts
}

func rules(allow, ask, deny string) string {
	return fmt.Sprintf(`{"permissions": {"allow": [%s], "ask": [%s], "deny": [%s]}}`, allow, ask, deny)
}

// decided is what a test compares of a Decision.
type decided struct {
	Effect  string
	Pattern string
	Source  string
}

func summarize(d Decision) decided {
	out := decided{Effect: d.Effect.String()}
	if d.Rule != nil {
		out.Pattern, out.Source = d.Rule.Pattern, d.Rule.Source.String()
	}
	return out
}

func TestDecide(t *testing.T) {
	type call struct {
		id       string
		readOnly bool
		want     decided
	}
	tests := []struct {
		name                 string
		user, project, local string
		trusted              bool
		calls                []call
	}{
		{
			name: "no rules",
			calls: []call{
				{"read", true, decided{Effect: "allow"}},
				{"write", false, decided{Effect: "ask"}},
				{"mcp__gh__x", false, decided{Effect: "ask"}},
			},
		},
		{
			name: "deny beats ask beats allow in one file",
			user: rules(`"mcp__gh", "mcp__gh__a", "mcp__gh__b"`, `"mcp__gh__b", "mcp__gh__c"`, `"mcp__gh__c", "mcp__gh__d"`),
			calls: []call{
				{"mcp__gh__a", false, decided{"allow", "mcp__gh", "user"}}, // first allow rule
				{"mcp__gh__b", false, decided{"ask", "mcp__gh__b", "user"}},
				{"mcp__gh__c", true, decided{"deny", "mcp__gh__c", "user"}},
				{"mcp__gh__d", true, decided{"deny", "mcp__gh__d", "user"}},
				{"mcp__gh__e", false, decided{"allow", "mcp__gh", "user"}},
			},
		},
		{
			name:    "user deny cannot be un-denied by a trusted project's allow",
			user:    rules(``, ``, `"mcp__gh__delete_repo"`),
			project: rules(`"mcp__gh", "mcp__gh__delete_repo", "*"`, ``, ``),
			local:   rules(`"mcp__*"`, ``, ``),
			trusted: true,
			calls: []call{
				{"mcp__gh__delete_repo", false, decided{"deny", "mcp__gh__delete_repo", "user"}},
				{"mcp__gh__get", false, decided{"allow", "mcp__gh", "project"}},
				{"write", false, decided{"allow", "*", "project"}},
			},
		},
		{
			name:    "a project ask beats a user allow",
			user:    rules(`"mcp__gh"`, ``, ``),
			project: rules(``, `"mcp__gh__merge"`, ``),
			calls: []call{
				{"mcp__gh__merge", true, decided{"ask", "mcp__gh__merge", "project"}},
				{"mcp__gh__get", false, decided{"allow", "mcp__gh", "user"}},
			},
		},
		{
			name:    "untrusted project: allow ignored, deny and ask apply",
			project: rules(`"mcp__*", "*", "write"`, `"read"`, `"mcp__fs__rm"`),
			local:   rules(`"mcp__fs"`, ``, `"bash"`),
			calls: []call{
				{"mcp__gh__delete_repo", false, decided{Effect: "ask"}},
				{"mcp__fs__write", false, decided{Effect: "ask"}},
				{"write", false, decided{Effect: "ask"}},
				{"mcp__fs__rm", true, decided{"deny", "mcp__fs__rm", "project"}},
				{"read", true, decided{"ask", "read", "project"}},
				{"bash", true, decided{"deny", "bash", "local"}},
				{"grep", true, decided{Effect: "allow"}},
			},
		},
		{
			name:    "first rule of the same effect decides: user before project",
			user:    rules(``, ``, `"mcp__gh"`),
			project: rules(``, ``, `"mcp__gh__x"`),
			calls: []call{
				{"mcp__gh__x", false, decided{"deny", "mcp__gh", "user"}},
			},
		},
		{
			name: "odd names cannot slip past a deny",
			user: rules(`"*"`, ``, `"mcp__gh", "mcp__fs_", "mcp__*__rm*", "bash"`),
			calls: []call{
				{"mcp__gh__x", false, decided{"deny", "mcp__gh", "user"}},
				{"mcp__gh___x", false, decided{"deny", "mcp__gh", "user"}},
				{"mcp__gh____x", false, decided{"deny", "mcp__gh", "user"}},
				{"mcp__gh__a__b", false, decided{"deny", "mcp__gh", "user"}},
				{"mcp__gh__-", false, decided{"deny", "mcp__gh", "user"}},
				{"mcp__gh", false, decided{"deny", "mcp__gh", "user"}},
				{"mcp__fs___x", false, decided{"deny", "mcp__fs_", "user"}},
				{"mcp__fs__rm", false, decided{"deny", "mcp__*__rm*", "user"}},
				{"mcp__fs__rm__all", false, decided{"deny", "mcp__*__rm*", "user"}},
				{"mcp__fs__rmdir", false, decided{"deny", "mcp__*__rm*", "user"}},
				{"mcp__x___rm", false, decided{"deny", "mcp__*__rm*", "user"}},
				{"bash", false, decided{"deny", "bash", "user"}},
				{"Bash", false, decided{"allow", "*", "user"}},
				{"mcp__GH__x", false, decided{"allow", "*", "user"}},
			},
		},
		{
			name: "odd names cannot stretch an allow",
			user: rules(`"mcp__gh", "mcp__gh__get_*", "read", "mcp__*__list"`, ``, ``),
			calls: []call{
				{"mcp__gh___x", false, decided{Effect: "ask"}}, // maybe server "gh_"
				{"mcp__gh_x__y", false, decided{Effect: "ask"}},
				{"mcp__ghx__get_y", false, decided{Effect: "ask"}},
				{"readme", false, decided{Effect: "ask"}},
				{"read_all", false, decided{Effect: "ask"}},
				{"mcp__a__b__list", false, decided{Effect: "ask"}},
				{"mcp__a___list", false, decided{Effect: "ask"}}, // maybe tool "_list"
				{"mcp__a__list", false, decided{"allow", "mcp__*__list", "user"}},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, warnings, err := Load(files(t, tc.user, tc.project, tc.local, tc.trusted))
			if err != nil {
				t.Fatal(err)
			}
			_ = warnings
			var want, got []decided
			for _, c := range tc.calls {
				want = append(want, c.want)
				got = append(got, summarize(s.Decide(c.id, "", c.readOnly)))
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("decisions (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDecideReason(t *testing.T) {
	opts := files(t, rules(`"read"`, `"mcp__gh"`, `"bash"`), "", "", false)
	s, _, err := Load(opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.AllowSession("mcp__fs"); err != nil {
		t.Fatal(err)
	}
	got := []string{
		s.Decide("grep", "", true).Reason,
		s.Decide("write", "", false).Reason,
		s.Decide("read", "", false).Reason,
		s.Decide("mcp__gh__x", "", true).Reason,
		s.Decide("bash", "", true).Reason,
		s.Decide("mcp__fs__x", "", false).Reason,
	}
	want := []string{
		"no rule; tool is read-only",
		"no rule; tool is not read-only",
		fmt.Sprintf("allowed by rule %q in %s", "read", opts.UserFile),
		fmt.Sprintf("ask rule %q in %s", "mcp__gh", opts.UserFile),
		fmt.Sprintf("denied by rule %q in %s", "bash", opts.UserFile),
		`allowed by rule "mcp__fs" for this session`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("reasons (-want +got):\n%s", diff)
	}
}

func TestNilSet(t *testing.T) {
	var s *Set
	if got := summarize(s.Decide("write", "", false)); got != (decided{Effect: "ask"}) {
		t.Errorf("nil Set: %v", got)
	}
	if got := summarize((*Set)(nil).Decide("read", "", true)); got != (decided{Effect: "allow"}) {
		t.Errorf("Decide(nil): %v", got)
	}
	if got := s.Rules(); len(got) != 0 {
		t.Errorf("nil Set rules: %v", got)
	}
	var zero Set
	if got := summarize(zero.Decide("write", "", false)); got != (decided{Effect: "ask"}) {
		t.Errorf("zero Set: %v", got)
	}
	if err := zero.AllowSession("write"); err != nil {
		t.Fatal(err)
	}
	if got := summarize(zero.Decide("write", "", false)); got != (decided{"allow", "write", "session"}) {
		t.Errorf("zero Set after AllowSession: %v", got)
	}
}

func TestLoadWarnings(t *testing.T) {
	project := `{
  // shipped with the repo
  "permissions": {
    "allow": ["mcp__*",
              "read"],
    "deny": ["mcp__git hub", "mcp__fs"],
    "defaultMode": "yolo"
  },
  "mcp": {"servers": []}
}`
	opts := files(t, rules(`"mcp__a.b"`, ``, ``), project, "", false)
	s, warnings, err := Load(opts)
	if err != nil {
		t.Fatal(err)
	}
	proj := filepath.Join(opts.ProjectDir, ".freecode", SettingsFile)
	var got []string
	for _, w := range warnings {
		got = append(got, w.String())
	}
	want := []string{
		fmt.Sprintf("ignored allow rule %q in %s:1:28: invalid rule: character '.' is not allowed: tool ids use only A-Z a-z 0-9 _ - (MCP tool names are sanitized to them), and * as a wildcard", "mcp__a.b", opts.UserFile),
		fmt.Sprintf("%s:7:5: unknown key \"defaultMode\" in \"permissions\" ignored (known: allow, ask, deny)", proj),
		fmt.Sprintf("ignored deny rule %q in %s:6:14: invalid rule: character ' ' is not allowed: tool ids use only A-Z a-z 0-9 _ - (MCP tool names are sanitized to them), and * as a wildcard", "mcp__git hub", proj),
		fmt.Sprintf("ignored allow rule %q in %s:4:15: project not trusted; run `freecode trust`", "mcp__*", proj),
		fmt.Sprintf("ignored allow rule %q in %s:5:15: project not trusted; run `freecode trust`", "read", proj),
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
	wantRules := []Rule{{Pattern: "mcp__fs", Effect: Deny, Source: SourceProject, File: proj}}
	if diff := cmp.Diff(wantRules, s.Rules()); diff != "" {
		t.Errorf("rules (-want +got):\n%s", diff)
	}

	// Trusted, the same allow rules apply and nothing is reported for them.
	opts.Trusted = true
	s, warnings, err = Load(opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(warnings) != 3 {
		t.Errorf("trusted: %d warnings, want 3 (the invalid rules and the unknown key): %v", len(warnings), warnings)
	}
	if got := summarize(s.Decide("mcp__x__y", "", false)); got != (decided{"allow", "mcp__*", "project"}) {
		t.Errorf("trusted project allow: %v", got)
	}
}

func TestLoadWarningsCapped(t *testing.T) {
	bad := strings.Repeat(`"a.b", `, 30)
	opts := files(t, "", rules(`"mcp__*", `+bad+`"x.y"`, ``, `"bash"`), "", false)
	s, warnings, err := Load(opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(warnings) != maxWarnings+1 {
		t.Fatalf("%d warnings, want %d", len(warnings), maxWarnings+1)
	}
	if got, want := warnings[maxWarnings].Msg, "12 more problems from here on not shown"; got != want {
		t.Errorf("last warning %q, want %q", got, want)
	}
	if got := summarize(s.Decide("bash", "", true)); got != (decided{"deny", "bash", "project"}) {
		t.Errorf("deny rule after many warnings: %v", got)
	}
}

func TestRulesOrder(t *testing.T) {
	opts := files(t,
		rules(`"u1", "u2"`, `"u3"`, `"u4"`),
		rules(`"p1"`, `"p2"`, `"p3"`),
		rules(`"l1"`, ``, `"l2"`), true)
	s, _, err := Load(opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.AllowSession("s1"); err != nil {
		t.Fatal(err)
	}
	if err := s.AllowSession(" s1 "); err != nil { // a duplicate: no-op
		t.Fatal(err)
	}
	var got []string
	for _, r := range s.Rules() {
		got = append(got, fmt.Sprintf("%s %s %s", r.Source, r.Effect, r.Pattern))
	}
	want := []string{
		"user deny u4", "user ask u3", "user allow u1", "user allow u2",
		"project deny p3", "project ask p2", "project allow p1",
		"local deny l2", "local allow l1",
		"session allow s1",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("rules (-want +got):\n%s", diff)
	}
	// The slice is the caller's.
	s.Rules()[0].Pattern = "changed"
	if got := s.Rules()[0].Pattern; got != "u4" {
		t.Errorf("Rules shares its slice: %q", got)
	}
	if err := s.AllowSession("mcp__"); err == nil {
		t.Error("AllowSession accepted an invalid pattern")
	}
}

// RemoveSession takes a session allow back: the tool asks again, and a
// file's rule of the same pattern is untouched.
func TestRemoveSession(t *testing.T) {
	s, _, err := Load(files(t, rules(`"mcp__fs"`, ``, ``), "", "", false))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"mcp__gh__delete", "mcp__fs"} {
		if err := s.AllowSession(p); err != nil {
			t.Fatal(err)
		}
	}
	if removed, err := s.RemoveSession(" mcp__gh__delete "); err != nil || !removed {
		t.Fatalf("RemoveSession = %v, %v", removed, err)
	}
	if got := summarize(s.Decide("mcp__gh__delete", "", false)); got != (decided{Effect: "ask"}) {
		t.Errorf("Decide after RemoveSession = %+v, want ask", got)
	}
	if removed, err := s.RemoveSession("mcp__gh__delete"); err != nil || removed {
		t.Errorf("RemoveSession again = %v, %v; want false", removed, err)
	}
	if removed, _ := s.RemoveSession("mcp__fs"); !removed {
		t.Error("RemoveSession of mcp__fs found none")
	}
	if got := summarize(s.Decide("mcp__fs__read", "", false)); got != (decided{"allow", "mcp__fs", "user"}) {
		t.Errorf("the user file's rule after RemoveSession = %+v", got)
	}
}

// A project at the user's home has the user's settings.json as its own: it
// is read once, as the user's, whether the home is named as it is or
// through a symbolic link. The local file beside it is the project's.
func TestLoadProjectAtHome(t *testing.T) {
	opts := files(t, rules(`"u1"`, ``, `"u2"`), ``, rules(`"l1"`, ``, ``), false)
	home := filepath.Dir(filepath.Dir(opts.UserFile))
	link := filepath.Join(t.TempDir(), "home-link")
	if err := os.Symlink(home, link); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".freecode", LocalSettingsFile), []byte(rules(`"l1"`, ``, ``)), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{home, home + "/.", link} {
		opts.ProjectDir = dir
		s, warnings, err := Load(opts)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range s.Rules() {
			got = append(got, fmt.Sprintf("%s %s %s", r.Source, r.Effect, r.Pattern))
		}
		// Untrusted, the local allow rule is a warning: the user's is not.
		want := []string{"user deny u2", "user allow u1"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("project %s: rules (-want +got):\n%s", dir, diff)
		}
		if len(warnings) != 1 || warnings[0].Pattern != "l1" {
			t.Errorf("project %s: warnings %+v, want the local file's l1 only", dir, warnings)
		}
	}
}

func TestLoadErrors(t *testing.T) {
	tests := []struct {
		name, user string
		line, col  int
		msg        string
	}{
		{"syntax", "{\n  \"permissions\": {\n    \"deny\": [\"a\" \"b\"]\n  }\n}", 3, 18, "invalid character"},
		{"not an object", `["read"]`, 1, 1, "must hold a JSON object"},
		{"permissions not an object", `{"permissions": ["read"]}`, 1, 17, `"permissions" must be an object`},
		{"list not a list", "{\"permissions\": {\n\"deny\": \"mcp__gh\"}}", 2, 9, `"permissions.deny" must be a list of strings`},
		{"element not a string", `{"permissions": {"deny": ["a", 1]}}`, 1, 32, `"permissions.deny" must be a list of strings`},
		{"duplicate list", `{"permissions": {"deny": ["a"], "deny": []}}`, 1, 33, `duplicate key "deny" in "permissions" (the first is at line 1, column 18)`},
		{"duplicate permissions", `{"permissions": {}, "permissions": {"deny": ["a"]}}`, 1, 21, `duplicate key "permissions" (the first is at line 1, column 2)`},
		{"nested too deep", "{\"x\":\n" + strings.Repeat("[", 100_000) + strings.Repeat("]", 100_000) + "}", 2, config.MaxDepth, "nest deeper than"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			opts := files(t, tc.user, rules(``, ``, `"bash"`), "", false)
			s, _, err := Load(opts)
			var pe *config.ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("Load error = %v, want a *config.ParseError", err)
			}
			if pe.Path != opts.UserFile || pe.Line != tc.line || pe.Col != tc.col || !strings.Contains(pe.Msg, tc.msg) {
				t.Errorf("error = %v, want %s:%d:%d: …%s…", err, opts.UserFile, tc.line, tc.col, tc.msg)
			}
			// The files that did load still apply: a broken file cannot
			// take the other files' deny rules away.
			if got := summarize(s.Decide("bash", "", true)); got != (decided{"deny", "bash", "project"}) {
				t.Errorf("other file's rule after the error: %v", got)
			}
		})
	}
	t.Run("too large", func(t *testing.T) {
		big := `{"permissions": {"deny": ["bash"]}, "pad": "` + strings.Repeat("x", config.MaxFileBytes) + `"}`
		opts := files(t, rules(``, ``, `"grep"`), big, "", false)
		s, _, err := Load(opts)
		if err == nil || !strings.Contains(err.Error(), "larger than 4 MiB") {
			t.Errorf("Load error = %v, want a size error", err)
		}
		if got := summarize(s.Decide("grep", "", true)); got != (decided{"deny", "grep", "user"}) {
			t.Errorf("the user's rules after a huge project file: %v", got)
		}
	})
	t.Run("unreadable", func(t *testing.T) {
		opts := files(t, "", "", "", false)
		if err := os.MkdirAll(opts.UserFile, 0o700); err != nil { // a directory: read fails
			t.Fatal(err)
		}
		if _, _, err := Load(opts); err == nil || !strings.Contains(err.Error(), opts.UserFile) {
			t.Errorf("Load error = %v, want one naming %s", err, opts.UserFile)
		}
	})
}

func TestReloadKeepsLastGood(t *testing.T) {
	opts := files(t, rules(``, ``, `"mcp__gh"`), rules(``, `"bash"`, ``), "", false)
	s, _, err := Load(opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.AllowSession("write"); err != nil {
		t.Fatal(err)
	}
	proj := filepath.Join(opts.ProjectDir, ".freecode", SettingsFile)
	// The user file breaks mid-edit and the project file changes.
	if err := os.WriteFile(opts.UserFile, []byte(`{"permissions": {"deny": ["mcp__gh",`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(proj, []byte(rules(``, `"grep"`, ``)), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = s.Reload(opts)
	var pe *config.ParseError
	if !errors.As(err, &pe) || pe.Path != opts.UserFile {
		t.Fatalf("Reload error = %v, want a parse error for %s", err, opts.UserFile)
	}
	check := func(when string, want []string) {
		t.Helper()
		var got []string
		for _, r := range s.Rules() {
			got = append(got, fmt.Sprintf("%s %s %s", r.Source, r.Effect, r.Pattern))
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: rules (-want +got):\n%s", when, diff)
		}
	}
	check("after a broken reload", []string{"user deny mcp__gh", "project ask grep", "session allow write"})

	// Fixed, and the project file removed.
	if err := os.WriteFile(opts.UserFile, []byte(rules(``, ``, `"mcp__fs"`)), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(proj); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Reload(opts); err != nil {
		t.Fatal(err)
	}
	check("after a good reload", []string{"user deny mcp__fs", "session allow write"})
}

// TestConcurrentDecide runs Decide from many goroutines while rules are
// added and reloaded; run it with -race.
func TestConcurrentDecide(t *testing.T) {
	opts := files(t, rules(`"mcp__gh__get_*"`, `"mcp__gh"`, `"mcp__gh__delete"`), "", "", false)
	s, _, err := Load(opts)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 500 {
				d := s.Decide(fmt.Sprintf("mcp__gh__t%d", i%50), "", false)
				if d.Effect == Deny {
					t.Errorf("goroutine %d: mcp__gh__t%d denied", g, i%50)
					return
				}
				if d := s.Decide("mcp__gh__delete", "", false); d.Effect != Deny {
					t.Errorf("goroutine %d: delete not denied: %v", g, d)
					return
				}
			}
		})
	}
	wg.Go(func() {
		for i := range 50 {
			if err := s.AllowSession(fmt.Sprintf("mcp__fs__t%d", i)); err != nil {
				t.Error(err)
			}
			_ = s.Rules()
		}
	})
	wg.Go(func() {
		for range 20 {
			if _, err := s.Reload(opts); err != nil {
				t.Error(err)
			}
		}
	})
	wg.Wait()
	if got := len(s.Rules()); got != 3+50 {
		t.Errorf("%d rules after the writers, want 53", got)
	}
}

// TestProjectTrusted: a Set remembers whether its last Load or Reload
// trusted the project, so an "always allow" for the project can say it will
// not apply yet.
func TestProjectTrusted(t *testing.T) {
	if (*Set)(nil).ProjectTrusted() || (&Set{}).ProjectTrusted() {
		t.Errorf("a nil or zero Set reports a trusted project")
	}
	opts := files(t, "", "", "", false)
	s, _, err := Load(opts)
	if err != nil {
		t.Fatal(err)
	}
	var got []bool
	got = append(got, s.ProjectTrusted())
	opts.Trusted = true
	if _, err := s.Reload(opts); err != nil {
		t.Fatal(err)
	}
	got = append(got, s.ProjectTrusted())
	opts.Trusted = false
	if _, err := s.Reload(opts); err != nil {
		t.Fatal(err)
	}
	got = append(got, s.ProjectTrusted())
	opts.Trusted = true
	s2, _, err := Load(opts)
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, s2.ProjectTrusted())
	if diff := cmp.Diff([]bool{false, true, false, true}, got); diff != "" {
		t.Errorf("ProjectTrusted after Load(false), Reload(true), Reload(false), Load(true) (-want +got):\n%s", diff)
	}
}
