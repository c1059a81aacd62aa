package permissions

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/freecode/freecode/internal/toolid"
)

// TestMatch is the rule language's boundary cases. some is whether the
// pattern applies as a deny or ask rule, allow whether it applies as an
// allow rule; they differ only for ids that read two ways.
func TestMatch(t *testing.T) {
	tests := []struct {
		pattern, id string
		some, allow bool
	}{
		// Server prefixes stop on the "__" boundary.
		{"mcp__github", "mcp__github__create_issue", true, true},
		{"mcp__github", "mcp__github__x", true, true},
		{"mcp__git", "mcp__github__x", false, false},
		{"mcp__git", "mcp__git__x", true, true},
		{"mcp__git", "mcp__git-hub__x", false, false},
		{"mcp__git", "mcp__git_hub__x", false, false},
		{"mcp__git", "mcp__git_", false, false},
		{"mcp__github", "mcp__github", true, true},
		{"mcp__github", "mcp__githu", false, false},
		{"mcp__github", "mcp__github2__x", false, false},
		{"mcp__github", "mcp__github-x__y", false, false},
		{"mcp__github", "mcp__xgithub__y", false, false},
		{"mcp__github", "github__x", false, false},
		{"mcp__github", "mcp__GitHub__x", false, false}, // case-sensitive
		{"mcp__github", "MCP__github__x", false, false},
		{"mcp__github", "mcp__github__a__b", true, true}, // tool "a__b"

		// A whole tool id is exact: no prefix of the tool name.
		{"mcp__github__create_issue", "mcp__github__create_issue", true, true},
		{"mcp__github__create_issue", "mcp__github__create_issue_x", false, false},
		{"mcp__github__create_issue", "mcp__github__create_issue__x", false, false},
		{"mcp__github__create_issue", "mcp__github__create_issu", false, false},
		{"mcp__github__create", "mcp__github__create_issue", false, false},
		{"mcp__github__create", "mcp__github__create__issue", false, false},
		{"mcp__github__a__b", "mcp__github__a__b", true, true},
		{"mcp__github__a__b", "mcp__github__a", false, false},
		{"mcp__github__x", "mcp__github_x", false, false},
		{"mcp__github__x", "mcp__github", false, false},

		// Globs stay within their part.
		{"mcp__github__get_*", "mcp__github__get_issue", true, true},
		{"mcp__github__get_*", "mcp__github__get_", true, true},
		{"mcp__github__get_*", "mcp__github__get", false, false},
		{"mcp__github__get_*", "mcp__github__getx", false, false},
		{"mcp__github__get_*", "mcp__github__delete_repo", false, false},
		{"mcp__github__get_*", "mcp__github__get_a__b", true, true}, // tool "get_a__b"
		{"mcp__github__get_*", "mcp__github2__get_x", false, false},
		{"mcp__github__get_*", "mcp__github_x__get_y", false, false},
		{"mcp__github__get_*", "mcp__x__github__get_y", false, false},
		{"mcp__*__read", "mcp__fs__read", true, true},
		{"mcp__*__read", "mcp__a__b__read", false, false}, // tool "b__read"
		{"mcp__*__read", "mcp__fs__read_x", false, false},
		{"mcp__*__read", "mcp__fs__read__x", false, false},
		{"mcp__*__read", "read", false, false},
		{"mcp__*__read", "mcp____read", true, true}, // empty server name
		{"mcp__*__*_delete", "mcp__fs__file_delete", true, true},
		{"mcp__*__*_delete", "mcp__fs__file_delete_x", false, false},
		{"mcp__*__*x*", "mcp__fs__axb", true, true},
		{"mcp__git*", "mcp__github__x", true, true},
		{"mcp__git*", "mcp__git__x", true, true},
		{"mcp__git*", "mcp__gi__x", false, false},
		{"mcp__git*", "mcp__xgit__x", false, false},
		{"mcp__*hub", "mcp__github__x", true, true},
		{"mcp__*hub", "mcp__hubx__x", false, false},
		{"mcp__g*b__x", "mcp__github__x", true, true},
		{"mcp__g*b__x", "mcp__gb__x", true, true},
		{"mcp__g*b__x", "mcp__g__b__x", false, false},
		{"mcp__*", "mcp__anything__x", true, true},
		{"mcp__*", "mcp__", true, true},
		{"mcp__*", "mcp__x", true, true},
		{"mcp__*", "mcp", false, false},
		{"mcp__*", "read", false, false},
		{"mcp__*", "mcpx__y", false, false},
		{"mcp__*__*", "mcp__a__b", true, true},
		{"mcp__*__*", "mcp__a__b__c", true, true},
		{"mcp__*__*", "mcp__a", false, false},
		{"mcp", "mcp__a__b", true, true},
		{"mcp", "mcp__a___b", true, true},
		{"mcp", "read", false, false},
		{"mcp", "mcpx", false, false},

		// "*" alone is everything.
		{"*", "read", true, true},
		{"*", "mcp__github__x", true, true},
		{"*", "mcp__a___b", true, true},
		{"*", "", true, true},

		// Built-ins by bare name.
		{"read", "read", true, true},
		{"read", "readme", false, false},
		{"read", "read_x", false, false},
		{"read", "rea", false, false},
		{"read", "Read", false, false},
		{"read", "mcp__read", false, false},
		{"read", "mcp__fs__read", false, false},
		{"read", "read__x", false, false},
		{"web*", "web_fetch", true, true},
		{"web*", "web", true, true},
		{"web*", "mcp__web__x", false, false},
		{"web-fetch", "web-fetch", true, true},
		{"web-fetch", "web_fetch", false, false},
		{"m*", "mcp__a__b", false, false}, // built-in globs never cover MCP tools

		// Dashes, digits, single and triple underscores are ordinary.
		{"mcp__my-server", "mcp__my-server__do", true, true},
		{"mcp__my-server", "mcp__my__do", false, false},
		{"mcp__my-server__do-it", "mcp__my-server__do-it", true, true},
		{"mcp__s3", "mcp__s3__put", true, true},
		{"mcp__a_b", "mcp__a_b__c", true, true},
		{"mcp__a_b", "mcp__a__b_c", false, false},
		{"mcp__a", "mcp__a_b__c", false, false},
		{"mcp___a", "mcp___a__b", true, true}, // server "_a"

		// Ids that read two ways: "mcp__a___x" is server "a" tool "_x" or
		// server "a_" tool "x". Deny/ask on either reading, allow on both.
		{"mcp__a", "mcp__a___x", true, false},
		{"mcp__a_", "mcp__a___x", true, false},
		{"mcp__a*", "mcp__a___x", true, true},
		{"mcp__a___x", "mcp__a___x", true, true},
		{"mcp__a__x", "mcp__a___x", false, false},
		{"mcp__a_", "mcp__a____x", true, false}, // server "a_" tool "_x", or "a" "__x"
		{"mcp__a", "mcp__a____x", true, false},
		{"mcp__*__x", "mcp__a___x", true, false},
		{"mcp__*___x", "mcp__a___x", false, false}, // invalid pattern
		{"mcp__a__*", "mcp__a___x", true, false},
		{"mcp__a___*", "mcp__a___x", false, false}, // invalid pattern
		{"mcp__*__*", "mcp__a___x", true, true},

		// Surrounding whitespace is trimmed.
		{"  mcp__github\t", "mcp__github__x", true, true},
		{"\nread ", "read", true, true},

		// Invalid patterns match nothing.
		{"mcp__", "mcp__github__x", false, false},
		{"mcp___", "mcp_____x", true, false}, // server "_": tool "x", or server "" tool "_x"
		{"mcp___", "mcp___", true, true},
		{"mcp__git hub", "mcp__git hub__x", false, false},
		{"mcp__github.x", "mcp__github.x", false, false},
		{"", "", false, false},
		{"mcp*", "mcp__a__b", false, false},
		{"**", "read", false, false},
	}
	for _, tc := range tests {
		t.Run(tc.pattern+" "+tc.id, func(t *testing.T) {
			if got := match(tc.pattern, tc.id); got != tc.some {
				t.Errorf("match(%q, %q) = %v, want %v", tc.pattern, tc.id, got, tc.some)
			}
			if got := matchAllow(tc.pattern, tc.id); got != tc.allow {
				t.Errorf("matchAllow(%q, %q) = %v, want %v", tc.pattern, tc.id, got, tc.allow)
			}
			// The index must agree with the reference matcher, for each
			// effect: Decide finds rules through maps and lists, match
			// compiles one pattern and tries it.
			if Validate(tc.pattern) != nil {
				return
			}
			for _, e := range []Effect{Allow, Ask, Deny} {
				want := tc.some
				if e == Allow {
					want = tc.allow
				}
				x := buildIndex([]Rule{{Pattern: strings.TrimSpace(tc.pattern), Effect: e, Source: SourceUser, File: "f"}}, "")
				if got := x.decide(tc.id, "") == 0; got != want {
					t.Errorf("index with %s rule %q covers %q = %v, want %v", e, tc.pattern, tc.id, got, want)
				}
			}
		})
	}
}

func TestValidate(t *testing.T) {
	valid := []string{
		"*", "mcp", "mcp__*", "mcp__*__*", "read", "web*", "mcp__github", "mcp__github__get_*",
		"mcp__*__read", "mcp__a___x", "mcp___a", "mcp__a_", "mcp___", "mcp__a___", "mcp__a-b__c-d", " read ",
		"mcp__github__a__b", strings.Repeat("a", maxPattern),
	}
	for _, p := range valid {
		if err := Validate(p); err != nil {
			t.Errorf("Validate(%q) = %v, want nil", p, err)
		}
	}
	invalid := []struct{ pattern, why string }{
		{"", "empty"},
		{"   ", "empty"},
		{"mcp__", "empty server"},
		{"mcp__a__b__", "cannot end with __"},
		{"mcp__github__", "cannot end with __"},
		{"__read", "must start with mcp__"},
		{"MCP__github", "must start with mcp__"},
		{"*__x", "must start with mcp__"},
		{"m*__x", "must start with mcp__"},
		{"foo__bar", "must start with mcp__"},
		{"mcp____x", "empty server"},
		{"mcp__git hub", "not allowed"},
		{"mcp__github.x", "not allowed"},
		{"mcp__github/x", "not allowed"},
		{"mcp__github__x?", "not allowed"},
		{"mcp__gith[u]b", "not allowed"},
		{"réad", "'é' is not allowed"},
		{"read\u00a0x", `'\u00a0' is not allowed`},
		{"read\x00", "not allowed"},
		{"**", "** is not supported"},
		{"mcp__**__x", "** is not supported"},
		{"mcp*", "mcp__*"},
		{"mcp*x", "mcp__*"},
		{"mcp__a___*", "ambiguous"},
		{"mcp__*___x", "ambiguous"},
		{strings.Repeat("a", maxPattern+1), "longer than"},
	}
	for _, tc := range invalid {
		err := Validate(tc.pattern)
		if err == nil || !errors.Is(err, errInvalid) || !strings.Contains(err.Error(), tc.why) {
			t.Errorf("Validate(%q) = %v, want an invalid-rule error saying %q", tc.pattern, err, tc.why)
		}
	}
}

func TestWildcard(t *testing.T) {
	tests := []struct {
		p, x string
		want bool
	}{
		{"", "", true},
		{"", "a", false},
		{"*", "", true},
		{"a*", "a", true},
		{"*a", "ba", true},
		{"*a", "ab", false},
		{"a*b*c", "abc", true},
		{"a*b*c", "aXbYc", true},
		{"a*b*c", "aXbYcZ", false},
		{"a*b*c", "acb", false},
		{"*ab", "aab", true},
		{"*aab", "aaab", true},
		{strings.Repeat("a*", 20) + "b", strings.Repeat("a", 200), false},
	}
	for _, tc := range tests {
		if got := wildcard(tc.p, tc.x); got != tc.want {
			t.Errorf("wildcard(%q, %q) = %v, want %v", tc.p, tc.x, got, tc.want)
		}
	}
}

// FuzzMatch checks that the index and the reference matcher agree, that
// a deny on a server can never be slipped past by an odd tool name, and
// that an allow on a server never reaches another server's tools.
func FuzzMatch(f *testing.F) {
	f.Add("mcp__github", "github", "x", "git")
	f.Add("mcp__a_", "a_", "_x", "a")
	f.Add("mcp__*__get_*", "gh", "get__x", "g")
	f.Add("mcp___", "_", "0", "")
	f.Fuzz(func(t *testing.T, pattern, server, tool, other string) {
		id := toolid.Format(server, tool)
		if Validate(pattern) == nil {
			some, every := match(pattern, id), matchAllow(pattern, id)
			if every && !some {
				t.Fatalf("%q covers %q as allow but not as deny", pattern, id)
			}
			for _, e := range []Effect{Allow, Deny} {
				want := some
				if e == Allow {
					want = every
				}
				x := buildIndex([]Rule{{Pattern: strings.TrimSpace(pattern), Effect: e, Source: SourceUser}}, "")
				if got := x.decide(id, "") == 0; got != want {
					t.Fatalf("index with %s rule %q covers %q = %v, want %v", e, pattern, id, got, want)
				}
			}
		}
		if !validServer(server) {
			return
		}
		// A server-wide deny covers every tool of a valid server, whatever
		// the tool is called.
		if !match("mcp__"+server, id) {
			t.Fatalf("deny mcp__%s does not cover %q", server, id)
		}
		// An allow on another server never covers it.
		if validServer(other) && other != server && matchAllow("mcp__"+other, id) {
			t.Fatalf("allow mcp__%s covers %q, a tool of server %q", other, id, server)
		}
	})
}

// validServer is toolid.CheckServer without its rule on edge underscores:
// the matcher must hold without it (see "Ids that read two ways").
func validServer(s string) bool {
	if s == "" || len(s) > toolid.MaxServerLen || strings.Contains(s, toolid.Sep) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !toolid.IsNameChar(s[i]) {
			return false
		}
	}
	return true
}

func TestEnumStrings(t *testing.T) {
	var got []string
	for _, e := range []Effect{Allow, Ask, Deny, 0} {
		got = append(got, e.String())
	}
	for _, s := range []Source{SourceManaged, SourceUser, SourceProject, SourceLocal, SourceSession, 0} {
		got = append(got, s.String())
	}
	// A rule's JSON, {"rule", "effect", "source"}, is server/wire's.
	want := []string{"allow", "ask", "deny", "Effect(0)", "managed", "user", "project", "local", "session", "Source(0)"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// match is the reference matcher the index is tested against: it reports
// whether pattern covers the tool id under some reading of the id, that
// is, whether it applies as a deny or ask rule. As an allow
// rule it must cover every reading (see the package comment); matchAllow
// says that. An invalid pattern matches nothing.
func match(pattern, id string) bool {
	p, _, err := compile(pattern)
	if err != nil {
		return false
	}
	some, _ := p.covers(id)
	return some
}

// matchAllow reports whether pattern, as an allow rule, covers the tool id:
// it must cover every reading of the id.
func matchAllow(pattern, id string) bool {
	p, _, err := compile(pattern)
	if err != nil {
		return false
	}
	_, all := p.covers(id)
	return all
}

// covers is the reference semantics of one pattern, which the index must
// agree with: it reports whether p covers id under some reading of the id
// (some) and under every reading (every). Deny and ask rules apply when
// some is true, allow rules only when every is: an id that reads two ways
// can make FreeCode ask more, never less.
func (p *pattern) covers(id string) (some, every bool) {
	switch p.kind {
	case kindAll:
		return true, true
	case kindBuiltin:
		m := !strings.HasPrefix(id, toolid.Prefix) && p.name.match(id)
		return m, m
	}
	if !strings.HasPrefix(id, toolid.Prefix) {
		return false, false
	}
	if p.kind == kindTool && p.literal {
		m := id == p.text
		return m, m
	}
	rs, n := toolid.Readings(id)
	every = true
	for _, r := range rs[:n] {
		if p.matchReading(r) {
			some = true
		} else {
			every = false
		}
	}
	return some, some && every
}
