package orchestrator

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
			if diff := cmp.Diff(tc.want, toolParts(tc.names)); diff != "" {
				t.Errorf("toolParts(%q) (-want +got):\n%s", tc.names, diff)
			}
			// Stable across list orders: every rotation and the reverse agree.
			for i := range tc.names {
				rot := append(slices.Clone(tc.names[i:]), tc.names[:i]...)
				if diff := cmp.Diff(tc.want, toolParts(rot)); diff != "" {
					t.Errorf("toolParts(%q) (-want +got):\n%s", rot, diff)
				}
			}
			rev := slices.Clone(tc.names)
			slices.Reverse(rev)
			if diff := cmp.Diff(tc.want, toolParts(rev)); diff != "" {
				t.Errorf("toolParts(%q) (-want +got):\n%s", rev, diff)
			}
		})
	}
}

func TestAlias(t *testing.T) {
	long := strings.Repeat("very_long_tool_name_", 4) + "0123456789"
	id := MCPToolID("demo", long)
	a := aliasFor(id)
	if len(a) > MaxNameLen {
		t.Errorf("alias %q is %d characters, want <= %d", a, len(a), MaxNameLen)
	}
	if want := strings.TrimRight(id[:55], "_") + "_" + hashHex(id, 8); a != want {
		t.Errorf("aliasFor(%q) = %q, want %q", id, a, want)
	}
	if again := aliasFor(id); again != a {
		t.Errorf("alias not stable: %q then %q", a, again)
	}
	if other := aliasFor(id + "x"); other == a {
		t.Errorf("two ids share alias %q", a)
	}
	for _, short := range []string{"read", MCPToolID("demo", "read_file"), strings.Repeat("a", 64)} {
		if got := aliasFor(short); got != "" {
			t.Errorf("aliasFor(%q) = %q, want none", short, got)
		}
	}
}
