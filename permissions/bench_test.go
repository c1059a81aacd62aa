package permissions

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/freecode/freecode/internal/toolid"
)

// benchRules is ~200 rules shaped like a busy user's files: 20 servers,
// each with a server rule, six tool rules and a tool glob, plus built-ins
// and cross-server globs.
func benchRules() []Rule {
	var rs []Rule
	add := func(p string, e Effect) { rs = append(rs, Rule{Pattern: p, Effect: e, Source: SourceUser, File: "f"}) }
	for s := range 20 {
		srv := fmt.Sprintf("mcp__server%02d", s)
		add(srv, Ask)
		for t := range 6 {
			add(fmt.Sprintf("%s__tool_%d", srv, t), []Effect{Allow, Allow, Allow, Ask, Deny, Allow}[t])
		}
		add(srv+"__get_*", Allow)
		add(fmt.Sprintf("mcp__server%02d*", s), Allow)
	}
	for i := range 15 {
		add(fmt.Sprintf("builtin_%d", i), Allow)
	}
	for i := range 5 {
		add(fmt.Sprintf("mcp__*__danger_%d*", i), Deny)
	}
	add("web*", Ask)
	add("bash", Deny)
	return rs
}

var benchIDs = []string{
	"mcp__server07__tool_2",        // literal tool rule
	"mcp__server07__get_issue",     // tool glob
	"mcp__server19__other",         // server rule
	"mcp__server07__danger_3_wipe", // cross-server glob, deny
	"mcp__unknown__thing",          // no rule
	"builtin_9",                    // built-in
	"mcp__server07___x",            // reads two ways
}

func BenchmarkDecide(b *testing.B) {
	rules := benchRules()
	s := &Set{}
	s.setFiles([]fileRules{{path: "f", rules: rules}})
	b.Logf("%d rules", len(rules))
	for _, id := range benchIDs {
		b.Run("indexed/"+id, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				s.Decide(id, "", false)
			}
		})
	}
	// The peer: every compiled pattern tried in turn, as a Set without an
	// index would. It shows what the index buys.
	pats := make([]pattern, len(rules))
	for i, r := range rules {
		pats[i], _, _ = compile(r.Pattern)
	}
	for _, id := range benchIDs {
		b.Run("linear/"+id, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				bi := -1
				for i := range pats {
					some, every := pats[i].covers(id)
					if !some || rules[i].Effect == Allow && !every {
						continue
					}
					if bi < 0 || rules[i].Effect > rules[bi].Effect {
						bi = i
					}
				}
			}
		})
	}
	// A long id (a tool with an alias), without and with rules that name
	// aliases: the alias lookup, a hash of the id, is paid only when some
	// rule looks like an alias.
	long := toolid.Format("server07", strings.Repeat("long_tool_name_", 5))
	longAlias := toolid.Alias(long)
	withAliases := &Set{}
	withAliases.setFiles([]fileRules{{path: "f", rules: append(slices.Clone(rules),
		Rule{Pattern: toolid.Alias(long + "x"), Effect: Deny, Source: SourceUser, File: "f"},
		Rule{Pattern: longAlias, Effect: Allow, Source: SourceUser, File: "f"})}})
	for _, bc := range []struct {
		name string
		set  *Set
	}{{"long-id", s}, {"long-id-alias-rules", withAliases}} {
		b.Run("indexed/"+bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				bc.set.Decide(long, longAlias, false)
			}
		})
	}
	b.Run("indexed-parallel", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			i := 0
			for pb.Next() {
				s.Decide(benchIDs[i%len(benchIDs)], "", false)
				i++
			}
		})
	})
}

// TestBenchRulesAgree checks the benchmark's two matchers decide alike, so
// the comparison is between equals.
func TestBenchRulesAgree(t *testing.T) {
	rules := benchRules()
	s := &Set{}
	s.setFiles([]fileRules{{path: "f", rules: rules}})
	want := map[string]string{
		"mcp__server07__tool_2":        "ask mcp__server07", // ask beats allow
		"mcp__server07__tool_4":        "deny mcp__server07__tool_4",
		"mcp__server07__get_issue":     "ask mcp__server07",
		"mcp__server19__other":         "ask mcp__server19",
		"mcp__server07__danger_3_wipe": "deny mcp__*__danger_3*",
		"mcp__unknown__thing":          "ask ",
		"builtin_9":                    "allow builtin_9",
		"mcp__server07___x":            "ask mcp__server07",
		"mcp__server071__x":            "allow mcp__server07*",
	}
	for id, w := range want {
		d := s.Decide(id, "", false)
		got := d.Effect.String() + " "
		if d.Rule != nil {
			got += d.Rule.Pattern
		}
		if got != w {
			t.Errorf("Decide(%q) = %q, want %q", id, got, w)
		}
	}
}

// BenchmarkDecideManaged is the policy's share of a call's check: the same
// ~200 rules of the user's, with an organization's 20 managed rules loaded
// ahead of them (managed), and without (user only), on the same ids.
func BenchmarkDecideManaged(b *testing.B) {
	rules := benchRules()
	var managed []Rule
	for s := range 10 {
		managed = append(managed,
			Rule{Pattern: fmt.Sprintf("mcp__server%02d__delete_*", s), Effect: Deny, Source: SourceManaged, File: "/etc/freecode/managed-settings.json"},
			Rule{Pattern: fmt.Sprintf("mcp__server%02d__merge_*", s), Effect: Ask, Source: SourceManaged, File: "/etc/freecode/managed-settings.json"})
	}
	user := &Set{}
	user.setFiles([]fileRules{{path: "f", rules: rules}})
	both := &Set{}
	both.setFiles([]fileRules{{path: "/etc/freecode/managed-settings.json", rules: managed}, {path: "f", rules: rules}})
	for _, c := range []struct {
		name string
		set  *Set
	}{{"user_only", user}, {"managed", both}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				for _, id := range benchIDs {
					c.set.Decide(id, "", false)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(benchIDs)), "ns/decide")
		})
	}
}
