package permissions

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// trusted writes a trusted project's two files, with HOME a directory of
// the test's (the record of accepted rules is the user's), and records
// their rules as accepted, as `freecode trust` does.
func trusted(t *testing.T, project, local string) LoadOptions {
	t.Helper()
	t.Setenv("HOME", t.TempDir())
	opts := files(t, "", project, local, true)
	if _, _, err := Accept(opts, ""); err != nil {
		t.Fatal(err)
	}
	return opts
}

// rewrite replaces one of the project's files, as a pull or another
// program would.
func rewrite(t *testing.T, opts LoadOptions, name, data string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(opts.ProjectDir, ".freecode", name), []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}

// loadAccepted loads opts with the project's record.
func loadAccepted(t *testing.T, opts LoadOptions) (*Set, []Warning) {
	t.Helper()
	acc, err := ReadAccepted(opts.ProjectDir)
	if err != nil || acc == nil {
		t.Fatalf("ReadAccepted = %v, %v", acc, err)
	}
	opts.Accepted = acc
	set, ws, err := Load(opts)
	if err != nil {
		t.Fatal(err)
	}
	return set, ws
}

// In a trusted project a rule file that loosens (an allow rule added, a
// deny or ask rule taken out) does not loosen the rules in force: the new
// allow rule is ignored, the old deny and ask rules are still enforced, each
// with a warning, and the change is pending. What tightens applies at once.
func TestAcceptedHoldsBackLoosening(t *testing.T) {
	type call struct {
		id   string
		want decided
	}
	tests := []struct {
		name           string
		project, local string // as accepted
		newLocal       string // as rewritten
		calls          []call
		pending        []FileChange // Path left out
		warnings       []string
	}{
		{
			name:     "a new allow rule is ignored",
			local:    rules(`"mcp__gh__get"`, ``, ``),
			newLocal: rules(`"mcp__gh__get", "mcp__*"`, ``, ``),
			calls: []call{
				{"mcp__gh__get", decided{"allow", "mcp__gh__get", "local"}},
				{"mcp__gh__delete", decided{Effect: "ask"}},
			},
			pending:  []FileChange{{Source: SourceLocal, Allow: []string{"mcp__*"}}},
			warnings: []string{`ignored allow rule "mcp__*" in settings.local.json:1:44: ` + msgAwaits},
		},
		{
			name:     "a removed deny rule is still enforced",
			local:    rules(`"mcp__gh"`, ``, `"mcp__gh__delete"`),
			newLocal: rules(`"mcp__gh"`, ``, ``),
			calls: []call{
				{"mcp__gh__delete", decided{"deny", "mcp__gh__delete", "local"}},
				{"mcp__gh__get", decided{"allow", "mcp__gh", "local"}},
			},
			pending:  []FileChange{{Source: SourceLocal, Deny: []string{"mcp__gh__delete"}}},
			warnings: []string{`settings.local.json: deny rule "mcp__gh__delete", which you accepted, is no longer in the file; it is still enforced until you accept the change: run ` + "`freecode trust`" + `, or accept it in the editor`},
		},
		{
			name:     "a deleted file keeps its deny and ask rules",
			local:    rules(``, `"mcp__gh"`, `"bash"`),
			newLocal: "-",
			calls: []call{
				{"bash", decided{"deny", "bash", "local"}},
				{"mcp__gh__get", decided{"ask", "mcp__gh", "local"}},
			},
			pending: []FileChange{{Source: SourceLocal, Ask: []string{"mcp__gh"}, Deny: []string{"bash"}}},
			warnings: []string{
				`settings.local.json: deny rule "bash", which you accepted, is no longer in the file; it is still enforced until you accept the change: run ` + "`freecode trust`" + `, or accept it in the editor`,
				`settings.local.json: ask rule "mcp__gh", which you accepted, is no longer in the file; it is still enforced until you accept the change: run ` + "`freecode trust`" + `, or accept it in the editor`,
			},
		},
		{
			name:     "a deny rule turned allow is held both ways",
			project:  rules(`"read"`, ``, ``),
			local:    rules(``, ``, `"mcp__gh__delete"`),
			newLocal: rules(`"mcp__gh__delete"`, ``, ``),
			calls: []call{
				{"mcp__gh__delete", decided{"deny", "mcp__gh__delete", "local"}},
				{"read", decided{"allow", "read", "project"}},
			},
			pending: []FileChange{{Source: SourceLocal, Allow: []string{"mcp__gh__delete"}, Deny: []string{"mcp__gh__delete"}}},
			warnings: []string{
				`ignored allow rule "mcp__gh__delete" in settings.local.json:1:28: ` + msgAwaits,
				`settings.local.json: deny rule "mcp__gh__delete", which you accepted, is no longer in the file; it is still enforced until you accept the change: run ` + "`freecode trust`" + `, or accept it in the editor`,
			},
		},
		{
			name:     "tightening applies at once",
			local:    rules(`"mcp__gh"`, ``, ``),
			newLocal: rules(``, `"mcp__fs"`, `"mcp__gh__delete"`),
			calls: []call{
				{"mcp__gh__delete", decided{"deny", "mcp__gh__delete", "local"}},
				{"mcp__gh__get", decided{Effect: "ask"}},
				{"mcp__fs__read", decided{"ask", "mcp__fs", "local"}},
			},
		},
		{
			name:     "an allow rule rewritten with spaces is the same rule",
			local:    rules(`"mcp__gh"`, ``, ``),
			newLocal: rules(`" mcp__gh "`, ``, ``),
			calls:    []call{{"mcp__gh__get", decided{"allow", "mcp__gh", "local"}}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			opts := trusted(t, tc.project, tc.local)
			if tc.newLocal == "-" {
				if err := os.Remove(filepath.Join(opts.ProjectDir, ".freecode", LocalSettingsFile)); err != nil {
					t.Fatal(err)
				}
			} else {
				rewrite(t, opts, LocalSettingsFile, tc.newLocal)
			}
			set, ws := loadAccepted(t, opts)
			for _, c := range tc.calls {
				if got := summarize(set.Decide(c.id, "", false)); got != c.want {
					t.Errorf("Decide(%s) = %+v, want %+v", c.id, got, c.want)
				}
			}
			var got []string
			for _, w := range ws {
				got = append(got, strings.ReplaceAll(w.String(), filepath.Join(opts.ProjectDir, ".freecode")+string(filepath.Separator), ""))
			}
			if diff := cmp.Diff(tc.warnings, got); diff != "" {
				t.Errorf("warnings (-want +got):\n%s", diff)
			}
			p := set.Pending()
			if tc.pending == nil {
				if p != nil {
					t.Errorf("Pending() = %+v, want nil", p)
				}
				return
			}
			if p == nil {
				t.Fatal("Pending() = nil")
			}
			for i := range tc.pending {
				tc.pending[i].Path = filepath.Join(opts.ProjectDir, ".freecode", LocalSettingsFile)
			}
			if diff := cmp.Diff(tc.pending, p.Files); diff != "" {
				t.Errorf("Pending().Files (-want +got):\n%s", diff)
			}
			// Accepting by the pending's hash makes the file's rules the
			// ones in force, and leaves nothing pending.
			if _, _, err := Accept(opts, p.Hash); err != nil {
				t.Fatalf("Accept(pending hash): %v", err)
			}
			set, ws = loadAccepted(t, opts)
			if p := set.Pending(); p != nil || len(ws) != 0 {
				t.Errorf("after accepting: pending %+v, warnings %v", p, ws)
			}
		})
	}
}

// A hostile write, as in the report that started this: a trusted project's
// local file gains allow mcp__*; the user's destructive tool still asks.
// "Always allow for this project", FreeCode's own write of the same file,
// never waits for review.
func TestAddScopeAllowIsAccepted(t *testing.T) {
	opts := trusted(t, "", "{}")
	userDir := filepath.Dir(opts.UserFile)
	if _, err := AddScopeAllow(SourceLocal, userDir, opts.ProjectDir, "mcp__gh__delete"); err != nil {
		t.Fatal(err)
	}
	set, ws := loadAccepted(t, opts)
	if got := summarize(set.Decide("mcp__gh__delete", "", false)); got != (decided{"allow", "mcp__gh__delete", "local"}) {
		t.Errorf("Decide after always-allow = %+v", got)
	}
	if p := set.Pending(); p != nil || len(ws) != 0 {
		t.Errorf("FreeCode's own rule awaits review: %+v %v", p, ws)
	}

	// Another hand adds a rule beside it: that one waits.
	path := filepath.Join(opts.ProjectDir, ".freecode", LocalSettingsFile)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rewrite(t, opts, LocalSettingsFile, strings.Replace(string(data), `"mcp__gh__delete"`, `"mcp__gh__delete", "mcp__*"`, 1))
	set, _ = loadAccepted(t, opts)
	if got := summarize(set.Decide("mcp__fs__write", "", false)); got != (decided{Effect: "ask"}) {
		t.Errorf("Decide with a hostile mcp__* = %+v, want ask", got)
	}
	if got := summarize(set.Decide("mcp__gh__delete", "", false)); got != (decided{"allow", "mcp__gh__delete", "local"}) {
		t.Errorf("Decide of the user's own rule = %+v", got)
	}
	if p := set.Pending(); p == nil || len(p.Files) != 1 || !cmp.Equal(p.Files[0].Allow, []string{"mcp__*"}) {
		t.Errorf("Pending() = %+v, want mcp__* alone", p)
	}

	// In a project with no record (not trusted), the rule is written and
	// no record is made.
	other := files(t, "", "", "{}", false)
	if _, err := AddScopeAllow(SourceLocal, userDir, other.ProjectDir, "mcp__gh"); err != nil {
		t.Fatal(err)
	}
	if acc, err := ReadAccepted(other.ProjectDir); acc != nil || err != nil {
		t.Errorf("an untrusted project got a record: %+v, %v", acc, err)
	}
}

// Accept checks the hash the user was shown, writes a 0600 record outside
// the project, and returns the record it replaced; RemoveAccepted forgets
// it; Adopt takes a project's rules as accepted only when it has no record.
func TestAcceptRecord(t *testing.T) {
	opts := trusted(t, rules(`"read"`, ``, ``), "")
	path, err := AcceptedPath(opts.ProjectDir)
	if err != nil {
		t.Fatal(err)
	}
	home, _ := os.UserHomeDir()
	if filepath.Dir(path) != filepath.Join(home, ".freecode", "trust") {
		t.Errorf("AcceptedPath = %s", path)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("record: %v, %v", fi, err)
	}
	// The record of a project is found through a link to it.
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(opts.ProjectDir, link); err != nil {
		t.Fatal(err)
	}
	if p, _ := AcceptedPath(link); p != path {
		t.Errorf("AcceptedPath(link) = %s, want %s", p, path)
	}

	rewrite(t, opts, SettingsFile, rules(`"read", "write"`, ``, ``))
	before, _ := ReadAccepted(opts.ProjectDir)
	if _, _, err := Accept(opts, before.Hash()); !errors.Is(err, ErrRulesChanged) {
		t.Errorf("Accept(a stale hash) = %v, want ErrRulesChanged", err)
	}
	if after, _ := ReadAccepted(opts.ProjectDir); !cmp.Equal(after, before) {
		t.Errorf("a refused Accept wrote %+v", after)
	}
	old, now, err := Accept(opts, "")
	if err != nil {
		t.Fatal(err)
	}
	want := []FileChange{{Path: "settings.json", Source: SourceProject, Allow: []string{"write"}}}
	if diff := cmp.Diff(want, Loosened(old, now, map[Source]string{SourceProject: "settings.json"})); diff != "" {
		t.Errorf("Loosened (-want +got):\n%s", diff)
	}

	// Adopt leaves a record alone.
	rewrite(t, opts, SettingsFile, rules(`"*"`, ``, ``))
	if a, adopted, err := Adopt(opts); err != nil || adopted || !cmp.Equal(a, now) {
		t.Errorf("Adopt with a record = %+v, %v, %v", a, adopted, err)
	}
	if err := RemoveAccepted(opts.ProjectDir); err != nil {
		t.Fatal(err)
	}
	if a, err := ReadAccepted(opts.ProjectDir); a != nil || err != nil {
		t.Errorf("after RemoveAccepted: %+v, %v", a, err)
	}
	if err := RemoveAccepted(opts.ProjectDir); err != nil {
		t.Errorf("RemoveAccepted again: %v", err)
	}
	// Without one, it takes the files as they are.
	a, adopted, err := Adopt(opts)
	if err != nil || !adopted || !cmp.Equal(a.Project.Allow, []string{"*"}) {
		t.Errorf("Adopt without a record = %+v, %v, %v", a, adopted, err)
	}
	if r, _ := ReadAccepted(opts.ProjectDir); !cmp.Equal(r, a) {
		t.Errorf("Adopt recorded %+v, want %+v", r, a)
	}
}

// A file that does not load is held to what was accepted of it: its
// accepted deny rules apply though the file's last good rules were never
// read (a first load), and accepting keeps what was accepted of it.
func TestAcceptedBrokenFile(t *testing.T) {
	opts := trusted(t, "", rules(``, ``, `"mcp__gh__delete"`))
	rewrite(t, opts, LocalSettingsFile, `{"permissions": {"deny": [`)
	acc, _ := ReadAccepted(opts.ProjectDir)
	opts.Accepted = acc
	set, _, err := Load(opts)
	if err == nil {
		t.Fatal("a broken file loaded")
	}
	if got := summarize(set.Decide("mcp__gh__delete", "", false)); got != (decided{"deny", "mcp__gh__delete", "local"}) {
		t.Errorf("Decide with a broken file = %+v", got)
	}
	opts.Accepted = nil
	if _, now, err := Accept(opts, ""); err != nil || !cmp.Equal(now, acc) {
		t.Errorf("Accept with a broken file = %+v, %v; want %+v", now, err, acc)
	}
}
