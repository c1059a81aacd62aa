package toolrecall

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/freecode/freecode/internal/toolid"
)

func TestConfigName(t *testing.T) {
	for in, want := range map[string]string{
		"bing-cn-mcp":           "bing-cn-mcp",
		"Ant Design Components": "Ant-Design-Components",
		"Asset_Price_MCP":       "Asset_Price_MCP",
		"a  b//c":               "a-b-c",
		"x__y":                  "x_y",
		"_edge_":                "edge",
		"鸣潮":                    "server",
		"":                      "server",
	} {
		got := ConfigName(in)
		if got != want {
			t.Errorf("ConfigName(%q) = %q, want %q", in, got, want)
		}
		if err := toolid.CheckServer(got); err != nil {
			t.Errorf("ConfigName(%q) = %q: %v", in, got, err)
		}
	}
}

func TestLoad(t *testing.T) {
	b, err := LoadDefault()
	if err != nil {
		t.Fatal(err)
	}
	tools := 0
	for _, s := range b.Servers {
		if err := toolid.CheckServer(s.Name); err != nil {
			t.Errorf("server %q: %v", s.Key, err)
		}
		tools += len(s.Tools)
	}
	// The dataset's README: 70 servers, 527 tools, 95 tasks of which 94
	// name a tool some server has.
	if len(b.Servers) != 70 || tools != 527 || len(b.Tasks) != 94 {
		t.Errorf("%d servers, %d tools, %d tasks; want 70, 527, 94", len(b.Servers), tools, len(b.Tasks))
	}
	first := b.Tasks[0]
	want := []string{"get-weread-rank", "generate_word_cloud_chart", "create_document", "add_paragraph", "add_picture", "convert_to_pdf"}
	if diff := cmp.Diff(want, first.Gold); diff != "" || first.Index != 0 {
		t.Errorf("task 0 (index %d) gold (-want +got):\n%s", first.Index, diff)
	}
}

func TestScore(t *testing.T) {
	tasks := []Task{
		{Index: 0, Gold: []string{"a", "b"}},
		{Index: 1, Gold: []string{"c"}},
		{Index: 2, Gold: []string{"d", "e", "f", "g"}},
	}
	ranked := [][]string{
		{"a", "x", "y", "z", "w", "b"},                // hit@1, a in 5, b at 6
		{"x", "y", "z", "w", "v", "u", "t", "s", "c"}, // c at 9
		nil,
	}
	got := ScoreSplit(tasks, ranked)
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	all := got.All
	if all.Tasks != 3 || !near(all.Hit1, 1.0/3) || !near(all.Hit5, 1.0/3) || !near(all.Recall5, 0.5/3) || !near(all.Recall10, 2.0/3) {
		t.Errorf("all: %+v", all)
	}
	if got.Even.Tasks != 2 || !near(got.Even.Recall10, 0.5) || got.Odd.Tasks != 1 || !near(got.Odd.Recall10, 1) || got.Odd.Hit5 != 0 {
		t.Errorf("halves: %+v", got)
	}
}

func TestBM25(t *testing.T) {
	x := NewBM25([]string{
		"mcp__fs__read_file Read a file.",
		"mcp__fs__write_file Write a file; the file is replaced.",
		"mcp__web__fetch Fetch a page.",
	})
	if got := x.Search("write file", 10); !cmp.Equal(got, []int{1, 0}) {
		t.Errorf("write file: %v", got)
	}
	if got := x.Search("fetch", 10); !cmp.Equal(got, []int{2}) {
		t.Errorf("fetch: %v", got)
	}
	if got := x.Search("zebra", 10); len(got) != 0 {
		t.Errorf("zebra: %v", got)
	}
	if got := x.Search("file", 1); len(got) != 1 {
		t.Errorf("file, k=1: %v", got)
	}
}
