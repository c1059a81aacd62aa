package permissions

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/freecode/freecode/internal/toolid"
)

// TestDecideAlias: a rule that names a tool by its alias (the name the
// model and `freecode tools defs` show for an id over 64 characters) means
// that tool, whatever its effect; it covers no other tool, and a glob is
// never matched against aliases.
func TestDecideAlias(t *testing.T) {
	id := toolid.Format("demo", strings.Repeat("x", 70))
	alias := toolid.Alias(id)
	other := toolid.Format("demo", strings.Repeat("y", 70))
	otherAlias := toolid.Alias(other)
	// The same tool after a server added a tool whose id is its alias:
	// the registry gave it another one.
	moved := toolid.Format("demo", strings.Repeat("m", 70))
	movedNatural := toolid.Alias(moved)
	movedAlias := moved[:55] + "_0123abcd"
	tail := alias[len(alias)-3:]

	type call struct {
		id, alias string
		readOnly  bool
		want      decided
	}
	tests := []struct {
		name  string
		user  string
		calls []call
	}{
		{
			name: "deny by alias",
			user: rules(``, ``, `"`+alias+`"`),
			calls: []call{
				{id, alias, true, decided{"deny", alias, "user"}},
				{other, otherAlias, true, decided{Effect: "allow"}},
				{alias, "", true, decided{"deny", alias, "user"}}, // a tool whose id it is
			},
		},
		{
			name: "deny beats an allow by alias, and the other way round",
			user: rules(`"`+alias+`", "`+other+`"`, ``, `"`+id+`", "`+otherAlias+`"`),
			calls: []call{
				{id, alias, false, decided{"deny", id, "user"}},
				{other, otherAlias, false, decided{"deny", otherAlias, "user"}},
			},
		},
		{
			name: "ask by alias beats allow by id",
			user: rules(`"`+id+`"`, `"`+alias+`"`, ``),
			calls: []call{
				{id, alias, true, decided{"ask", alias, "user"}},
			},
		},
		{
			name: "allow by alias",
			user: rules(`"`+alias+`"`, ``, ``),
			calls: []call{
				{id, alias, false, decided{"allow", alias, "user"}},
				{other, otherAlias, false, decided{Effect: "ask"}},
			},
		},
		{
			name: "globs match ids, not aliases",
			user: rules(`"mcp__*__*`+tail+`"`, ``, `"`+alias[:20]+`*`+tail+`"`),
			calls: []call{
				{id, alias, false, decided{Effect: "ask"}},
			},
		},
		{
			name: "a moved alias: deny by the alias it lost still covers it",
			user: rules(``, ``, `"`+movedNatural+`"`),
			calls: []call{
				{moved, movedAlias, true, decided{"deny", movedNatural, "user"}},
			},
		},
		{
			name: "a moved alias: ask by the alias it lost still covers it",
			user: rules(``, `"`+movedNatural+`"`, ``),
			calls: []call{
				{moved, movedAlias, true, decided{"ask", movedNatural, "user"}},
			},
		},
		{
			name: "a moved alias: allow by the alias it has",
			user: rules(`"`+movedAlias+`"`, ``, ``),
			calls: []call{
				{moved, movedAlias, false, decided{"allow", movedAlias, "user"}},
			},
		},
		{
			name: "a moved alias: allow by the one it lost covers nothing of it",
			user: rules(`"`+movedNatural+`"`, ``, ``),
			calls: []call{
				{moved, movedAlias, false, decided{Effect: "ask"}},
			},
		},
		{
			name: "an alias passed with a short id is ignored",
			user: rules(``, ``, `"`+alias+`"`),
			calls: []call{
				{"mcp__demo__short", alias, true, decided{Effect: "allow"}},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, warnings, err := Load(files(t, tc.user, "", "", true))
			if err != nil || len(warnings) > 0 {
				t.Fatal(err, warnings)
			}
			var want, got []decided
			for _, c := range tc.calls {
				want = append(want, c.want)
				got = append(got, summarize(s.Decide(c.id, c.alias, c.readOnly)))
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("decisions (-want +got):\n%s", diff)
			}
		})
	}
}

// TestDecideAliasAllocs: matching rules against a long tool's aliases
// keeps Decide allocation-free.
func TestDecideAliasAllocs(t *testing.T) {
	id := toolid.Format("demo", strings.Repeat("x", 70))
	alias := toolid.Alias(id)
	s := &Set{}
	s.setFiles([]fileRules{{path: "f", rules: []Rule{
		{Pattern: alias, Effect: Ask, Source: SourceUser, File: "f"},
		{Pattern: toolid.Alias(id + "2"), Effect: Deny, Source: SourceUser, File: "f"},
	}}})
	if n := testing.AllocsPerRun(100, func() { s.Decide(id, alias, false) }); n != 0 {
		t.Errorf("Decide allocates %v times per call", n)
	}
	moved := alias[:60] + "0000"
	if n := testing.AllocsPerRun(100, func() { s.Decide(id, moved, false) }); n != 0 {
		t.Errorf("Decide with a moved alias allocates %v times per call", n)
	}
}
