package orchestrator

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestTerms(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"mcp__github__create_issue", []string{"mcp", "github", "create", "issue"}},
		{"listPullRequests", []string{"list", "pull", "request"}},
		{"HTTPServer-status", []string{"http", "server", "status"}},
		{"get_file_v2", []string{"get", "file"}},
		{"Search the issues of a repository.", []string{"search", "issue", "repository"}},
		{"entries, branches, boxes, class, status, analysis", []string{"entry", "branch", "box", "class", "status", "analysis"}},
		{"Écrire un fichier", []string{"écrire", "un", "fichier"}},
		{"", nil},
	}
	for _, tc := range tests {
		got := slices.Collect(terms(tc.in))
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("terms(%q) (-want +got):\n%s", tc.in, diff)
		}
	}
}

// searchRegistry registers tools of three servers, and a built-in.
func searchRegistry(t testing.TB) *Registry {
	t.Helper()
	reg := NewRegistry(nil)
	c := newFakeRunner()
	mk := func(name, title, desc string) *mcpsdk.Tool {
		return &mcpsdk.Tool{Name: name, Title: title, Description: desc, InputSchema: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}}}`)}
	}
	reg.SetServerTools("github", []*mcpsdk.Tool{
		mk("create_issue", "Create issue", "Open a new issue in a repository."),
		mk("list_issues", "", "List the issues of a repository, newest first."),
		mk("create_pull_request", "", "Open a pull request from a branch."),
		mk("get_file_contents", "", "Read a file of a repository at a ref."),
	}, c)
	reg.SetServerTools("lab", []*mcpsdk.Tool{
		mk("tissue_sample", "", "Record a tissue sample."),
		mk("notes", "", "Keep notes; mention any issue you hit while sampling."),
	}, c)
	reg.SetServerTools("fs", []*mcpsdk.Tool{
		mk("read_text_file", "Read file", "Read a text file from disk."),
		mk("write_file", "", "Write a file to disk, replacing it."),
		mk("directoryTree", "", "A recursive tree of entries."),
	}, c)
	if err := reg.RegisterBuiltin(&Tool{ID: "clock", Description: "Tell the time", ReadOnly: true, Runner: c}); err != nil {
		t.Fatal(err)
	}
	return reg
}

// Ranking is by words, weighted by field: no substring matches, a word of
// the name counts for more than one of the description.
func TestToolSearchRanking(t *testing.T) {
	s := NewToolSearch(searchRegistry(t), nil)
	tests := []struct {
		query string
		limit int
		want  []string
	}{
		// "tissue" holds "issue" but is another word; notes only
		// mentions an issue in its description, so it comes after the
		// tools named for issues.
		{"issue", 10, []string{"mcp__github__create_issue", "mcp__github__list_issues", "mcp__lab__notes"}},
		{"create an issue", 1, []string{"mcp__github__create_issue"}},
		{"list issues", 1, []string{"mcp__github__list_issues"}},
		{"pull requests", 1, []string{"mcp__github__create_pull_request"}},
		{"directory tree", 1, []string{"mcp__fs__directoryTree"}},
		{"read file", 2, []string{"mcp__fs__read_text_file", "mcp__github__get_file_contents"}},
		// The server's name is in every name: shorter names rank first
		// (BM25's length normalization), equals in the registry's order.
		{"github", 10, []string{"mcp__github__create_issue", "mcp__github__list_issues", "mcp__github__create_pull_request", "mcp__github__get_file_contents"}},
		{"the", 10, nil},   // a stop word
		{"zebra", 10, nil}, // no such word
		{"iss", 10, nil},   // a prefix is no word
		{"clock", 10, []string{"clock"}},
	}
	for _, tc := range tests {
		var got []string
		for _, tool := range s.Search(tc.query, tc.limit) {
			got = append(got, tool.ID)
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("Search(%q) (-want +got):\n%s", tc.query, diff)
		}
	}
}

// tool_search runs through the orchestrator like any tool: its arguments
// are validated, and its result holds what a model needs to call the tools
// it found; a registry change shows in the next search.
func TestToolSearchCall(t *testing.T) {
	reg := searchRegistry(t)
	s := NewToolSearch(reg, &ToolSearchOptions{Searchable: func(t *Tool) bool { return t.Server == "github" }})
	if err := reg.RegisterBuiltin(s.Tool()); err != nil {
		t.Fatal(err)
	}
	o := New(reg, nil)
	run := func(args string) ToolResult {
		return o.Execute(t.Context(), []ToolCall{{CallID: "1", Tool: ToolSearchName, Arguments: json.RawMessage(args)}}, nil)[0]
	}

	r := run(`{"query": "create", "limit": 1}`)
	if r.IsError || r.Decision != DecisionAllowed {
		t.Fatalf("tool_search: %+v", r)
	}
	var res SearchResult
	if err := json.Unmarshal([]byte(r.Text()), &res); err != nil {
		t.Fatalf("result text %q: %v", r.Text(), err)
	}
	want := SearchResult{Query: "create", Tools: []FoundTool{{
		Name: "mcp__github__create_issue", Server: "github", Title: "Create issue", Description: "Open a new issue in a repository.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}}}`),
	}}}
	if diff := cmp.Diff(want, res); diff != "" {
		t.Errorf("result (-want +got):\n%s", diff)
	}
	if sr, ok := r.StructuredContent.(SearchResult); !ok || len(sr.Tools) != 1 {
		t.Errorf("structured content: %#v", r.StructuredContent)
	}
	// Only searchable tools are found.
	if r := run(`{"query": "file"}`); !strings.Contains(r.Text(), "get_file_contents") || strings.Contains(r.Text(), "mcp__fs__") {
		t.Errorf("searching only github: %s", r.Text())
	}
	if r := run(`{"query": "zebra"}`); r.IsError || !strings.Contains(r.Text(), `No tool matches "zebra"`) {
		t.Errorf("no match: %+v", r)
	}
	for _, bad := range []string{`{}`, `{"query": ""}`, `{"query": "x", "limit": 0}`, `{"query": "x", "limit": 21}`, `{"query": "x", "other": 1}`} {
		if r := run(bad); !r.IsError || r.Decision != DecisionInvalid {
			t.Errorf("%s: %+v, want invalid arguments", bad, r)
		}
	}

	reg.SetServerTools("github", []*mcpsdk.Tool{{Name: "merge_branch", Description: "Merge a branch.", InputSchema: json.RawMessage(`{"type":"object"}`)}}, newFakeRunner())
	if got := s.Search("merge", 5); len(got) != 0 {
		t.Errorf("found %v before Invalidate: the index is rebuilt only when told", got)
	}
	s.Invalidate()
	if got := s.Search("merge", 5); len(got) != 1 || got[0].ID != "mcp__github__merge_branch" {
		t.Errorf("after Invalidate: %v", got)
	}
}

func TestRemoveBuiltin(t *testing.T) {
	reg := searchRegistry(t)
	var events []ToolsChanged
	reg.Subscribe(func(ev ToolsChanged) { events = append(events, ev) })
	reg.RemoveBuiltin("clock")
	reg.RemoveBuiltin("clock")
	if _, ok := reg.Lookup("clock"); ok {
		t.Error("clock still registered")
	}
	if diff := cmp.Diff([]ToolsChanged{{Reason: "removed"}}, events); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if err := reg.RegisterBuiltin(&Tool{ID: "clock", Runner: newFakeRunner()}); err != nil {
		t.Errorf("registering again: %v", err)
	}
}
