package permissions

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/freecode/freecode/config"
)

const managedFile = "/etc/freecode/managed-settings.json"

// managed returns the managed rules of effect e, one a line of
// managedFile.
func managed(e string, patterns ...string) []config.ManagedRule {
	var out []config.ManagedRule
	for i, p := range patterns {
		out = append(out, config.ManagedRule{Pattern: p, Effect: e, Path: managedFile, Line: 3 + i, Col: 5})
	}
	return out
}

// No rule of another source, no session allow, loosens a managed deny or
// ask rule; a managed allow rule loosens no one's deny or ask rule either.
func TestManagedPrecedence(t *testing.T) {
	type call struct {
		id   string
		want decided
	}
	tests := []struct {
		name                 string
		managed              []config.ManagedRule
		user, project, local string
		accept               bool     // trust the project with its rules accepted (a record)
		session              []string // AllowSession
		calls                []call
	}{
		{
			name:    "managed deny vs user allow",
			managed: managed("deny", "mcp__x"),
			user:    rules(`"mcp__x__y", "mcp__*", "*"`, ``, ``),
			calls: []call{
				{"mcp__x__y", decided{"deny", "mcp__x", "managed"}},
				{"mcp__z__y", decided{"allow", "mcp__*", "user"}},
			},
		},
		{
			name:    "managed deny vs a trusted project's accepted allow",
			managed: managed("deny", "mcp__x__y"),
			project: rules(`"mcp__x"`, ``, ``),
			local:   rules(`"mcp__x__y"`, ``, ``),
			accept:  true,
			calls: []call{
				{"mcp__x__y", decided{"deny", "mcp__x__y", "managed"}},
				{"mcp__x__z", decided{"allow", "mcp__x", "project"}},
			},
		},
		{
			name:    "managed deny vs session allow",
			managed: managed("deny", "mcp__x__*"),
			session: []string{"mcp__x__y", "mcp__x"},
			calls: []call{
				{"mcp__x__y", decided{"deny", "mcp__x__*", "managed"}},
			},
		},
		{
			name:    "managed ask vs every allow",
			managed: append(managed("ask", "mcp__x"), managed("allow", "mcp__x__y")...),
			user:    rules(`"mcp__x__y"`, ``, ``),
			project: rules(`"mcp__x__y"`, ``, ``),
			local:   rules(`"mcp__x__y"`, ``, ``),
			accept:  true,
			session: []string{"mcp__x__y"},
			calls: []call{
				{"mcp__x__y", decided{"ask", "mcp__x", "managed"}},
			},
		},
		{
			name:    "managed allow vs the user's deny and ask",
			managed: managed("allow", "mcp__*"),
			user:    rules(``, `"mcp__a"`, `"mcp__b"`),
			calls: []call{
				{"mcp__a__y", decided{"ask", "mcp__a", "user"}},
				{"mcp__b__y", decided{"deny", "mcp__b", "user"}},
				{"mcp__c__y", decided{"allow", "mcp__*", "managed"}},
			},
		},
		{
			name:    "managed and user deny: the managed rule is named",
			managed: managed("deny", "mcp__x"),
			user:    rules(``, ``, `"mcp__x"`),
			calls: []call{
				{"mcp__x__y", decided{"deny", "mcp__x", "managed"}},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var opts LoadOptions
			if tc.accept {
				opts = trusted(t, tc.project, tc.local)
				if tc.user != "" {
					opts.UserFile = files(t, tc.user, "", "", false).UserFile
				}
				acc, err := ReadAccepted(opts.ProjectDir)
				if err != nil || acc == nil {
					t.Fatalf("ReadAccepted = %v, %v", acc, err)
				}
				opts.Accepted = acc
			} else {
				opts = files(t, tc.user, tc.project, tc.local, true)
			}
			opts.Managed = tc.managed
			s, warnings, err := Load(opts)
			if err != nil || len(warnings) > 0 {
				t.Fatalf("Load: %v, warnings %v", err, warnings)
			}
			for _, p := range tc.session {
				if err := s.AllowSession(p); err != nil {
					t.Fatal(err)
				}
			}
			for _, c := range tc.calls {
				if got := summarize(s.Decide(c.id, "", false)); got != c.want {
					t.Errorf("Decide(%s) = %v, want %v", c.id, got, c.want)
				}
			}
		})
	}
}

func TestManagedReason(t *testing.T) {
	opts := files(t, "", "", "", false)
	opts.Managed = append(managed("deny", "mcp__x"), managed("ask", "mcp__y")...)
	opts.Managed = append(opts.Managed, managed("allow", "mcp__z")...)
	s, _, err := Load(opts)
	if err != nil {
		t.Fatal(err)
	}
	got := []string{
		s.Decide("mcp__x__y", "", false).Reason,
		s.Decide("mcp__y__y", "", false).Reason,
		s.Decide("mcp__z__y", "", false).Reason,
	}
	want := []string{
		`denied by your organization's rule "mcp__x" in ` + managedFile,
		`your organization's ask rule "mcp__y" in ` + managedFile,
		`allowed by your organization's rule "mcp__z" in ` + managedFile,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("reasons (-want +got):\n%s", diff)
	}

	// The organization's message follows its refusals, and only them.
	opts.ManagedMessage = "ask #it-help"
	if _, err := s.Reload(opts); err != nil {
		t.Fatal(err)
	}
	if got, want := s.Decide("mcp__x__y", "", false).Reason, `denied by your organization's rule "mcp__x" in `+managedFile+" — ask #it-help"; got != want {
		t.Errorf("deny reason with a message: %q, want %q", got, want)
	}
	if got, want := s.Decide("mcp__y__y", "", false).Reason, `your organization's ask rule "mcp__y" in `+managedFile; got != want {
		t.Errorf("ask reason with a message: %q, want %q", got, want)
	}
}

// An invalid managed rule is skipped with a warning at its position, as a
// file's is; the valid ones apply.
func TestManagedWarnings(t *testing.T) {
	opts := files(t, "", "", "", false)
	opts.Managed = []config.ManagedRule{
		{Pattern: "mcp__git hub", Effect: "deny", Path: managedFile, Line: 4, Col: 14},
		{Pattern: "mcp__x", Effect: "forbid", Path: managedFile, Line: 5, Col: 14},
		{Pattern: "mcp__fs", Effect: "deny", Path: managedFile, Line: 6, Col: 14},
	}
	s, warnings, err := Load(opts)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, w := range warnings {
		got = append(got, w.String())
	}
	want := []string{
		fmt.Sprintf("ignored deny rule %q in %s:4:14: invalid rule: character ' ' is not allowed: tool ids use only A-Z a-z 0-9 _ - (MCP tool names are sanitized to them), and * as a wildcard", "mcp__git hub", managedFile),
		managedFile + `:5:14: your organization's rule "mcp__x" is ignored: its effect "forbid" is none of allow, ask, deny`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
	wantRules := []Rule{{Pattern: "mcp__fs", Effect: Deny, Source: SourceManaged, File: managedFile}}
	if diff := cmp.Diff(wantRules, s.Rules()); diff != "" {
		t.Errorf("rules (-want +got):\n%s", diff)
	}
}

// With ManagedOnly only the managed allow rules apply: every file's allow
// rules are ignored, each with a warning at its position, and the
// session's too; deny and ask rules of every source still apply.
func TestManagedOnly(t *testing.T) {
	opts := files(t,
		rules(`"mcp__u"`, ``, `"mcp__d"`),
		rules(`"mcp__p"`, `"mcp__q"`, ``),
		rules(`"mcp__l"`, ``, ``), false)
	s, _, err := Load(opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.AllowSession("mcp__s"); err != nil {
		t.Fatal(err)
	}

	opts.Managed = managed("allow", "mcp__m", "mcp__d")
	opts.ManagedOnly = true
	opts.ManagedPath = managedFile
	warnings, err := s.Reload(opts)
	if err != nil {
		t.Fatal(err)
	}
	proj := filepath.Join(opts.ProjectDir, ".freecode", SettingsFile)
	local := filepath.Join(opts.ProjectDir, ".freecode", LocalSettingsFile)
	why := "your organization allows only its own allow rules (allowManagedPermissionRulesOnly in " + managedFile + ")"
	var got []string
	for _, w := range warnings {
		got = append(got, w.String())
	}
	// The untrusted project's allow rules get this reason too: trusting
	// it would not let them apply.
	want := []string{
		fmt.Sprintf("ignored allow rule %q in %s:1:28: %s", "mcp__u", opts.UserFile, why),
		fmt.Sprintf("ignored allow rule %q in %s:1:28: %s", "mcp__p", proj, why),
		fmt.Sprintf("ignored allow rule %q in %s:1:28: %s", "mcp__l", local, why),
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
	for _, c := range []struct {
		id   string
		want decided
	}{
		{"mcp__u__x", decided{Effect: "ask"}},
		{"mcp__p__x", decided{Effect: "ask"}},
		{"mcp__l__x", decided{Effect: "ask"}},
		{"mcp__s__x", decided{Effect: "ask"}},
		{"mcp__m__x", decided{"allow", "mcp__m", "managed"}},
		{"mcp__d__x", decided{"deny", "mcp__d", "user"}},
		{"mcp__q__x", decided{"ask", "mcp__q", "project"}},
	} {
		if got := summarize(s.Decide(c.id, "", false)); got != c.want {
			t.Errorf("Decide(%s) = %v, want %v", c.id, got, c.want)
		}
	}
	if !s.ManagedOnly() {
		t.Error("ManagedOnly() = false")
	}
	if err := s.AllowSession("mcp__t"); !errors.Is(err, ErrManagedOnly) {
		t.Errorf("AllowSession under ManagedOnly: %v, want ErrManagedOnly", err)
	}
	var inForce []string
	for _, r := range s.Rules() {
		inForce = append(inForce, fmt.Sprintf("%s %s %s", r.Source, r.Effect, r.Pattern))
	}
	wantInForce := []string{"managed allow mcp__m", "managed allow mcp__d", "user deny mcp__d", "project ask mcp__q"}
	if diff := cmp.Diff(wantInForce, inForce); diff != "" {
		t.Errorf("rules (-want +got):\n%s", diff)
	}

	// The policy lifted, the session's allow applies again.
	lifted := opts
	lifted.ManagedOnly = false
	if _, err := s.Reload(lifted); err != nil {
		t.Fatal(err)
	}
	if got := summarize(s.Decide("mcp__s__x", "", false)); got != (decided{"allow", "mcp__s", "session"}) {
		t.Errorf("session allow after ManagedOnly lifted: %v", got)
	}

	// A file that no longer loads keeps its last rules, which may predate
	// the policy: its allow rules stay out all the same.
	if err := os.WriteFile(opts.UserFile, []byte(`{"permissions":`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Reload(opts); err == nil {
		t.Fatal("Reload of a broken user file: no error")
	}
	if got := summarize(s.Decide("mcp__u__x", "", false)); got != (decided{Effect: "ask"}) {
		t.Errorf("a broken file's last allow rule under ManagedOnly: %v", got)
	}
	if got := summarize(s.Decide("mcp__d__x", "", false)); got != (decided{"deny", "mcp__d", "user"}) {
		t.Errorf("a broken file's last deny rule under ManagedOnly: %v", got)
	}
}

func TestManagedRulesOrder(t *testing.T) {
	opts := files(t, rules(`"u1"`, ``, `"u2"`), "", "", false)
	opts.Managed = append(managed("allow", "m1"), managed("deny", "m2")...)
	opts.Managed = append(opts.Managed, managed("ask", "m3", "m4")...)
	opts.Managed = append(opts.Managed, managed("deny", "m2")...) // a duplicate: once
	s, _, err := Load(opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.AllowSession("s1"); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range s.Rules() {
		got = append(got, fmt.Sprintf("%s %s %s", r.Source, r.Effect, r.Pattern))
	}
	want := []string{
		"managed deny m2", "managed ask m3", "managed ask m4", "managed allow m1",
		"user deny u2", "user allow u1",
		"session allow s1",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("rules (-want +got):\n%s", diff)
	}
}
