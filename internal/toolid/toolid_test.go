package toolid

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestToolParts(t *testing.T) {
	long := strings.Repeat("very_long_tool_name_", 4) + "0123456789" // 90 characters
	if len(long) != 90 {
		t.Fatalf("test setup: len(long) = %d", len(long))
	}
	tests := []struct {
		name  string
		names []string
		want  map[string]string
	}{
		{
			name:  "clean names stay",
			names: []string{"read_file", "list-dir", "Get2"},
			want:  map[string]string{"read_file": "read_file", "list-dir": "list-dir", "Get2": "Get2"},
		},
		{
			name:  "bad characters become underscores",
			names: []string{"files.read", "ünïcode tool", "a/b:c"},
			want:  map[string]string{"files.read": "files_read", "ünïcode tool": "n_code_tool", "a/b:c": "a_b_c"},
		},
		{
			name:  "separator-like underscores collapse",
			names: []string{"read__all", "_x_", "..."},
			want:  map[string]string{"read__all": "read_all", "_x_": "x", "...": "tool"},
		},
		{
			name:  "collision: the unchanged name keeps its form",
			names: []string{"get.item", "get_item"},
			want:  map[string]string{"get_item": "get_item", "get.item": "get_item_" + hashHex("get.item", 6)},
		},
		{
			name:  "collision: both changed, both suffixed",
			names: []string{"get.item", "get item"},
			want:  map[string]string{"get.item": "get_item_" + hashHex("get.item", 6), "get item": "get_item_" + hashHex("get item", 6)},
		},
		{
			name:  "a 90-character name is kept whole in the id",
			names: []string{long},
			want:  map[string]string{long: long},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, ToolParts(tc.names)); diff != "" {
				t.Errorf("ToolParts(%q) (-want +got):\n%s", tc.names, diff)
			}
			// Stable across list orders: every rotation and the reverse agree.
			for i := range tc.names {
				rot := append(slices.Clone(tc.names[i:]), tc.names[:i]...)
				if diff := cmp.Diff(tc.want, ToolParts(rot)); diff != "" {
					t.Errorf("ToolParts(%q) (-want +got):\n%s", rot, diff)
				}
			}
			rev := slices.Clone(tc.names)
			slices.Reverse(rev)
			if diff := cmp.Diff(tc.want, ToolParts(rev)); diff != "" {
				t.Errorf("ToolParts(%q) (-want +got):\n%s", rev, diff)
			}
		})
	}
}

func TestAlias(t *testing.T) {
	long := strings.Repeat("very_long_tool_name_", 4) + "0123456789"
	id := Format("demo", long)
	a := Alias(id)
	if len(a) > MaxNameLen {
		t.Errorf("alias %q is %d characters, want <= %d", a, len(a), MaxNameLen)
	}
	if want := strings.TrimRight(id[:55], "_") + "_" + hashHex(id, 8); a != want {
		t.Errorf("Alias(%q) = %q, want %q", id, a, want)
	}
	if again := Alias(id); again != a {
		t.Errorf("alias not stable: %q then %q", a, again)
	}
	if other := Alias(id + "x"); other == a {
		t.Errorf("two ids share alias %q", a)
	}
	if !LooksLikeAlias(a) {
		t.Errorf("LooksLikeAlias(%q) = false", a)
	}
	for _, short := range []string{"read", Format("demo", "read_file"), strings.Repeat("a", 64)} {
		if got := Alias(short); got != "" {
			t.Errorf("Alias(%q) = %q, want none", short, got)
		}
	}
	// Ids past the stack buffer hash the same way.
	huge := Format("demo", strings.Repeat("y", 3000))
	if got, want := Alias(huge), strings.TrimRight(huge[:55], "_")+"_"+hashHex(huge, 8); got != want {
		t.Errorf("Alias of a 3000-character id = %q, want %q", got, want)
	}
}

// TestAppendAliasAllocs: the permission gate computes an alias on every
// call of a long tool, so it must not allocate.
func TestAppendAliasAllocs(t *testing.T) {
	id := Format("demo", strings.Repeat("x", 200))
	var buf [MaxNameLen]byte
	if n := testing.AllocsPerRun(100, func() { AppendAlias(buf[:0], id) }); n != 0 {
		t.Errorf("AppendAlias allocates %v times per call", n)
	}
}

// TestAliases: an alias taken by another tool's id moves to an
// alternative; the result does not depend on the order of the ids.
func TestAliases(t *testing.T) {
	long := Format("demo", strings.Repeat("z", 70))
	squatter := Alias(long) // a tool whose id is the long tool's alias
	got := Aliases([]string{long, squatter, Format("demo", "short")})
	if a := got[long]; a == "" || a == squatter || len(a) > MaxNameLen || !LooksLikeAlias(a) {
		t.Errorf("alias of the long tool = %q, want an alias other than %q", a, squatter)
	}
	if len(got) != 1 {
		t.Errorf("aliases = %v, want one for the long id only", got)
	}
	if diff := cmp.Diff(got, Aliases([]string{Format("demo", "short"), squatter, long})); diff != "" {
		t.Errorf("order changed the aliases (-first +second):\n%s", diff)
	}
	if a := Aliases([]string{long})[long]; a != squatter {
		t.Errorf("without the squatter the alias is %q, want %q", a, squatter)
	}
}

func TestServerOf(t *testing.T) {
	server48 := strings.Repeat("s", 48)
	longID := Format(server48, strings.Repeat("t", 20))
	tests := []struct {
		name   string
		want   string
		wantOK bool
	}{
		{"mcp__github__get_issue", "github", true},
		{"mcp__github__a__b", "github", true},
		{Alias(Format("github", strings.Repeat("t", 70))), "github", true},
		{Alias(longID), server48, true}, // the cut falls on the separator
		{"read", "", false},
		{"mcp__", "", false},
		{"mcp____x", "", false},
		{"mcp__github", "", false},
		{"mcp__github_0123abcd", "github", true}, // shaped like an alias
	}
	for _, tc := range tests {
		got, ok := ServerOf(tc.name)
		if got != tc.want || ok != tc.wantOK {
			t.Errorf("ServerOf(%q) = %q, %v; want %q, %v", tc.name, got, ok, tc.want, tc.wantOK)
		}
	}
	if a := Alias(longID); strings.Contains(a[len(Prefix):], Sep) {
		t.Errorf("alias %q of a %d-character server has a separator", a, len(server48))
	}
}

func TestReadings(t *testing.T) {
	tests := []struct {
		id   string
		want []Reading
	}{
		{"mcp__a__x", []Reading{{"a", "x", true}}},
		{"mcp__a", []Reading{{"a", "", false}}},
		{"mcp__a___x", []Reading{{"a", "_x", true}, {"a_", "x", true}}},
		{"mcp__a__b__c", []Reading{{"a", "b__c", true}}},
		{"mcp____x", []Reading{{"", "x", true}}},
	}
	for _, tc := range tests {
		rs, n := Readings(tc.id)
		if diff := cmp.Diff(tc.want, rs[:n]); diff != "" {
			t.Errorf("Readings(%q) (-want +got):\n%s", tc.id, diff)
		}
	}
}

func TestChecks(t *testing.T) {
	tests := []struct {
		check func(string) error
		name  string
		ok    bool
	}{
		{CheckServer, "github", true},
		{CheckServer, "my-server_2", true},
		{CheckServer, strings.Repeat("a", MaxServerLen), true},
		{CheckServer, strings.Repeat("a", MaxServerLen+1), false},
		{CheckServer, "", false},
		{CheckServer, "a__b", false},
		{CheckServer, "_a", false},
		{CheckServer, "a_", false},
		{CheckServer, "a.b", false},
		{CheckServer, "ä", false},
		{CheckBuiltin, "read", true},
		{CheckBuiltin, "web_fetch", true},
		{CheckBuiltin, "mcp", false},
		{CheckBuiltin, "mcp__x", false},
		{CheckBuiltin, "a__b", false},
		{CheckBuiltin, "_a", false},
		{CheckBuiltin, "a b", false},
		{CheckBuiltin, "", false},
		{CheckBuiltin, strings.Repeat("a", MaxNameLen+1), false},
		{CheckProviderName, strings.Repeat("a", MaxNameLen), true},
		{CheckProviderName, "mcp__a__b", true},
		{CheckProviderName, strings.Repeat("a", MaxNameLen+1), false},
		{CheckProviderName, "", false},
		{CheckProviderName, "a.b", false},
	}
	for _, tc := range tests {
		if err := tc.check(tc.name); (err == nil) != tc.ok {
			t.Errorf("check(%q) = %v, want ok=%v", tc.name, err, tc.ok)
		}
	}
}
